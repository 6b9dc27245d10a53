//! Serialisation functions: Helm's `toYaml`/`fromYaml` family (errors become "" or an `Error`
//! entry, `must*` variants fail instead), Sprig's JSON encoders, and TOML.

use super::strings::s;
use crate::json::{from_json, to_json, JsonStyle, COMPACT};
use crate::yaml::{read_first, to_yaml};
use gotmpl::{FnError, FuncMap, Map, Param, Value};

const PRETTY: JsonStyle = JsonStyle { escape_html: true, indent: Some("  ") };
const RAW: JsonStyle = JsonStyle { escape_html: false, indent: None };

/// What `json.Unmarshal` says when the document's type does not fit the target.
fn type_mismatch(found: Option<&str>, target: &str) -> String {
    found.map(|kind| format!("json: cannot unmarshal {kind} into Go value of type {target}")).unwrap_or_default()
}

/// The JSON kind of a decoded document, as `json.Unmarshal` names it (None: no name for it).
fn json_kind(v: &Value) -> Option<&'static str> {
    Some(match v {
        Value::List(_) => "array",
        Value::Map(_) => "object",
        Value::String(_) => "string",
        Value::Float(_) | Value::Int(_) | Value::Int64(_) | Value::Uint(_) => "number",
        Value::Bool(_) => "bool",
        _ => return None,
    })
}

const MAP_TYPE: &str = "map[string]interface {}";
const LIST_TYPE: &str = "[]interface {}";

/// Why `fromYaml`/`fromJson` and their array and `must` variants could not decode their text:
/// the texts sigs.k8s.io/yaml and encoding/json give (templates print them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not YAML go-yaml v2 reads.
    #[error("error converting YAML to JSON: {0}")]
    Yaml(crate::yaml::YamlError),
    /// Not JSON.
    #[error("{0}")]
    Json(crate::json::JsonError),
    /// A YAML document that is not the map or list asked for (`found`: its JSON kind).
    #[error("error unmarshaling JSON: while decoding JSON: {}", type_mismatch(*found, target))]
    YamlShape { found: Option<&'static str>, target: &'static str },
    /// A JSON document that is not the map or list asked for.
    #[error("{}", type_mismatch(*found, target))]
    JsonShape { found: Option<&'static str>, target: &'static str },
}

/// sigs.k8s.io/yaml `Unmarshal` into a map or list.
fn yaml_into(text: &str, want_list: bool) -> Result<Value, DecodeError> {
    let v = read_first(text).map_err(DecodeError::Yaml)?;
    let target = if want_list { LIST_TYPE } else { MAP_TYPE };
    match (&v, want_list) {
        (Value::Map(_), false) | (Value::List(_), true) => Ok(v),
        (Value::Nil | Value::Invalid, false) => Ok(Value::empty_map()),
        (Value::Nil | Value::Invalid, true) => Ok(Value::list(vec![])),
        _ => Err(DecodeError::YamlShape { found: json_kind(&v), target }),
    }
}

fn json_into(text: &str, want_list: bool) -> Result<Value, DecodeError> {
    let v = from_json(text).map_err(DecodeError::Json)?;
    let target = if want_list { LIST_TYPE } else { MAP_TYPE };
    match (&v, want_list) {
        (Value::Map(_), false) | (Value::List(_), true) => Ok(v),
        (Value::Nil, false) => Ok(Value::empty_map()),
        (Value::Nil, true) => Ok(Value::list(vec![])),
        _ => Err(DecodeError::JsonShape { found: json_kind(&v), target }),
    }
}

/// Why `toToml`/`fromToml` failed (BurntSushi/toml's texts; `toToml` prints them in place of the
/// document).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TomlError {
    /// `toToml` of a list, string or other non-map.
    #[error("toml: top-level values must be Go maps or structs")]
    NotATable,
    /// A nil inside a list (a nil table entry is skipped instead).
    #[error("toml: cannot encode a nil value")]
    Nil,
    /// `fromToml`: a `[a.b]` header runs through a key that holds a value (1-based `line`).
    #[error("toml: line {line}: table header collides with a value")]
    HeaderCollides { line: usize },
    #[error("toml: line {line}: expected key = value")]
    ExpectedKeyValue { line: usize },
    /// `fromToml`: a value it does not read, as written.
    #[error("toml: line {line}: invalid value {value}")]
    InvalidValue { line: usize, value: String },
}

