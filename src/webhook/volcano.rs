//! The Volcano plugin's checks of a TrainJob on a runtime with `podGroupPolicy.volcano`
//! (kubeflow/trainer v2.3.0 `pkg/runtime/framework/plugins/volcano/volcano.go` L87-L127): the
//! queue annotation `scheduling.volcano.sh/queue-name`, when the runtime's (or a runtime patch's)
//! JobSet template metadata sets it, must not be empty. The plugin also looks up the PriorityClass
//! each replicated job's pod template names (L104-L124, through the manager's cached client): a
//! missing class is refused, which trainer-audit does not model (it reads no PriorityClasses), but
//! when the manager may not list and watch `priorityclasses` the lookup never returns and the call
//! to the webhook fails ([`priority_lookups`], rule TA-NB-010).

use serde_json::Value;

use super::items;

const QUEUE: &str = "scheduling.volcano.sh/queue-name";

pub fn refusals(runtime: &Value, job: &Value) -> Vec<(String, String)> {
    if runtime.pointer("/spec/podGroupPolicy/volcano").is_none_or(Value::is_null) {
        return Vec::new();
    }
    // The propagated annotations: the runtime template's, then each patch's over them.
    let mut queue = runtime.pointer("/spec/template/metadata/annotations").and_then(|a| a.get(QUEUE)).and_then(Value::as_str);
    for p in items(job, &["spec", "runtimePatches"]) {
        if let Some(q) = p.pointer("/trainingRuntimeSpec/template/metadata/annotations").and_then(|a| a.get(QUEUE)).and_then(Value::as_str)
        {
            queue = Some(q);
        }
    }
    match queue {
        Some("") => vec![(format!("spec.annotations[{QUEUE}]"), "Volcano queue name must not be empty".into())],
        _ => Vec::new(),
    }
}

/// The PriorityClasses the Volcano plugin looks up for a TrainJob on `runtime`, in the order it
/// looks them up: the `priorityClassName` of each replicated job's pod template, as the runtime
/// defines it (runtimePatches that set one are not read). Only `system-cluster-critical` and
/// `system-node-critical` are not looked up, and the plugin stops at the first of them (it
/// returns from the loop), so the jobs after it are not looked up either.
pub fn priority_lookups(runtime: &Value) -> Vec<String> {
    if runtime.pointer("/spec/podGroupPolicy/volcano").is_none_or(Value::is_null) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for job in items(runtime, &["spec", "template", "spec", "replicatedJobs"]) {
        let Some(name) = job.pointer("/template/spec/template/spec/priorityClassName").and_then(Value::as_str) else { continue };
        if matches!(name, "system-cluster-critical" | "system-node-critical") {
            break;
        }
        out.push(name.to_string());
    }
    out
}
