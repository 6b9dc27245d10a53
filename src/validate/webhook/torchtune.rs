//! The torch plugin's TorchTune checks, for a TrainJob whose trainer command is exactly
//! `tune run` on a runtime with a torch policy (kubeflow/trainer v2.3.0
//! `pkg/runtime/framework/plugins/torch/torch.go` L79-L84, `torchtune.go` L35-L50 and L199-L205):
//! the model named by the runtime's name (`torchtune-llama3.2-1b` → `llama3_2/1B`) must be one
//! TorchTune supports, and only `llama3_3/70B` may run on more than one node. The QLoRA checks
//! (`torchtune.go` L61-L75, which depend on the recipe the arguments select) are not modelled.

use serde_json::Value;

const SUPPORTED: [&str; 4] = ["llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"];

/// `getModelFromRuntimeRef`: three dash-separated parts, the second with `.` → `_`, the third
/// upper-cased; anything else is the empty model.
fn model(runtime_name: &str) -> String {
    let f: Vec<&str> = runtime_name.split('-').collect();
    if f.len() != 3 {
        return String::new();
    }
    format!("{}/{}", f[1].replace('.', "_"), f[2].to_uppercase())
}

pub fn refusals(runtime: &Value, job: &Value) -> Vec<(String, String)> {
    let torch = runtime.pointer("/spec/mlPolicy/torch").is_some_and(|t| !t.is_null());
    let command: Vec<&str> =
        job.pointer("/spec/trainer/command").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if !torch || command != ["tune", "run"] {
        return Vec::new();
    }
    let name = job.pointer("/spec/runtimeRef/name").and_then(Value::as_str).unwrap_or_default();
    let model = model(name);
    let mut out = Vec::new();
    if !SUPPORTED.contains(&model.as_str()) {
        out.push(("spec.runtimeRef.name".into(), format!("must have a supported pretrained model, invalid model configured: {model}")));
    }
    let nodes = job.pointer("/spec/trainer/numNodes").and_then(Value::as_i64).unwrap_or(1);
    if nodes > 1 && model != "llama3_3/70B" {
        out.push(("spec.trainer.numNodes".into(), format!("must be 1 for {model} model")));
    }
    out
}
