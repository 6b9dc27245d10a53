//! The values keys a chart knows, scope by scope: its own `values.yaml` (flattened), the paths
//! its templates read, the properties its `values.schema.json` declares, and, under the key the
//! parent passes each subchart its values with (its alias, else its name), every subchart's own
//! scope — so a user key can be checked at any depth (`jobset.install`, not `jobset.enabled`),
//! and the nearest real key named when it is not one.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::value_uses::{value_uses, ValueUse};
use helm_render::chart::Chart;

/// One chart's values keys.
#[derive(Debug, Clone, Default)]
pub struct ValuesScope {
    /// The chart's name (`jobset`).
    pub chart: String,
    /// `values.yaml` flattened to leaf paths (lists and empty maps are leaves).
    pub defaults: BTreeSet<String>,
    /// Where its templates read `.Values.<path>`.
    pub uses: Vec<ValueUse>,
    /// Property paths `values.schema.json` declares.
    pub schema: BTreeSet<String>,
    /// Paths under which the schema allows any key (`additionalProperties` a schema or true).
    pub open: BTreeSet<String>,
    /// Subcharts by the key the parent passes them values with.
    pub subcharts: BTreeMap<String, ValuesScope>,
}

impl ValuesScope {
    pub fn of(chart: &Chart) -> ValuesScope {
        let mut flat = BTreeMap::new();
        super::flatten_values(&crate::objects::to_serde(&chart.values), "", &mut flat);
        let (mut schema, mut open) = (BTreeSet::new(), BTreeSet::new());
        if let Some(s) = chart.schema.as_deref().and_then(|b| serde_json::from_slice::<Json>(b).ok()) {
            schema_paths(&s, "", &mut schema, &mut open, 0);
        }
        // Each dependency Chart.yaml names, under its alias (a chart may be listed twice under
        // two aliases); subcharts in charts/ that Chart.yaml does not list, under their name.
        let mut subcharts: BTreeMap<String, ValuesScope> = BTreeMap::new();
        for d in &chart.metadata.dependencies {
            if let Some(sub) = chart.dependencies.iter().find(|c| c.name() == d.name) {
                let key = if d.alias.is_empty() { d.name.clone() } else { d.alias.clone() };
                subcharts.insert(key, ValuesScope::of(sub));
            }
        }
        for sub in chart.dependencies.iter().filter(|c| !chart.metadata.dependencies.iter().any(|d| d.name == c.name())) {
            subcharts.insert(sub.name().to_string(), ValuesScope::of(sub));
        }
        ValuesScope {
            chart: chart.name().to_string(),
            defaults: flat.into_keys().collect(),
            uses: value_uses(chart),
            schema,
            open,
            subcharts,
        }
    }

    /// Whether a user key at `path` (relative to this scope) is one the chart knows: declared in
    /// `values.yaml` or the schema (or below a map either declares as a leaf, or above a declared
    /// key), read by a template, under `global`, or known to the subchart it is passed to.
    pub fn knows(&self, path: &str) -> bool {
        // A declared path, one above it, or one below a leaf: values.yaml is flattened to its
        // leaves (scalars, lists, empty maps); the schema's leaves are properties without any.
        let near = |d: &String| d == path || d.starts_with(&format!("{path}.")) || path.starts_with(&format!("{d}."));
        let below = |set: &BTreeSet<String>, leaves_only: bool| {
            set.iter().any(|d| {
                d == path
                    || d.starts_with(&format!("{path}."))
                    || (path.starts_with(&format!("{d}."))
                        && (!leaves_only || set.range(format!("{d}.")..).next().is_none_or(|n| !n.starts_with(&format!("{d}.")))))
            })
        };
        let top = path.split('.').next().unwrap_or(path);
        if top == "global" || self.defaults.iter().any(near) || below(&self.schema, true) || self.uses.iter().any(|u| u.reads(path)) {
            return true;
        }
        if self.open.iter().any(|o| path.starts_with(&format!("{o}."))) {
            return true;
        }
        match self.subcharts.get(top) {
            Some(sub) => match path.split_once('.') {
                Some((_, rest)) => sub.knows(rest),
                None => true,
            },
            None => false,
        }
    }

    /// Every key path it knows (defaults and schema, subcharts' under their keys, and their
    /// ancestors), for folding unknown keys to their roots and finding the nearest.
    pub fn paths(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self.defaults.iter().chain(&self.schema).cloned().collect();
        for (key, sub) in &self.subcharts {
            out.insert(key.clone());
            out.extend(sub.paths().into_iter().map(|p| format!("{key}.{p}")));
        }
        let ancestors: Vec<String> =
            out.iter().flat_map(|p| p.match_indices('.').map(|(i, _)| p[..i].to_string()).collect::<Vec<_>>()).collect();
        out.extend(ancestors);
        out
    }

