//! JSON → CEL values, directed by the schema the way apiextensions' `UnstructuredToVal` types
//! them: `number` nodes are doubles even when written as integers, `date-time`/`duration`/`byte`
//! strings are timestamps/durations/bytes, and only declared properties of an object are visible
//! (unknown ones are pruned before validation anyway). Conversion can be limited to the fields a
//! rule reads, so a root rule on `metadata.name` does not copy the whole object.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use cel::objects::Key;
use cel::Value as Cel;
use serde_json::Value;

use crate::structural::{Additional, Schema};

/// Converts `v` typed by `s`; `only` restricts an object to the named top-level fields.
pub fn to_cel(v: &Value, s: &Schema, only: Option<&BTreeSet<String>>, resource_root: bool) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if s.ty == "number" {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(text) => string_value(text, s),
        Value::Array(items) => {
            let list: Vec<Cel> = match s.items.as_deref() {
                Some(is) => items.iter().map(|i| to_cel(i, is, None, is.embedded_resource)).collect(),
                None => items.iter().map(untyped).collect(),
            };
            Cel::List(Arc::new(list))
        }
        Value::Object(m) => {
            let mut out: HashMap<Key, Cel> = HashMap::with_capacity(m.len());
            for (k, child) in m {
                if only.is_some_and(|o| !o.contains(k)) {
                    continue;
                }
                if (resource_root || s.embedded_resource) && (k == "apiVersion" || k == "kind") && !s.properties.contains_key(k) {
                    out.insert(Key::String(Arc::new(k.clone())), untyped(child));
                    continue;
                }
                if (resource_root || s.embedded_resource) && k == "metadata" && !meta_declared(s) {
                    // WithTypeAndObjectMeta: only name and generateName are declared.
                    let mut meta: HashMap<Key, Cel> = HashMap::new();
                    if let Value::Object(mm) = child {
                        for f in ["name", "generateName"] {
                            if let Some(Value::String(x)) = mm.get(f) {
                                meta.insert(Key::String(Arc::new(f.to_string())), Cel::String(Arc::new(x.clone())));
                            }
                        }
                    }
                    out.insert(Key::String(Arc::new(k.clone())), Cel::Map(meta.into()));
                    continue;
                }
                let cs = match s.properties.get(k) {
                    Some(p) => Some(p),
                    None => match &s.additional {
                        Some(Additional::Schema(a)) => Some(a.as_ref()),
                        _ => None,
                    },
                };
                match cs {
                    Some(cs) => {
                        out.insert(Key::String(Arc::new(k.clone())), to_cel(child, cs, None, false));
                    }
                    None if s.preserve_unknown || matches!(s.additional, Some(Additional::Allows(true))) => {
                        out.insert(Key::String(Arc::new(k.clone())), untyped(child));
                    }
                    None => {}
                }
            }
            Cel::Map(out.into())
        }
    }
}

fn meta_declared(s: &Schema) -> bool {
    s.properties.get("metadata").is_some_and(|m| {
        m.properties.get("name").is_some_and(|n| n.ty == "string") && m.properties.get("generateName").is_some_and(|n| n.ty == "string")
    })
}

fn string_value(text: &str, s: &Schema) -> Cel {
    match s.format.as_deref() {
        Some("date-time") | Some("datetime") => match chrono::DateTime::parse_from_rfc3339(text) {
            Ok(t) => Cel::Timestamp(t),
            Err(_) => Cel::String(Arc::new(text.to_string())),
        },
        Some("byte") => {
            use base64::Engine;
            match base64::engine::general_purpose::STANDARD.decode(text) {
                Ok(b) => Cel::Bytes(Arc::new(b)),
                Err(_) => Cel::String(Arc::new(text.to_string())),
            }
        }
        _ => Cel::String(Arc::new(text.to_string())),
    }
}

/// A value under a node without a schema (preserve-unknown-fields): plain JSON typing.
pub fn untyped(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Cel::Int(i),
            None => Cel::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(a) => Cel::List(Arc::new(a.iter().map(untyped).collect())),
        Value::Object(m) => {
            let map: HashMap<Key, Cel> = m.iter().map(|(k, v)| (Key::String(Arc::new(k.clone())), untyped(v))).collect();
            Cel::Map(map.into())
        }
    }
}

/// Where `v` holds data its schema's type cannot take, as apiserver's `UnstructuredToVal` says
/// it when a rule reads it (`invalid data, expected int, got string`): per top-level field of
/// an object (`Some(key)`), or the node itself (`None`). Only values validation let through
/// can be wrong here — type errors ratcheting forgave on an update — and cel-go raises them on
/// access, so a rule reading that field fails with this text (k8s.io/apiserver v0.36.1
/// `pkg/cel/common/valuesunstructured.go`).
pub fn invalid_data(v: &Value, s: &Schema, resource_root: bool) -> Vec<(Option<String>, String)> {
    if let (Value::Object(m), "object") = (v, s.ty.as_str()) {
        let mut out = Vec::new();
        for (k, child) in m {
            if (resource_root || s.embedded_resource) && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let cs = s.properties.get(k).or(match &s.additional {
                Some(Additional::Schema(a)) => Some(a.as_ref()),
                _ => None,
            });
            if let Some(msg) = cs.and_then(|cs| first_invalid(child, cs)) {
                out.push((Some(k.clone()), msg));
            }
        }
        return out;
    }
    first_invalid(v, s).map(|m| vec![(None, m)]).unwrap_or_default()
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn first_invalid(v: &Value, s: &Schema) -> Option<String> {
    if v.is_null() {
        return (!s.nullable).then(|| "invalid data, got null for schema with nullable=false".to_string());
    }
    if s.int_or_string {
        let ok = matches!(v, Value::String(_)) || matches!(v, Value::Number(n) if n.is_i64());
        return (!ok).then(|| "invalid data, expected XIntOrString value to be either a string or integer".to_string());
    }
    match (s.ty.as_str(), v) {
        ("object", Value::Object(m)) => m.iter().find_map(|(k, child)| {
            let cs = s.properties.get(k).or(match &s.additional {
                Some(Additional::Schema(a)) => Some(a.as_ref()),
                _ => None,
            })?;
            if s.embedded_resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                return None;
            }
            first_invalid(child, cs)
        }),
        ("object", _) => Some("invalid data, expected a map for the provided schema with type=object".into()),
        ("array", Value::Array(items)) => s.items.as_deref().and_then(|is| items.iter().find_map(|i| first_invalid(i, is))),
        ("array", _) => Some("invalid data, expected an array for the provided schema with type=array".into()),
        ("string", Value::String(_)) => None,
        ("string", other) => Some(format!("invalid data, expected string, got {}", go_type(other))),
        ("number", Value::Number(_)) => None,
        ("number", other) => Some(format!("invalid data, expected float, got {}", go_type(other))),
        ("integer", Value::Number(n)) if n.is_i64() => None,
        ("integer", other) => Some(format!("invalid data, expected int, got {}", go_type(other))),
        ("boolean", Value::Bool(_)) => None,
        ("boolean", other) => Some(format!("invalid data, expected bool, got {}", go_type(other))),
        _ => None,
    }
}
