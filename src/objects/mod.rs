//! Generic Kubernetes object helpers shared by the chart side (inventory) and the cluster side:
//! object identity, which kinds are namespaced, reading fields of JSON objects, rendered YAML
//! documents as objects, containers and images inside any object, and JSON ↔ template values.

pub mod convert;
pub mod object;
pub mod workload;

use serde_json::Value as Json;

pub use convert::{from_serde, to_serde, yaml_of};
pub use object::{objects_in, Identity, Object, Origin};

/// Kinds the tool reasons about that are cluster-scoped (everything else is namespaced).
pub fn is_namespaced(kind: &str) -> bool {
    !matches!(
        kind,
        "Namespace"
            | "CustomResourceDefinition"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "ClusterTrainingRuntime"
            | "PriorityClass"
            | "StorageClass"
            | "PersistentVolume"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "APIService"
            | "IngressClass"
            | "RuntimeClass"
            | "PodSecurityPolicy"
    )
}

/// A copy of an object without its `status`, made without copying the status first (stored
/// objects are judged and rewritten without it; 50,000 of them are copied this way).
pub fn without_status(obj: &Json) -> Json {
    match obj {
        Json::Object(m) => Json::Object(m.iter().filter(|(k, _)| *k != "status").map(|(k, v)| (k.clone(), v.clone())).collect()),
        other => other.clone(),
    }
}

/// The string at a path of object keys ("" when absent or not a string).
pub fn str_at<'a>(v: &'a Json, path: &[&str]) -> &'a str {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn without_status_keeps_everything_else_in_order() {
        let o = json!({"kind": "TrainJob", "status": {"x": 1}, "spec": {"status": "kept"}, "metadata": {}});
        let copy = without_status(&o);
        assert_eq!(copy, json!({"kind": "TrainJob", "spec": {"status": "kept"}, "metadata": {}}));
        assert_eq!(
            copy.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["kind".into(), "spec".into(), "metadata".into()])
        );
        assert_eq!(without_status(&json!("text")), json!("text"));
    }
}
