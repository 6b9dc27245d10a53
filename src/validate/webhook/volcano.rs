//! The Volcano plugin's checks of a TrainJob on a runtime with `podGroupPolicy.volcano`
//! (kubeflow/trainer v2.3.0 `pkg/runtime/framework/plugins/volcano/volcano.go` L87-L127): the
//! queue annotation `scheduling.volcano.sh/queue-name`, when the runtime's (or a runtime patch's)
//! JobSet template metadata sets it, must not be empty. The plugin also refuses a pod template
//! whose `priorityClassName` names no PriorityClass in the cluster; trainer-audit does not read
//! PriorityClasses, so that check is not modelled.

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