fn error_map(message: String) -> Value {
    let mut m = Map::new();
    m.insert("Error".into(), Value::string(message));
    Value::map(m)
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::*;
    map.add("toYaml", &[Any], None, |_, a| Ok(Value::string(to_yaml(&a[0]).unwrap_or_default())));
    map.add("mustToYaml", &[Any], None, |_, a| to_yaml(&a[0]).map(Value::string).map_err(|e| FnError::new(e.to_string())));
    map.add("toYamlPretty", &[Any], None, |_, a| Ok(Value::string(crate::yaml::emit::to_yaml_pretty(&a[0]).unwrap_or_default())));
    map.add("fromYaml", &[Str], None, |_, a| Ok(yaml_into(s(&a[0]), false).unwrap_or_else(|e| error_map(e.to_string()))));
    map.add("fromYamlArray", &[Str], None, |_, a| {
        Ok(yaml_into(s(&a[0]), true).unwrap_or_else(|e| Value::list(vec![Value::string(e.to_string())])))
    });
    map.add("toJson", &[Any], None, |_, a| Ok(Value::string(to_json(&a[0], &COMPACT).unwrap_or_default())));
    map.add("mustToJson", &[Any], None, |_, a| to_json(&a[0], &COMPACT).map(Value::string).map_err(|e| FnError::new(e.0)));
    map.add("toPrettyJson", &[Any], None, |_, a| Ok(Value::string(to_json(&a[0], &PRETTY).unwrap_or_default())));
    map.add("mustToPrettyJson", &[Any], None, |_, a| to_json(&a[0], &PRETTY).map(Value::string).map_err(|e| FnError::new(e.0)));
    for name in ["toRawJson", "mustToRawJson"] {
        map.add(name, &[Any], None, |_, a| to_json(&a[0], &RAW).map(Value::string).map_err(|e| FnError::new(e.0)));
    }
    map.add("fromJson", &[Str], None, |_, a| Ok(json_into(s(&a[0]), false).unwrap_or_else(|e| error_map(e.to_string()))));
    map.add("mustFromJson", &[Str], None, |_, a| json_into(s(&a[0]), false).map_err(|e| FnError::new(e.to_string())));
    map.add("fromJsonArray", &[Str], None, |_, a| {
        Ok(json_into(s(&a[0]), true).unwrap_or_else(|e| Value::list(vec![Value::string(e.to_string())])))
    });
    map.add("mustFromJsonArray", &[Str], None, |_, a| json_into(s(&a[0]), true).map_err(|e| FnError::new(e.to_string())));
    map.add("toToml", &[Any], None, |_, a| Ok(Value::string(to_toml(&a[0]).unwrap_or_else(|e| e.to_string()))));
    map.add("mustToToml", &[Any], None, |_, a| to_toml(&a[0]).map(Value::string).map_err(|e| FnError::new(e.to_string())));
    map.add("fromToml", &[Str], None, |_, a| Ok(from_toml(s(&a[0])).unwrap_or_else(|e| error_map(e.to_string()))));
}

/// BurntSushi/toml's encoder for the shapes values take: scalars first, then sub-tables.
fn to_toml(v: &Value) -> Result<String, TomlError> {
    let Value::Map(m) = v else { return Err(TomlError::NotATable) };
    let mut out = String::new();
    write_table(&mut out, &m.entries.borrow(), &[], 0)?;
    Ok(out)
}

fn toml_key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_string()
    } else {
        gotmpl::fmt::go_quote(k)
    }
}

fn toml_scalar(v: &Value) -> Result<String, TomlError> {
    Ok(match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Float(f) => {
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                if *f > 0.0 { "inf" } else { "-inf" }.into()
            } else if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                gotmpl::fmt::format_float_shortest(*f)
            }
        }
        Value::String(s) => gotmpl::fmt::go_quote(s),
        Value::List(l) => {
            let items: Result<Vec<String>, TomlError> = l.items.iter().map(toml_scalar).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Nil | Value::Invalid => return Err(TomlError::Nil),
        other => gotmpl::fmt::go_quote(&gotmpl::fmt::sprint_value(other)),
    })
}

fn write_table(out: &mut String, entries: &Map, path: &[String], depth: usize) -> Result<(), TomlError> {
    let indent = "  ".repeat(depth);
    for (k, v) in entries {
        if matches!(v, Value::Map(_) | Value::Nil | Value::Invalid) {
            continue;
        }
        out.push_str(&format!("{indent}{} = {}\n", toml_key(k), toml_scalar(v)?));
    }
    for (k, v) in entries {
        if let Value::Map(m) = v {
            let mut p = path.to_vec();
            p.push(toml_key(k));
            out.push_str(&format!("\n{}[{}]\n", "  ".repeat(depth), p.join(".")));
            write_table(out, &m.entries.borrow(), &p, depth + 1)?;
        }
    }
    Ok(())
}

/// A small TOML reader: tables, dotted table headers, and scalar or flat-array values.
fn from_toml(text: &str) -> Result<Value, TomlError> {
    let root = Value::empty_map();
    let mut current = root.clone();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = root.clone();
            for part in header.split('.') {
                let key = part.trim().trim_matches('"').to_string();
                let next = match &current {
                    Value::Map(m) => m.entries.borrow_mut().entry(key).or_insert_with(Value::empty_map).clone(),
                    _ => return Err(TomlError::HeaderCollides { line: n + 1 }),
                };
                current = next;
            }
            continue;
        }
        let (k, v) = line.split_once('=').ok_or(TomlError::ExpectedKeyValue { line: n + 1 })?;
        let value = toml_value(v.trim()).ok_or_else(|| TomlError::InvalidValue { line: n + 1, value: v.trim().to_string() })?;
        if let Value::Map(m) = &current {
            m.entries.borrow_mut().insert(k.trim().trim_matches('"').to_string(), value);
        }
    }
    Ok(root)
}

fn toml_value(text: &str) -> Option<Value> {
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let items: Option<Vec<Value>> = inner.split(',').map(str::trim).filter(|s| !s.is_empty()).map(toml_value).collect();
        return items.map(Value::list);
    }
    if text.starts_with('"') {
        return gotmpl::parse::unquote(text).map(Value::string);
    }
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return Some(Value::str(inner));
    }
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let clean = text.replace('_', "");
    if let Ok(i) = clean.parse::<i64>() {
        return Some(Value::Int64(i));
    }
    clean.parse::<f64>().ok().map(Value::Float)
}
