//! What a write does to an object before validating it: drop nulls the schema cannot hold, apply
//! defaults, and prune fields the schema does not know (apiextensions-apiserver
//! `schema/defaulting` and `schema/pruning`). Pruning is reported, not an error: the API server
//! drops the fields silently (or warns with `fieldValidation=Warn`), which is data loss.

use serde_json::{Map, Value};

use super::structural::{Additional, Schema};

/// ObjectMeta's JSON fields: anything else under a resource's `metadata` is dropped on decode.
pub(crate) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn schema_for<'a>(s: Option<&'a Schema>, k: &str) -> Option<&'a Schema> {
    s.and_then(|s| s.schema_for_property(k))
}

fn non_nullable_null(v: &Value, s: Option<&Schema>) -> bool {
    v.is_null() && s.is_some_and(|s| !s.nullable)
}

/// `PruneNonNullableNullsWithoutDefaults`.
pub fn prune_nulls(v: &mut Value, s: Option<&Schema>) {
    match v {
        Value::Object(m) => {
            m.retain(|k, child| {
                let cs = schema_for(s, k);
                !(non_nullable_null(child, cs) && cs.is_some_and(|c| c.default.is_none()))
            });
            for (k, child) in m.iter_mut() {
                prune_nulls(child, schema_for(s, k));
            }
        }
        Value::Array(items) => {
            let is = s.and_then(|s| s.items.as_deref());
            for i in items {
                prune_nulls(i, is);
            }
        }
        _ => {}
    }
}

