//! The API server's version against the target's CRDs: a CEL rule that reads a field named
//! `namespace` (a CEL reserved word, as in `self.metadata.namespace`) compiles only in the CEL
//! environment of kube-apiserver 1.32 and later — observed on the real API servers by `cargo xtask
//! kube-versions`: kube-apiserver v1.31.14 refuses the Trainer 2.2 and 2.3 CRDs with `undefined
//! field 'namespace'`, v1.32.13 creates them. The rules are read in the target chart's CRDs, not
//! in trainer-audit's rules. An upgrade that cannot create or update its CRDs fails.

use serde_json::Value as Json;

use super::{Failure, Situation};

/// Whether a CRD has a CEL rule reading a `namespace` field.
fn reads_namespace(v: &Json) -> bool {
    match v {
        Json::Object(m) => {
            let rules = m.get("x-kubernetes-validations").and_then(Json::as_array).into_iter().flatten();
            rules.filter_map(|r| r["rule"].as_str()).any(|r| r.contains(".namespace")) || m.values().any(reads_namespace)
        }
        Json::Array(a) => a.iter().any(reads_namespace),
        _ => false,
    }
}

pub fn failures(s: &Situation) -> Vec<Failure> {
    let (Some(kube), Some(target)) = (&s.state.kube, &s.target) else { return Vec::new() };
    let Some(minor) = kube.split('.').nth(1).and_then(|m| m.parse::<u64>().ok()) else { return Vec::new() };
    if minor >= 32 || !s.upgrade_runs {
        return Vec::new();
    }
    let crds = target.objects.iter().chain(&target.crds).filter(|o| o["kind"] == "CustomResourceDefinition");
    let mut names: Vec<&str> =
        crds.filter(|c| reads_namespace(c)).filter_map(|c| c.pointer("/metadata/name").and_then(Json::as_str)).collect();
    if names.is_empty() {
        return Vec::new();
    }
    names.sort();
    vec![Failure {
        class: "kube-version",
        area: "other",
        what: format!(
            "kube-apiserver {kube} refuses {} of Trainer {} (a CEL rule reads `.namespace`: undefined field 'namespace' before 1.32)",
            names.join(", "),
            target.version
        ),
        named_by: vec!["TA-K8S-001".into()],
    }]
}
