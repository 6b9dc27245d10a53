//! `x-kubernetes-list-type` invariants: items of a `set` are unique, items of a `map` are objects
//! with unique `x-kubernetes-list-map-keys` (apiextensions-apiserver `schema/listtype`). Only the
//! second occurrence of a value is reported, as upstream does.

use serde_json::{Map, Value};

use super::fielderr::{go_json, BadValue, ErrorKind, FieldError};
use super::structural::{Additional, Schema};

/// `ValidateListSetsAndMaps` over a whole object.
pub fn validate(path: &str, s: &Schema, v: &Value, errs: &mut Vec<FieldError>) {
    walk(&mut path.to_string(), s, v, errs);
}

/// [`validate`] with one path buffer for the whole walk (each step appends and takes off its
/// key): the paths are read only where an error is found.
fn walk(path: &mut String, s: &Schema, v: &Value, errs: &mut Vec<FieldError>) {
    use std::fmt::Write;
    if !s.has_list_types_below {
        return;
    }
    let len = path.len();
    match v {
        Value::Object(m) => {
            if let Some(Additional::Schema(a)) = &s.additional {
                for (k, child) in m {
                    let _ = write!(path, "[{k}]");
                    walk(path, a, child, errs);
                    path.truncate(len);
                }
            }
            for (k, child) in m {
                if let Some(p) = s.properties.get(k) {
                    if len != 0 {
                        path.push('.');
                    }
                    path.push_str(k);
                    walk(path, p, child, errs);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    // Strings are equal exactly when their texts are: no texts when none repeats.
                    let strings: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                    let distinct = strings.is_some_and(|s| all_distinct(&s));
                    for i in non_unique(items).into_iter().filter(|_| !distinct) {
                        errs.push(dup(path, i, BadValue::of_json(&items[i])));
                    }
                }
                Some("map") => validate_map(path, s, items, errs),
                _ => {}
            }
            if let Some(is) = &s.items {
                for (i, item) in items.iter().enumerate() {
                    let _ = write!(path, "[{i}]");
                    walk(path, is, item, errs);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn dup(path: &str, i: usize, value: BadValue) -> FieldError {
    FieldError::new(ErrorKind::Duplicate, format!("{path}[{i}]"), value, "")
}

/// Whether no two of `keys` are equal.
fn all_distinct<T: Eq + std::hash::Hash>(keys: &[T]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    keys.iter().all(|k| seen.insert(k))
}

/// Indices of second occurrences; scalars compare as Go interface keys (int64 ≠ float64).
fn non_unique(items: &[Value]) -> Vec<usize> {
    let key = |v: &Value| match v {
        Value::Number(n) if n.is_i64() => format!("i{n}"),
        Value::Number(n) => format!("f{}", n.as_f64().unwrap_or(0.0)),
        other => format!("j{}", go_json(other)),
    };
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, x) in items.iter().enumerate() {
        let c = seen.entry(key(x)).or_insert(0);
        *c += 1;
        if *c == 2 {
            out.push(i);
        }
    }
    out
}

fn validate_map(path: &str, s: &Schema, items: &[Value], errs: &mut Vec<FieldError>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            errs.push(FieldError::invalid(format!("{path}[{i}]"), BadValue::of_json(x), "must be an object for an array of list-type map"));
            return;
        }
    }
    if items.len() <= 1 || s.list_map_keys.is_empty() {
        return;
    }
    // Keys whose present values are all strings are equal exactly when their texts are: the
    // usual case (`name`) is answered without building the texts, when no key repeats.
    let string_keys: Option<Vec<Vec<Option<&str>>>> = items
        .iter()
        .map(|x| {
            s.list_map_keys
                .iter()
                .map(|name| match x.get(name) {
                    None => Some(None),
                    Some(Value::String(t)) => Some(Some(t.as_str())),
                    Some(_) => None,
                })
                .collect()
        })
        .collect();
    if string_keys.is_some_and(|keys| all_distinct(&keys)) {
        return;
    }
    let keys: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut k = Map::new();
            if let Value::Object(m) = x {
                for name in &s.list_map_keys {
                    if let Some(v) = m.get(name) {
                        k.insert(name.clone(), v.clone());
                    }
                }
            }
            Value::Object(k)
        })
        .collect();
    for i in non_unique(&keys) {
        errs.push(dup(path, i, BadValue::Json(go_json(&keys[i]))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_version::KubeVersion;
    use serde_json::json;

    #[test]
    fn sets_and_maps() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{
                "s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
                "m":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
                     "items":{"type":"object","properties":{"name":{"type":"string"}}}}}}),
            &KubeVersion::new(1, 36),
        )
        .unwrap();
        let mut errs = Vec::new();
        validate("", &s, &json!({"s":["a","b","a","a"],"m":[{"name":"x"},{"name":"x"},{}]}), &mut errs);
        let mut text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        text.sort();
        assert_eq!(text, ["m[1]: Duplicate value: {\"name\":\"x\"}", "s[2]: Duplicate value: \"a\""]);
    }

    /// Keys and items that are all strings and all distinct take the short way; any repeat, or
    /// a key that is not a string, the texts (numbers of two types never collide).
    #[test]
    fn string_keys_and_mixed_keys_agree_with_the_texts() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{
                "s":{"type":"array","x-kubernetes-list-type":"set","items":{}},
                "m":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],
                     "items":{"type":"object"}}}}),
            &KubeVersion::new(1, 36),
        )
        .unwrap();
        let errors = |v: Value| {
            let mut errs = Vec::new();
            validate("", &s, &v, &mut errs);
            errs.iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        assert!(errors(json!({"s":["a","b"],"m":[{"name":"x"},{"name":"x","port":"1"},{"port":"x"}]})).is_empty());
        assert_eq!(errors(json!({"s":[1, 1.0, "1"],"m":[{"name":"x","port":1},{"name":"x","port":1.0}]})), Vec::<String>::new());
        assert_eq!(
            errors(json!({"s":["a","b","a"],"m":[{"name":"x","port":"1"},{"port":"1","name":"x"}]})),
            ["s[2]: Duplicate value: \"a\"", "m[1]: Duplicate value: {\"name\":\"x\",\"port\":\"1\"}"]
        );
    }
}