/// `defaulting.Default`.
pub fn apply_defaults(v: &mut Value, s: &Schema) {
    if !s.has_defaults_below {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, prop) in &s.properties {
                if let Some(d) = &prop.default {
                    if m.get(k).is_none_or(|x| non_nullable_null(x, Some(prop))) {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, child) in m.iter_mut() {
                if let Some(p) = s.properties.get(k) {
                    apply_defaults(child, p);
                } else if let Some(Additional::Schema(a)) = &s.additional {
                    if let (true, Some(d)) = (non_nullable_null(child, Some(a)), &a.default) {
                        *child = d.clone();
                    }
                    apply_defaults(child, a);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = &s.items {
                for i in items {
                    if let (true, Some(d)) = (non_nullable_null(i, Some(is)), &is.default) {
                        *i = d.clone();
                    }
                    apply_defaults(i, is);
                }
            }
        }
        _ => {}
    }
}

/// Prunes `v` (the whole resource) and returns the dropped paths, sorted as the API server sorts
/// its `unknown field` warnings.
pub fn prune_resource(v: &mut Value, s: &Schema) -> Vec<String> {
    let mut dropped = Vec::new();
    // One path buffer for the whole walk: each step appends its key and takes it off again (a
    // path string per field was most of pruning's time).
    let mut path = String::new();
    // As apiextensions' PruneWithOptions: the root is an embedded resource, and a root that
    // preserves unknown fields prunes only inside the properties it declares.
    if s.preserve_unknown {
        let mut root = s.clone();
        root.embedded_resource = true;
        skip_prune(v, &root, &mut path, &mut dropped);
    } else if let Value::Object(m) = v {
        if let Some(Value::Object(meta)) = m.get_mut("metadata") {
            coerce_meta("metadata", meta, &mut dropped);
        }
        prune_map(m, Some(s), true, &mut path, &mut dropped);
    }
    dropped.sort();
    dropped
}

fn coerce_meta(path: &str, meta: &mut Map<String, Value>, dropped: &mut Vec<String>) {
    meta.retain(|k, _| {
        let keep = OBJECT_META_FIELDS.contains(&k.as_str());
        if !keep {
            dropped.push(format!("{path}.{k}"));
        }
        keep
    });
}

/// Appends `.k` (`k` at the root) to `path`; returns the length to truncate back to.
fn enter(path: &mut String, k: &str) -> usize {
    let len = path.len();
    if len != 0 {
        path.push('.');
    }
    path.push_str(k);
    len
}

fn enter_index(path: &mut String, i: usize) -> usize {
    use std::fmt::Write;
    let len = path.len();
    let _ = write!(path, "[{i}]");
    len
}

fn prune(v: &mut Value, s: Option<&Schema>, path: &mut String, dropped: &mut Vec<String>) {
    if let Some(s) = s.filter(|s| s.preserve_unknown) {
        skip_prune(v, s, path, dropped);
        return;
    }
    match v {
        Value::Object(m) => prune_map(m, s, s.is_some_and(|s| s.embedded_resource), path, dropped),
        Value::Array(items) => {
            let is = s.and_then(|s| s.items.as_deref());
            for (i, item) in items.iter_mut().enumerate() {
                let len = enter_index(path, i);
                prune(item, is, path, dropped);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn prune_map(m: &mut Map<String, Value>, s: Option<&Schema>, embedded: bool, path: &mut String, dropped: &mut Vec<String>) {
    let Some(s) = s else {
        for k in m.keys() {
            let len = enter(path, k);
            dropped.push(path.clone());
            path.truncate(len);
        }
        m.clear();
        return;
    };
    let meta_field = |k: &str| matches!(k, "apiVersion" | "kind" | "metadata");
    let at_root = path.is_empty();
    m.retain(|k, child| {
        if embedded && meta_field(k) {
            if k == "metadata" && !at_root {
                if let Value::Object(meta) = child {
                    let len = enter(path, k);
                    coerce_meta(path, meta, dropped);
                    path.truncate(len);
                }
            }
            return true;
        }
        let len = enter(path, k);
        let keep = if let Some(p) = s.properties.get(k) {
            prune(child, Some(p), path, dropped);
            true
        } else if let Some(a) = &s.additional {
            match a {
                Additional::Schema(a) => prune(child, Some(a), path, dropped),
                Additional::Allows(_) => prune(child, None, path, dropped),
            }
            true
        } else {
            if !meta_field(k) || !at_root {
                dropped.push(path.clone());
            }
            false
        };
        path.truncate(len);
        keep
    });
}

fn skip_prune(v: &mut Value, s: &Schema, path: &mut String, dropped: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                let len = enter(path, k);
                if s.embedded_resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if let (true, Value::Object(meta)) = (k == "metadata", child) {
                        coerce_meta(path, meta, dropped);
                    }
                } else if let Some(p) = s.properties.get(k) {
                    prune(child, Some(p), path, dropped);
                } else if let Some(Additional::Schema(a)) = &s.additional {
                    prune(child, Some(a), path, dropped);
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            if let Some(is) = &s.items {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = enter_index(path, i);
                    skip_prune(item, is, path, dropped);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_version::KubeVersion;
    use serde_json::json;

    fn schema(v: Value) -> Schema {
        Schema::parse(&v, &KubeVersion::new(1, 36)).unwrap()
    }

    #[test]
    fn prunes_unknown_fields_and_reports_paths() {
        let s = schema(json!({"type":"object","properties":{
            "spec":{"type":"object","properties":{
                "l":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}},
                "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}));
        let mut v = json!({"apiVersion":"g/v1","kind":"K","metadata":{"name":"x","bogus":1},
            "spec":{"l":[{"a":"1","b":2}],"free":{"anything":1},"gone":true},"extra":1});
        let dropped = prune_resource(&mut v, &s);
        assert_eq!(dropped, ["extra", "metadata.bogus", "spec.gone", "spec.l[0].b"]);
        assert_eq!(v["spec"]["free"]["anything"], 1);
        assert!(v["spec"]["l"][0].get("b").is_none());
        assert_eq!(v["apiVersion"], "g/v1");
    }

    #[test]
    fn a_root_preserving_unknown_fields_prunes_only_inside_declared_properties() {
        let s = schema(json!({"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{
            "spec":{"type":"object","properties":{"a":{"type":"string"}}}}}));
        let mut v = json!({"apiVersion":"g/v1","kind":"K","metadata":{"name":"x","bogus":1},"spec":{"a":"1","b":2},"extra":1});
        assert_eq!(prune_resource(&mut v, &s), ["metadata.bogus", "spec.b"]);
        assert_eq!(v, json!({"apiVersion":"g/v1","kind":"K","metadata":{"name":"x"},"spec":{"a":"1"},"extra":1}));
    }

    #[test]
    fn defaults_and_nulls() {
        let s = schema(json!({"type":"object","properties":{
            "a":{"type":"integer","default":3},
            "b":{"type":"string"},
            "c":{"type":"string","nullable":true},
            "o":{"type":"object","default":{},"properties":{"d":{"type":"string","default":"x"}}}}}));
        let mut v = json!({"a":null,"b":null,"c":null});
        prune_nulls(&mut v, Some(&s));
        apply_defaults(&mut v, &s);
        assert_eq!(v, json!({"a":3,"c":null,"o":{"d":"x"}}));
    }
}
