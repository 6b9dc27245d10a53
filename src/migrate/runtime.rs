//! 2.1 runtimes → 2.2: `mlPolicy.torch.numProcPerNode` (#3239) and `mlPolicy.torch.elasticPolicy`
//! (#3235) are gone; `TorchMLPolicySource` is empty in 2.2.0 (T@v2.1.0
//! `pkg/apis/trainer/v1alpha1/trainingruntime_types.go#L200-L244` vs T@v2.2.0 `#L209`). `torch: {}`
//! stays: its presence is what selects the torch plugin. Once the 2.2+ CRDs are installed the API
//! server drops both fields from every read and the next write (pruning), so stored runtimes need
//! no write of their own; what matters is what the fields meant.

use serde_json::Value as Json;

use super::output::stripped;
use super::{Conversion, Level, Note, ObjectId, Options, SchemaVerdict, Source};

const SRC_NPROC: &str = "T@v2.1.0 pkg/apis/trainer/v1alpha1/trainingruntime_types.go#L200-L208; T@v2.2.0 #L209 (#3239)";
const SRC_ELASTIC: &str =
    "T@v2.1.0 pkg/apis/trainer/v1alpha1/trainingruntime_types.go#L210-L240 (no other reference under pkg/ at v2.1.0); #3235; T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go#L109";

pub fn is_runtime(o: &Json) -> bool {
    matches!(o.get("kind").and_then(Json::as_str), Some("ClusterTrainingRuntime" | "TrainingRuntime"))
        && o.get("apiVersion").and_then(Json::as_str).is_some_and(|v| v.starts_with("trainer.kubeflow.org/"))
}

/// The runtime's `mlPolicy.torch`, when it is a torch runtime.
pub fn torch(runtime: &Json) -> Option<&Json> {
    runtime.get("spec")?.get("mlPolicy")?.get("torch").filter(|t| t.is_object())
}

/// The runtime's trainer node container resources, found as 2.1 found them: the replicated job
/// named `node` or labelled as the trainer step, container `node` (T@v2.1.0
/// `pkg/runtime/runtime.go#L233-L255`).
pub fn node_resources(runtime: &Json) -> Option<&Json> {
    let jobs = runtime.pointer("/spec/template/spec/replicatedJobs")?.as_array()?;
    jobs.iter()
        .filter(|j| {
            j.get("name").and_then(Json::as_str) == Some("node")
                || j.pointer("/template/metadata/labels/trainer.kubeflow.org~1trainjob-ancestor-step").and_then(Json::as_str)
                    == Some("trainer")
        })
        .filter_map(|j| j.pointer("/template/spec/template/spec/containers")?.as_array())
        .flatten()
        .find(|c| c.get("name").and_then(Json::as_str) == Some("node"))
        .and_then(|c| c.get("resources"))
}

pub fn convert(o: &Json, options: &Options) -> Option<Conversion> {
    let torch = torch(o)?;
    let nproc = torch.get("numProcPerNode");
    let elastic = torch.get("elasticPolicy");
    if nproc.is_none() && elastic.is_none() {
        return None;
    }
    let original = stripped(o);
    let mut converted = original.clone();
    let mut notes = Vec::new();
    if let Some(t) = converted.pointer_mut("/spec/mlPolicy/torch").and_then(Json::as_object_mut) {
        t.remove("numProcPerNode");
        t.remove("elasticPolicy");
    }
    let path = "spec.mlPolicy.torch.numProcPerNode";
    match nproc {
        None => {}
        Some(Json::String(s)) if s == "auto" => notes.push(Note::new(
            Level::Converted,
            path,
            "\"auto\" (2.1's default, stored on every 2.1 torch runtime) is removed: 2.2 TrainJobs default to auto with the same meaning",
            format!("{SRC_NPROC}; {}", super::nproc::SRC_22_AUTO),
        )),
        Some(v) => notes.push(Note::new(
            Level::Lost,
            path,
            format!(
                "{v} is removed: 2.2 runtimes have no numProcPerNode, so TrainJobs on this runtime that set none get auto instead. \
                 Converted TrainJobs in this input that relied on it now state the 2.1 value themselves; new TrainJobs must set spec.trainer.numProcPerNode"
            ),
            SRC_NPROC,
        )),
    }
    if let Some(e) = elastic {
        let fields: Vec<&str> = e.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        notes.push(Note::new(
            Level::Lost,
            "spec.mlPolicy.torch.elasticPolicy",
            format!(
                "removed with nothing in its place ({}): 2.2 and 2.3 have no elastic training (torch.go keeps a TODO for it). \
                 2.1's controller never read this field, so no behaviour changes; only the declared intent is gone",
                if fields.is_empty() { "empty".to_string() } else { fields.join(", ") }
            ),
            SRC_ELASTIC,
        ));
    }
    let write = options.source == Source::Files;
    if !write {
        notes.push(Note::new(
            Level::Converted,
            "",
            "not in the List: once the 2.2+ CRDs are installed the API server drops these fields itself (pruning), and writing the runtime would make trainer-audit a co-owner of fields Helm or GitOps manage",
            "K8s CRD structural schema pruning; seen on kube-apiserver 1.36.1",
        ));
    }
    Some(Conversion {
        id: ObjectId::of(&original),
        original,
        converted: Some(converted),
        write,
        notes,
        before_crds: Vec::new(),
        schema: SchemaVerdict::NotValidated { reason: String::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rt(torch: Json) -> Json {
        json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": {"name": "r", "resourceVersion": "9"},
               "spec": {"mlPolicy": {"numNodes": 1, "torch": torch}, "template": {"spec": {"replicatedJobs": [
                   {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node", "resources": {"limits": {"cpu": 2}}}]}}}}}]}}}})
    }

    #[test]
    fn removes_both_and_keeps_torch() {
        let c = convert(
            &rt(json!({"numProcPerNode": 4, "elasticPolicy": {"minNodes": 1, "maxNodes": 3}})),
            &Options::new(false, Source::Files),
        )
        .unwrap();
        let out = c.converted.unwrap();
        assert_eq!(out["spec"]["mlPolicy"], json!({"numNodes": 1, "torch": {}}));
        assert!(out["metadata"].get("resourceVersion").is_none());
        assert!(c.write);
        let lost: Vec<&str> = c.notes.iter().filter(|n| n.level == Level::Lost).map(|n| n.path.as_str()).collect();
        assert_eq!(lost, ["spec.mlPolicy.torch.numProcPerNode", "spec.mlPolicy.torch.elasticPolicy"]);
        assert!(c.notes[1].text.contains("maxNodes, minNodes") || c.notes[1].text.contains("minNodes, maxNodes"));
    }

    #[test]
    fn auto_is_converted_and_cluster_runtimes_are_not_written() {
        let c = convert(&rt(json!({"numProcPerNode": "auto"})), &Options::new(false, Source::Cluster)).unwrap();
        assert!(!c.write);
        assert!(c.notes.iter().all(|n| n.level == Level::Converted));
        assert!(convert(&rt(json!({})), &Options::new(false, Source::Files)).is_none());
        assert_eq!(node_resources(&rt(json!({}))), Some(&json!({"limits": {"cpu": 2}})));
    }
}
