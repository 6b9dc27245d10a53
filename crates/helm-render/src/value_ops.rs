//! Helm's value semantics that both chart loading and rendering need, kept below `chart` and
//! `helm` so neither reaches into the other for them: `MergeMaps` (how values documents and `-f`
//! files combine) and Sprig's `strval` (how a value reads as a string, e.g. in annotations).

use gotmpl::fmt::sprint_value;
use gotmpl::{Map, Value};

/// `MergeMaps`: maps merged recursively, everything else replaced; `src` wins.
pub fn merge_maps(dst: &mut Map, src: &Map) {
    for (k, v) in src {
        match (dst.get(k), v) {
            (Some(Value::Map(d)), Value::Map(s)) => {
                let mut inner = d.entries.borrow().clone();
                merge_maps(&mut inner, &s.entries.borrow());
                dst.insert(k.clone(), Value::map(inner));
            }
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Sprig `strval`: strings as they are, bytes as text, nil as `<nil>`, anything else `%v`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Invalid | Value::Nil => "<nil>".into(),
        other => sprint_value(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Value)]) -> Map {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn merge_maps_merges_tables_and_replaces_everything_else() {
        let mut dst =
            map(&[("a", Value::map(map(&[("x", Value::Int(1)), ("y", Value::Int(2))]))), ("l", Value::list(vec![Value::Int(1)]))]);
        let src = map(&[("a", Value::map(map(&[("y", Value::Int(3))]))), ("l", Value::list(vec![Value::Int(9)])), ("n", Value::Nil)]);
        merge_maps(&mut dst, &src);
        let a = match &dst["a"] {
            Value::Map(m) => m.entries.borrow().clone(),
            other => panic!("a is {other:?}"),
        };
        assert_eq!(strval(&a["x"]), "1");
        assert_eq!(strval(&a["y"]), "3");
        assert_eq!(strval(&dst["l"]), "[9]");
        assert!(dst["n"].is_nil());
    }

    #[test]
    fn strval_is_sprigs() {
        assert_eq!(strval(&Value::str("a b")), "a b");
        assert_eq!(strval(&Value::Nil), "<nil>");
        assert_eq!(strval(&Value::Bool(true)), "true");
        assert_eq!(strval(&Value::Float(1.5)), "1.5");
    }
}
