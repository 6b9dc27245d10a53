//! Values as Helm combines them: `-f` files deep-merged (`MergeMaps`), chart defaults coalesced
//! under user values (`CoalesceValues`: a user null deletes a default, tables merge, lists are
//! replaced, nil defaults are dropped), globals pushed into subcharts, and dependencies enabled or
//! disabled by tags and conditions (`ProcessDependencies`).

use std::rc::Rc;

use crate::chart::{Chart, Dependency};
use crate::version::{parse_lenient, Constraint};
use crate::yaml::YamlError;
use gotmpl::{Map, Value};

/// Why values could not be coalesced for a chart and its subcharts (Helm's text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoalesceError {
    /// The parent's values hold a non-table under a subchart's name (`type_name` and `shown`
    /// are the value's `%T` and `%v`; the `%!t` is Helm's own misformatted verb).
    #[error("type mismatch on {subchart}: %!t({type_name}={shown})")]
    SubchartNotATable { subchart: String, type_name: String, shown: String },
}

/// Why a `-f` values file could not be read (sigs.k8s.io/yaml's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesFileError {
    /// Not YAML go-yaml v2 reads.
    #[error("error converting YAML to JSON: {0}")]
    Yaml(#[source] YamlError),
    /// The document is a list, string or other non-map (`found`: its JSON kind).
    #[error(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {found} into Go value of type map[string]interface {{}}"
    )]
    NotAMap { found: &'static str },
}

// `MergeMaps` lives below both chart loading and rendering, which use it.
pub use crate::value_ops::merge_maps;

pub fn to_map(v: &Value) -> Option<Map> {
    match v {
        Value::Map(m) => Some(m.entries.borrow().clone()),
        _ => None,
    }
}

fn deep(v: &Value) -> Value {
    v.deep_copy()
}

/// A default copied into the result loses its nulls, recursively.
pub fn clean(v: &Value) -> Value {
    match v {
        Value::Map(m) => Value::map(m.entries.borrow().iter().filter(|(_, v)| !v.is_nil()).map(|(k, v)| (k.clone(), clean(v))).collect()),
        other => other.deep_copy(),
    }
}

