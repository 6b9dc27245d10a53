//! The torch plugin's TorchTune checks, for a TrainJob whose trainer command is exactly
//! `tune run` on a runtime with a torch policy (kubeflow/trainer v2.3.0
//! `pkg/runtime/framework/plugins/torch/torch.go` L79-L84, `torchtune.go` L35-L50 and L199-L205):
//! the model named by the runtime's name (`torchtune-llama3.2-1b` → `llama3_2/1B`) must be one
//! TorchTune supports, and only `llama3_3/70B` may run on more than one node. With QLoRA asked
//! for (`model.quantize_base=True` and no `model.use_dora=True`, `torchtune.go` L145-L169) on one
//! node, the config the recipe selects (`getRecipeAndConfig`, L108-L133, from the node count,
//! `numProcPerNode` and the GPUs per node — the TrainJob's `resourcesPerNode`, else the runtime's
//! trainer container, `pkg/runtime/runtime.go` L253-L298) decides L61-L75: QLoRA is refused for
//! `qwen2_5/1.5B`, and the Llama 3.2 models need one device.

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
    let args: Vec<&str> =
        job.pointer("/spec/trainer/args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let qlora = !bool_arg(&args, "model.use_dora") && bool_arg(&args, "model.quantize_base");
    if nodes == 1 && qlora {
        let procs = job.pointer("/spec/trainer/numProcPerNode").and_then(Value::as_i64);
        let single_device = procs == Some(1) || gpus_per_node(runtime, job) == 1;
        if model == "qwen2_5/1.5B" {
            out.push(("spec.runtimeRef.name".into(), format!("QLoRA is not supported for {model} model")));
        }
        if !single_device && (model == "llama3_2/1B" || model == "llama3_2/3B") {
            out.push(("spec.trainer.numProcPerNode".into(), format!("must be auto or 1 for {model} model when using QLoRA")));
            out.push((
                "spec.trainer.resourcesPerNode".into(),
                format!("must have gpu resource with value 1 for {model} model when using QLoRA"),
            ));
        }
    }
    out
}

/// `isBoolArgEnabled`: a `key=value` argument whose key contains `item` and whose value is
/// `true` in any case.
fn bool_arg(args: &[&str], item: &str) -> bool {
    args.iter().any(|a| a.split_once('=').is_some_and(|(k, v)| k.contains(item) && v.trim().eq_ignore_ascii_case("true")))
}

/// `GetNumGPUPerNode` of the TrainJob's `resourcesPerNode`, else of the runtime's `node`
/// container in the `node` or trainer-ancestor job: the first resource whose name contains
/// `gpu`, requests before limits.
fn gpus_per_node(runtime: &Value, job: &Value) -> i64 {
    let resources = job.pointer("/spec/trainer/resourcesPerNode").filter(|r| !r.is_null()).cloned().or_else(|| {
        runtime.pointer("/spec/template/spec/replicatedJobs").and_then(Value::as_array)?.iter().find_map(|j| {
            let trainer = j.get("name").and_then(Value::as_str) == Some("node")
                || j.pointer("/template/metadata/labels/trainer.kubeflow.org~1trainjob-ancestor-step").and_then(Value::as_str)
                    == Some("trainer");
            if !trainer {
                return None;
            }
            j.pointer("/template/spec/template/spec/containers")?
                .as_array()?
                .iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some("node") && c.get("resources").is_some())
                .and_then(|c| c.get("resources").cloned())
        })
    });
    let Some(r) = resources else { return 0 };
    let count = |list: Option<&Value>| {
        list.and_then(Value::as_object)
            .and_then(|m| m.iter().find(|(k, _)| k.to_ascii_lowercase().contains("gpu")))
            .map(|(_, q)| quantity(q))
            .unwrap_or(0)
    };
    match count(r.get("requests")) {
        0 => count(r.get("limits")),
        n => n,
    }
}

/// A whole-number quantity (`2`, `"2"`), rounded up as `Quantity.Value()` does; 0 otherwise.
fn quantity(q: &Value) -> i64 {
    match q {
        Value::Number(n) => n.as_f64().map(|f| f.ceil() as i64).unwrap_or(0),
        Value::String(s) => s.trim().parse::<f64>().map(|f| f.ceil() as i64).unwrap_or(0),
        _ => 0,
    }
}