    /// The subchart a path falls under (`jobset` of `jobset.enabled`), with its chart's name.
    pub fn subchart_of(&self, path: &str) -> Option<(&str, &str)> {
        let top = path.split('.').next()?;
        self.subcharts.get_key_value(top).map(|(k, s)| (k.as_str(), s.chart.as_str()))
    }
}

fn schema_paths(s: &Json, prefix: &str, out: &mut BTreeSet<String>, open: &mut BTreeSet<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    if let Some(props) = s.get("properties").and_then(Json::as_object) {
        for (k, child) in props {
            let path = join(k);
            out.insert(path.clone());
            schema_paths(child, &path, out, open, depth + 1);
        }
    }
    let any =
        matches!(s.get("additionalProperties"), Some(Json::Bool(true)) | Some(Json::Object(_))) || s.get("patternProperties").is_some();
    if any && !prefix.is_empty() {
        open.insert(prefix.to_string());
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for sub in s.get(key).and_then(Json::as_array).into_iter().flatten() {
            schema_paths(sub, prefix, out, open, depth + 1);
        }
    }
}

/// Switch-like keys charts name differently (`enabled` here, `install` or `create` there).
const SWITCHES: &[&str] = &["enabled", "enable", "install", "create", "deploy"];

fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known key nearest to an unknown `path`: at the first segment that is not known, the
/// sibling of the same name in another case, a switch under another name (`enabled` →
/// `install`), or one a typo away; the rest of the path follows it when it is known there. None
/// when nothing is near.
pub fn nearest(path: &str, known: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut prefix = String::new();
    for (i, seg) in segments.iter().enumerate() {
        let here = if prefix.is_empty() { seg.to_string() } else { format!("{prefix}.{seg}") };
        if known.contains(&here) {
            prefix = here;
            continue;
        }
        let children: BTreeSet<&str> = known
            .iter()
            .filter_map(|k| {
                let rest = if prefix.is_empty() { Some(k.as_str()) } else { k.strip_prefix(&format!("{prefix}.")) }?;
                Some(rest.split('.').next().unwrap_or(rest))
            })
            .collect();
        let lower = seg.to_ascii_lowercase();
        let score = |c: &&str| -> Option<(usize, usize)> {
            let cl = c.to_ascii_lowercase();
            if cl == lower {
                return Some((0, 0));
            }
            if SWITCHES.contains(&lower.as_str()) && SWITCHES.contains(&cl.as_str()) {
                return Some((1, 0));
            }
            let d = distance(&lower, &cl);
            (d <= (seg.len() / 3).max(1)).then_some((2, d))
        };
        let best = children.iter().filter_map(|c| score(c).map(|s| (s, *c))).min()?.1;
        let mut found = if prefix.is_empty() { best.to_string() } else { format!("{prefix}.{best}") };
        // The rest of the path, as far as it is known under the key found; all of it below a
        // key that is a leaf map (`nodeSelector: {}` takes any key).
        for (j, rest) in segments[i + 1..].iter().enumerate() {
            let next = format!("{found}.{rest}");
            if known.contains(&next) {
                found = next;
                continue;
            }
            if !known.iter().any(|k| k.starts_with(&format!("{found}."))) {
                found = format!("{found}.{}", segments[i + 1 + j..].join("."));
            }
            break;
        }
        return Some(found);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_nearest_key_is_a_case_a_switch_or_a_typo_away() {
        let known =
            set(&["crds", "crds.enabled", "jobset", "jobset.install", "jobset.fullnameOverride", "manager", "manager.nodeSelector"]);
        assert_eq!(nearest("crd.enabled", &known).as_deref(), Some("crds.enabled"));
        assert_eq!(nearest("jobset.enabled", &known).as_deref(), Some("jobset.install"));
        assert_eq!(nearest("manager.nodeselector", &known).as_deref(), Some("manager.nodeSelector"));
        assert_eq!(nearest("manager.nodeSelektor.pool", &known).as_deref(), Some("manager.nodeSelector.pool"));
        assert_eq!(nearest("somethingElse", &known), None);
        assert_eq!(nearest("jobset.fullnameOverrides", &known).as_deref(), Some("jobset.fullnameOverride"));
    }

    #[test]
    fn schema_properties_and_open_maps_are_known() {
        let schema = serde_json::json!({"properties": {"a": {"properties": {"b": {"type": "string"}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let (mut paths, mut open) = (BTreeSet::new(), BTreeSet::new());
        schema_paths(&schema, "", &mut paths, &mut open, 0);
        assert_eq!(paths, set(&["a", "a.b", "labels"]));
        assert_eq!(open, set(&["labels"]));
        let scope = ValuesScope { schema: paths, open, ..ValuesScope::default() };
        assert!(scope.knows("a.b") && scope.knows("labels.team") && !scope.knows("a.c") && scope.knows("global.x"));
    }
}
