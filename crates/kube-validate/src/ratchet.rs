//! Validation ratcheting (`CRDValidationRatcheting`: alpha 1.28, on by default from 1.30, GA and
//! locked on from 1.33 — apiextensions-apiserver pkg/features/kube_features.go): on update, an
//! error is dropped (a warning upstream) when the value it is about is unchanged. "About" is the
//! deepest node that can be correlated with the old object — object fields by name, items of
//! `x-kubernetes-list-type: map` lists by their keys, nothing else (`CorrelatedObject` in
//! k8s.io/apiserver/pkg/cel/common/equality.go) — and "unchanged" is deep equality there.
//! Rules that read `oldSelf` are never ratcheted; `apiVersion`/`kind` at the root never correlate.

use serde_json::Value;

use super::openapi::{deep_equal, Seg};
use super::structural::{Additional, Schema};

/// The old item a new list item correlates with (list-type map with keys only).
pub fn map_list_match<'a>(s: &Schema, item: &Value, olds: &'a [Value]) -> Option<&'a Value> {
    if s.list_type.as_deref() != Some("map") || s.list_map_keys.is_empty() {
        return None;
    }
    let item = item.as_object()?;
    olds.iter().find(|o| {
        o.as_object().is_some_and(|o| {
            s.list_map_keys.iter().all(|k| match (item.get(k), o.get(k)) {
                (Some(a), Some(b)) => deep_equal(a, b),
                (None, None) => true,
                _ => false,
            })
        })
    })
}

/// Whether an error raised at `node` would be ratcheted for this update.
pub fn ratcheted(root: &Schema, new: &Value, old: &Value, node: &[Seg]) -> bool {
    let (mut s, mut n, mut o) = (root, new, old);
    // The deepest correlated (new, old) pair so far.
    let mut anchor = (n, o);
    for (depth, seg) in node.iter().enumerate() {
        let next = match seg {
            Seg::Key(k) => {
                let key = k.strip_prefix('[').and_then(|k| k.strip_suffix(']')).unwrap_or(k);
                if depth == 0 && (key == "apiVersion" || key == "kind") {
                    return false;
                }
                let child_schema = s.properties.get(key).or(match &s.additional {
                    Some(Additional::Schema(a)) => Some(a.as_ref()),
                    _ => None,
                });
                match (child_schema, n.get(key), o.get(key)) {
                    (Some(cs), Some(cn), Some(co)) => Some((cs, cn, co)),
                    _ => None,
                }
            }
            Seg::Index(i) => {
                let items = s.items.as_deref();
                match (items, n.as_array().and_then(|a| a.get(*i)), o.as_array()) {
                    (Some(is), Some(cn), Some(olds)) => map_list_match(s, cn, olds).map(|co| (is, cn, co)),
                    _ => None,
                }
            }
        };
        match next {
            Some((cs, cn, co)) => {
                s = cs;
                n = cn;
                o = co;
                anchor = (n, o);
            }
            None => break,
        }
    }
    deep_equal(anchor.0, anchor.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_version::KubeVersion;
    use serde_json::json;

    #[test]
    fn anchors_at_the_deepest_correlated_node() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{"spec":{"type":"object","properties":{
                "a":{"type":"integer"},"b":{"type":"integer"},
                "m":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
                     "items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"string"}}}},
                "l":{"type":"array","items":{"type":"object","properties":{"v":{"type":"string"}}}}}}}}),
            &KubeVersion::new(1, 36),
        )
        .unwrap();
        let old = json!({"spec":{"a":"x","b":1,"m":[{"k":"1","v":"bad"},{"k":"2","v":"z"}],"l":[{"v":"bad"}]}});
        let new = json!({"spec":{"a":"x","b":2,"m":[{"k":"2","v":"y"},{"k":"1","v":"bad"}],"l":[{"v":"bad"}],"c":1}});
        let key = |k: &str| Seg::Key(k.into());
        assert!(ratcheted(&s, &new, &old, &[key("spec"), key("a")]), "unchanged field");
        assert!(!ratcheted(&s, &new, &old, &[key("spec"), key("b")]), "changed field");
        assert!(ratcheted(&s, &new, &old, &[key("spec"), key("m"), Seg::Index(1), key("v")]), "map item moved");
        assert!(ratcheted(&s, &new, &old, &[key("spec"), key("l"), Seg::Index(0), key("v")]), "atomic list unchanged");
        let new2 = json!({"spec":{"a":"x","l":[{"v":"bad"},{"v":"ok"}]}});
        assert!(!ratcheted(&s, &new2, &old, &[key("spec"), key("l"), Seg::Index(0), key("v")]), "atomic list changed");
    }
}