fn concat(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Collects coalescing warnings (Helm logs them to stderr).
#[derive(Debug, Default)]
pub struct Warnings(pub Vec<String>);

/// `CoalesceValues(chart, user)`.
pub fn coalesce_values(chart: &Chart, user: &Map, warnings: &mut Warnings) -> Result<Map, CoalesceError> {
    let mut dest: Map = user.iter().map(|(k, v)| (k.clone(), deep(v))).collect();
    coalesce(chart, &mut dest, "", false, warnings)?;
    Ok(dest)
}

/// `MergeValues(chart, nil)`: the chart's and its subcharts' defaults with nulls kept.
fn merge_defaults(chart: &Chart, warnings: &mut Warnings) -> Result<Map, CoalesceError> {
    let mut dest = Map::new();
    coalesce(chart, &mut dest, "", true, warnings)?;
    Ok(dest)
}

fn coalesce(chart: &Chart, dest: &mut Map, prefix: &str, merge: bool, warnings: &mut Warnings) -> Result<(), CoalesceError> {
    coalesce_defaults(chart, dest, prefix, merge, warnings);
    coalesce_deps(chart, dest, prefix, merge, warnings)
}

fn coalesce_defaults(chart: &Chart, v: &mut Map, prefix: &str, merge: bool, warnings: &mut Warnings) {
    let sub_prefix = concat(prefix, chart.name());
    let Some(defaults) = to_map(&chart.values) else { return };
    for (key, val) in &defaults {
        match v.get(key).cloned() {
            Some(Value::Nil) | Some(Value::Invalid) if !merge => {
                v.remove(key);
            }
            Some(Value::Nil) | Some(Value::Invalid) => {}
            Some(Value::Map(dest)) => match val {
                Value::Map(src) => {
                    // Tables of subcharts merge (their nulls are handled by the subchart).
                    let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                    let mut dest_map = dest.entries.borrow().clone();
                    coalesce_tables(&mut dest_map, &src.entries.borrow(), &concat(&sub_prefix, key), merge, warnings);
                    v.insert(key.clone(), Value::map(dest_map));
                }
                Value::Nil | Value::Invalid => {}
                _ => warnings.0.push(format!("warning: skipped value for {sub_prefix}.{key}: Not a table.")),
            },
            Some(_) => {}
            None if merge => {
                v.insert(key.clone(), deep(val));
            }
            None => {
                if !val.is_nil() {
                    v.insert(key.clone(), clean(val));
                }
            }
        }
    }
}

/// `coalesceTablesFullKey(dst=user, src=defaults)`.
pub fn coalesce_tables(dst: &mut Map, src: &Map, prefix: &str, merge: bool, warnings: &mut Warnings) {
    for (key, sval) in src {
        let full = concat(prefix, key);
        match dst.get(key).cloned() {
            Some(Value::Nil) | Some(Value::Invalid) if !merge => {
                if !sval.is_nil() {
                    dst.remove(key);
                }
            }
            None => {
                if merge {
                    dst.insert(key.clone(), deep(sval));
                } else if !sval.is_nil() {
                    dst.insert(key.clone(), clean(sval));
                }
            }
            Some(dv) => match (sval, &dv) {
                (Value::Map(s), Value::Map(d)) => {
                    let mut inner = d.entries.borrow().clone();
                    coalesce_tables(&mut inner, &s.entries.borrow(), &full, merge, warnings);
                    dst.insert(key.clone(), Value::map(inner));
                }
                (Value::Map(_), _) => warnings
                    .0
                    .push(format!("warning: cannot overwrite table with non table for {full} ({})", gotmpl::fmt::sprint_value(sval))),
                (s, Value::Map(_)) if !s.is_nil() => warnings.0.push(format!(
                    "warning: destination for {full} is a table. Ignoring non-table value ({})",
                    gotmpl::fmt::sprint_value(s)
                )),
                _ => {}
            },
        }
    }
}

fn coalesce_deps(chart: &Chart, dest: &mut Map, prefix: &str, merge: bool, warnings: &mut Warnings) -> Result<(), CoalesceError> {
    for sub in &chart.dependencies {
        let name = sub.name().to_string();
        let mut sub_values = match dest.get(&name) {
            None => Map::new(),
            Some(Value::Map(m)) => m.entries.borrow().clone(),
            Some(other) => {
                return Err(CoalesceError::SubchartNotATable {
                    subchart: name,
                    type_name: other.type_name(),
                    shown: gotmpl::fmt::sprint_value(other),
                })
            }
        };
        let sub_prefix = concat(prefix, chart.name());
        coalesce_globals(&mut sub_values, dest, warnings);
        coalesce(sub, &mut sub_values, &sub_prefix, merge, warnings)?;
        dest.insert(name, Value::map(sub_values));
    }
    Ok(())
}

fn coalesce_globals(dest: &mut Map, src: &Map, warnings: &mut Warnings) {
    let mut dg = match dest.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.entries.borrow().clone(),
        Some(_) => {
            warnings.0.push("warning: skipping globals because destination global is not a table.".into());
            return;
        }
    };
    let sg = match src.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.entries.borrow().clone(),
        Some(_) => {
            warnings.0.push("warning: skipping globals because source global is not a table.".into());
            return;
        }
    };
    for (key, val) in &sg {
        match val {
            Value::Map(m) => {
                let mut vv = m.entries.borrow().clone();
                match dg.get(key) {
                    None => {}
                    Some(Value::Map(existing)) => coalesce_tables(&mut vv, &existing.entries.borrow(), key, true, warnings),
                    Some(_) => {
                        warnings.0.push(format!("Conflict: cannot merge map onto non-map for {key:?}. Skipping."));
                        continue;
                    }
                }
                dg.insert(key.clone(), Value::map(vv));
            }
            other => {
                if matches!(dg.get(key), Some(Value::Map(_))) {
                    warnings.0.push(format!("key {key} is table. Skipping"));
                } else {
                    dg.insert(key.clone(), other.clone());
                }
            }
        }
    }
    dest.insert("global".into(), Value::map(dg));
}

