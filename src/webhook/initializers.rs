//! The JobSet plugin's initializer checks (kubeflow/trainer v2.3.0
//! `pkg/runtime/framework/plugins/jobset/jobset.go` L112-L170): a TrainJob that sets
//! `spec.initializer.dataset` (or `.model`) needs a runtime with a `dataset-initializer` (or
//! `model-initializer`) replicatedJob holding a container of that name with a volumeMount named
//! `initializer`.

use serde_json::Value;

use super::Template;

pub fn refusals(template: &Template, job: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, name, config) in [("dataset", "dataset-initializer", "datasetConfig"), ("model", "model-initializer", "modelConfig")] {
        if job.pointer(&format!("/spec/initializer/{key}")).is_none_or(Value::is_null) {
            continue;
        }
        let field = "spec.runtimeRef".to_string();
        match template.job(name) {
            None => out.push((field, format!("must have {name} job when trainJob is configured with input {config}"))),
            Some(j) if !j.has_container(name) => out.push((field, format!("must have container with name - {name} in the {name} job"))),
            Some(j) => {
                let mounted = j.containers.iter().filter(|c| c.name == name).any(|c| c.volume_mounts.iter().any(|m| m == "initializer"));
                if !mounted {
                    out.push((field, format!("must have volumeMount with name - initializer in container {name} of the {name} job")));
                }
            }
        }
    }
    out
}
