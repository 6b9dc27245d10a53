//! The runtime webhooks' one check (`validateReplicatedJobs`, kubeflow/trainer v2.3.0
//! `pkg/webhooks/trainingruntime_webhook.go` L66-L105): a replicatedJob whose template carries the
//! `trainer.kubeflow.org/trainjob-ancestor-step` label with a known ancestor must have exactly one
//! replica and the ancestor's container (`node` for the trainer, the initializer's own name for
//! `dataset-initializer` and `model-initializer`).

use serde_json::Value;

use super::items;

const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";

/// The container each ancestor's replicatedJob must hold.
fn required_container(ancestor: &str) -> Option<&'static str> {
    match ancestor {
        "trainer" => Some("node"),
        "dataset-initializer" => Some("dataset-initializer"),
        "model-initializer" => Some("model-initializer"),
        _ => None,
    }
}

pub fn refusals(runtime: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, job) in items(runtime, &["spec", "template", "spec", "replicatedJobs"]).enumerate() {
        let Some(ancestor) =
            job.pointer(&format!("/template/metadata/labels/{}", ANCESTOR_LABEL.replace('/', "~1"))).and_then(Value::as_str)
        else {
            continue;
        };
        let Some(container) = required_container(ancestor) else { continue };
        let path = format!("spec.template.spec.replicatedJobs[{i}]");
        // The CRD defaults replicas to 1.
        let replicas = job.get("replicas").and_then(Value::as_i64).unwrap_or(1);
        if replicas != 1 {
            out.push((format!("{path}.replicas"), "always must be 1".to_string()));
        }
        if !items(job, &["template", "spec", "template", "spec", "containers"])
            .any(|c| c.get("name").and_then(Value::as_str) == Some(container))
        {
            out.push((
                format!("{path}.template.spec.template.spec.containers"),
                format!("must contain the required container for the ancestor: {ancestor}"),
            ));
        }
    }
    out
}