/// `Values.PathValue`: the value at a dotted path, None when any step is missing.
pub fn path_value(values: &Map, path: &str) -> Option<Value> {
    let mut parts = path.split('.').peekable();
    let mut current: Map = values.clone();
    while let Some(part) = parts.next() {
        let v = current.get(part)?.clone();
        if parts.peek().is_none() {
            return Some(v);
        }
        current = to_map(&v)?;
    }
    None
}

fn compatible(range: &str, version: &str) -> bool {
    match (Constraint::parse(range), parse_lenient(version)) {
        (Ok(c), Some(v)) => c.matches(&v),
        _ => false,
    }
}

/// Declared dependencies missing from `charts/` (compared by name).
pub fn missing_dependencies(chart: &Chart) -> Vec<String> {
    chart.metadata.dependencies.iter().filter(|d| !chart.dependencies.iter().any(|c| c.name() == d.name)).map(|d| d.name.clone()).collect()
}

/// `ProcessDependencies` (v4 merges): aliases applied and disabled dependencies removed through
/// the whole tree, then `import-values` processed, children first.
pub fn process_dependencies(chart: &mut Chart, values: &Map, warnings: &mut Warnings) -> Result<(), CoalesceError> {
    process_enabled(chart, values, "", warnings)?;
    process_imports(chart, warnings)
}

fn process_enabled(chart: &mut Chart, values: &Map, path: &str, warnings: &mut Warnings) -> Result<(), CoalesceError> {
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let mut deps: Vec<Chart> = chart
        .dependencies
        .iter()
        .filter(|c| !chart.metadata.dependencies.iter().any(|r| c.name() == r.name && compatible(&r.version, &c.metadata.version)))
        .cloned()
        .collect();
    for req in chart.metadata.dependencies.iter_mut() {
        if let Some(found) = chart.dependencies.iter().find(|c| c.name() == req.name && compatible(&req.version, &c.metadata.version)) {
            let mut copy = found.clone();
            if !req.alias.is_empty() {
                copy.metadata.name = req.alias.clone();
            }
            deps.push(copy);
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
        req.enabled = true;
    }
    chart.dependencies = deps;
    let cvals = coalesce_values(chart, values, warnings)?;
    process_tags(&mut chart.metadata.dependencies, &cvals);
    process_conditions(&mut chart.metadata.dependencies, &cvals, path);
    let disabled: Vec<String> = chart.metadata.dependencies.iter().filter(|d| !d.enabled).map(|d| d.name.clone()).collect();
    chart.dependencies.retain(|c| !disabled.iter().any(|n| n == c.name()));
    chart.metadata.dependencies.retain(|d| d.enabled);
    for sub in chart.dependencies.iter_mut() {
        let sub_path = format!("{path}{}.", sub.name());
        process_enabled(sub, &cvals, &sub_path, warnings)?;
    }
    Ok(())
}

/// `processDependencyImportValues`: for a chart that still has dependencies, its values become
/// the merged defaults of its whole tree, with each dependency's imported tables underneath
/// (the chart's own values win; among imports the first wins). Each dependency's
/// `import-values` is rewritten to `{child, parent}` pairs, as templates see it.
///
/// Helm merges the imported tables by reference, so a later import into the same parent path
/// writes into the child's own table (visible in the child's values). Maps are shared here
/// too, and merged in place, to give the same result.
fn process_imports(chart: &mut Chart, warnings: &mut Warnings) -> Result<(), CoalesceError> {
    for sub in chart.dependencies.iter_mut() {
        process_imports(sub, warnings)?;
    }
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let cvals = Value::map(merge_defaults(chart, warnings)?);
    let imported = Value::empty_map();
    for dep in chart.metadata.dependencies.iter_mut() {
        let mut rewritten = Vec::new();
        for entry in &dep.import_values {
            let (child, parent) = match entry {
                Value::Map(m) => {
                    let m = m.entries.borrow();
                    let text = |k: &str| m.get(k).map(gotmpl::fmt::sprint_value).unwrap_or_else(|| "<nil>".into());
                    (text("child"), text("parent"))
                }
                Value::String(s) => (format!("exports.{s}"), ".".to_string()),
                _ => continue,
            };
            let mut pair = Map::new();
            pair.insert("child".into(), Value::str(&child));
            pair.insert("parent".into(), Value::str(&parent));
            rewritten.push(Value::map_of(gotmpl::MapKind::String, pair));
            match shared_table(&cvals, &format!("{}.{child}", dep.name)) {
                Ok(table) => merge_in_place(&imported, &path_to_map(&parent, table), "", warnings),
                Err(missing) => warnings
                    .0
                    .push(format!("ImportValues missing table from chart chart={} error=\"\\\"{missing}\\\" is not a table\"", dep.name)),
            }
        }
        dep.import_values = rewritten;
    }
    let values = cvals.deep_copy();
    merge_in_place(&values, &imported, "", warnings);
    chart.values = values;
    Ok(())
}

/// `Values.Table` without copying: the shared table at a dotted path, or the step of the path
/// that is missing or not a table.
fn shared_table<'p>(values: &Value, path: &'p str) -> Result<Value, &'p str> {
    let mut current = values.clone();
    for part in path.split('.') {
        let next = match &current {
            Value::Map(m) => m.entries.borrow().get(part).cloned(),
            _ => None,
        };
        match next {
            Some(v @ Value::Map(_)) => current = v,
            _ => return Err(part),
        }
    }
    Ok(current)
}

