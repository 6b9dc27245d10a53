//! The TrainJob webhook's first step: the runtime the TrainJob names must be a kind the
//! manager registers and must exist. kubeflow/trainer v2.3.0 `pkg/webhooks/trainjob_webhook.go`
//! L110-L121 (`unsupported runtime: %s`), `pkg/runtime/core/registry.go` L34-L44 (the two kinds),
//! `pkg/runtime/core/clustertrainingruntime.go` L99-L108 and `pkg/runtime/core/trainingruntime.go`
//! L304-L314 (`specified … must be created before the TrainJob is created`).

use serde_json::Value;

use super::Runtimes;
use crate::objects::str_at;

const GROUP: &str = "trainer.kubeflow.org";

/// The stored runtime, or the (field, detail) the webhook refuses with.
pub fn resolve<'a>(job: &Value, runtimes: &Runtimes<'a>) -> Result<&'a Value, (String, String)> {
    let r = job.pointer("/spec/runtimeRef").unwrap_or(&Value::Null);
    // The CRD defaults both when absent (kind ClusterTrainingRuntime, apiGroup trainer.kubeflow.org).
    let kind = r.get("kind").and_then(Value::as_str).unwrap_or("ClusterTrainingRuntime");
    let group = r.get("apiGroup").and_then(Value::as_str).unwrap_or(GROUP);
    let name = str_at(r, &["name"]);
    let namespace = str_at(job, &["metadata", "namespace"]);
    let (field, what) = match (group, kind) {
        (GROUP, "ClusterTrainingRuntime") => ("spec.RuntimeRef", "clusterTrainingRuntime"),
        (GROUP, "TrainingRuntime") => ("spec.runtimeRef", "trainingRuntime"),
        _ => {
            // schema.GroupKind.String(): "Kind.group", or "Kind" when the group is empty.
            let gk = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
            return Err((String::new(), format!("unsupported runtime: {gk}")));
        }
    };
    let ns = if kind == "TrainingRuntime" { namespace } else { "" };
    runtimes.get(kind, ns, name).ok_or_else(|| {
        (field.to_string(), format!("{kind}.{GROUP} {name:?} not found: specified {what} must be created before the TrainJob is created"))
    })
}
