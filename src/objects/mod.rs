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