/// `pathToMap`: `data` nested under the dotted `path` (`.` is the table itself).
fn path_to_map(path: &str, data: Value) -> Value {
    if path == "." {
        return data;
    }
    path.split('.').rev().fold(data, |inner, part| {
        let mut outer = Map::new();
        outer.insert(part.to_string(), inner);
        Value::map(outer)
    })
}

/// `MergeTables(dst, src)` on shared maps: `dst` keeps its values, gains `src`'s missing keys
/// by reference, and nested tables merge in place. Like Go, a nil in `dst` is written into
/// `src` first. A map is never merged into itself or stored inside itself.
fn merge_in_place(dst: &Value, src: &Value, prefix: &str, warnings: &mut Warnings) {
    let (Value::Map(d), Value::Map(s)) = (dst, src) else { return };
    if Rc::ptr_eq(d, s) {
        return;
    }
    let nil_keys: Vec<String> = d.entries.borrow().iter().filter(|(_, v)| v.is_nil()).map(|(k, _)| k.clone()).collect();
    for key in nil_keys {
        s.entries.borrow_mut().insert(key, Value::Nil);
    }
    let src_entries: Vec<(String, Value)> = s.entries.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (key, sval) in src_entries {
        let full = concat(prefix, &key);
        let existing = d.entries.borrow().get(&key).cloned();
        match existing {
            None => {
                let stored = if reaches(&sval, d) { sval.deep_copy() } else { sval };
                d.entries.borrow_mut().insert(key, stored);
            }
            Some(dv @ Value::Map(_)) => match &sval {
                Value::Map(_) => merge_in_place(&dv, &sval, &full, warnings),
                v if !v.is_nil() => warnings.0.push(format!(
                    "warning: destination for {full} is a table. Ignoring non-table value ({})",
                    gotmpl::fmt::sprint_value(v)
                )),
                _ => {}
            },
            Some(_) if matches!(sval, Value::Map(_)) => {
                warnings.0.push(format!("warning: cannot overwrite table with non table for {full} ({})", gotmpl::fmt::sprint_value(&sval)))
            }
            Some(_) => {}
        }
    }
}

/// Whether `target` is `value` or inside it (storing `value` in `target` would make a cycle).
fn reaches(value: &Value, target: &Rc<gotmpl::value::MapCell>) -> bool {
    match value {
        Value::Map(m) => Rc::ptr_eq(m, target) || m.entries.borrow().values().any(|v| reaches(v, target)),
        Value::List(l) => l.items.iter().any(|v| reaches(v, target)),
        _ => false,
    }
}

fn process_tags(deps: &mut [Dependency], cvals: &Map) {
    let Some(Value::Map(tags)) = cvals.get("tags") else { return };
    let tags = tags.entries.borrow();
    for d in deps.iter_mut() {
        let (mut has_true, mut has_false) = (false, false);
        for t in &d.tags {
            if let Some(Value::Bool(b)) = tags.get(t) {
                if *b {
                    has_true = true;
                } else {
                    has_false = true;
                }
            }
        }
        d.enabled = has_true || !has_false;
    }
}

fn process_conditions(deps: &mut [Dependency], cvals: &Map, path: &str) {
    for d in deps.iter_mut() {
        for c in d.condition.trim().split(',') {
            if c.is_empty() {
                continue;
            }
            if let Some(Value::Bool(b)) = path_value(cvals, &format!("{path}{c}")) {
                d.enabled = b;
                break;
            }
        }
    }
}

/// A `-f` values file, read as Helm's `ReadValues` does (first document, must be a map).
pub fn read_values_file(text: &str) -> Result<Map, ValuesFileError> {
    match crate::yaml::read_first(text).map_err(ValuesFileError::Yaml)? {
        Value::Map(m) => Ok(m.entries.borrow().clone()),
        Value::Nil | Value::Invalid => Ok(Map::new()),
        other => Err(ValuesFileError::NotAMap { found: crate::chart::json_kind(&other) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Chart, ChartFile};

    fn chart(values: &str) -> Chart {
        Chart::from_files(vec![
            ChartFile { path: "Chart.yaml".into(), data: b"apiVersion: v2\nname: probe\nversion: 0.1.0\n".as_slice().into() },
            ChartFile { path: "values.yaml".into(), data: values.as_bytes().into() },
        ])
        .unwrap()
    }

    fn yaml(m: &Map) -> String {
        crate::yaml::to_yaml(&Value::map(m.clone())).unwrap()
    }

    fn user(json: &str) -> Map {
        to_map(&crate::json::from_json(json).unwrap()).unwrap()
    }

    #[test]
    fn coalescing_follows_helms_null_and_table_rules() {
        let c = chart("a: 1\nm: {x: 1, w: 2, nn: {p: 1}}\nl: [1, 2]\ns: str\nnullish: null\nsubm: {k: null, j: 1}\n");
        let mut w = Warnings::default();
        let run = |u: &str, w: &mut Warnings| yaml(&coalesce_values(&c, &user(u), w).unwrap());
        assert_eq!(run("{}", &mut w), "a: 1\nl:\n- 1\n- 2\nm:\n  nn:\n    p: 1\n  w: 2\n  x: 1\ns: str\nsubm:\n  j: 1");
        assert!(!run(r#"{"a": null}"#, &mut w).contains("a: 1"));
        assert!(run(r#"{"new": null}"#, &mut w).contains("new: null"));
        assert!(run(r#"{"m": {"z": null}}"#, &mut w).contains("z: null"));
        assert!(run(r#"{"m": {"nn": {"p": null}}}"#, &mut w).contains("nn: {}"));
        assert!(run(r#"{"l": [3]}"#, &mut w).contains("l:\n- 3"));
        w.0.clear();
        run(r#"{"s": {"k": "v"}}"#, &mut w);
        assert_eq!(w.0, ["warning: skipped value for probe.s: Not a table."]);
        w.0.clear();
        run(r#"{"m": {"nn": 3}}"#, &mut w);
        assert_eq!(w.0, ["warning: cannot overwrite table with non table for probe.m.nn (map[p:1])"]);
    }

    #[test]
    fn path_values() {
        let m = user(r#"{"dataCache": {"enabled": false}}"#);
        assert!(matches!(path_value(&m, "dataCache.enabled"), Some(Value::Bool(false))));
        assert!(path_value(&m, "dataCache.lws.install").is_none());
    }
}
