//! 2.1 runtimes → 2.2: `mlPolicy.torch.numProcPerNode` (#3239) and `mlPolicy.torch.elasticPolicy`
//! (#3235) are gone; `TorchMLPolicySource` is empty in 2.2.0 (T@v2.1.0
//! `pkg/apis/trainer/v1alpha1/trainingruntime_types.go#L200-L244` vs T@v2.2.0 `#L209`). `torch: {}`
//! stays: its presence is what selects the torch plugin. Once the 2.2+ CRDs are installed the API
//! server drops both fields from every read and the next write (pruning), so stored runtimes need
//! no write of their own; what matters is what the fields meant.
//!
//! 2.2.0 runtimes → 2.2.1+: 2.2.0's CRDs embed Kubernetes 1.35's PodSpec (k8s.io/api v0.35.2),
//! whose alpha `workloadRef` Kubernetes 1.36 replaced with `schedulingGroup` (k8s.io/api v0.36.0
//! `core/v1/types.go#L4480-L4482`, a tombstone); 2.2.1 and 2.3.0 embed 1.36's PodSpec, so a
//! runtime's pod template `workloadRef` is an unknown field there (`kubectl apply` refuses it,
//! the API server prunes it). It does not convert: `workloadRef` names a Workload and a pod group
//! inside it, `schedulingGroup.podGroupName` a standalone PodGroup object, which nothing in the
//! runtime names. It is removed and reported lost, with what it named.

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

const SRC_WORKLOAD_REF: &str =
    "T@v2.2.0 manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml#L9875 (workloadRef; go.mod k8s.io/api v0.35.2); \
     T@v2.3.0 manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml#L7341 (schedulingGroup; k8s.io/api v0.36.2); \
     https://github.com/kubernetes/api/blob/v0.36.0/core/v1/types.go#L4480-L4499";

/// The pod templates of a runtime's replicated jobs that carry 2.2.0's `workloadRef`: (index of
/// the replicated job, its name).
fn workload_refs(runtime: &Json) -> Vec<(usize, String)> {
    let Some(jobs) = runtime.pointer("/spec/template/spec/replicatedJobs").and_then(Json::as_array) else { return Vec::new() };
    jobs.iter()
        .enumerate()
        .filter(|(_, j)| j.pointer("/template/spec/template/spec/workloadRef").is_some())
        .map(|(i, j)| (i, j.get("name").and_then(Json::as_str).unwrap_or("").to_string()))
        .collect()
}

pub fn convert(o: &Json, options: &Options) -> Option<Conversion> {
    let torch = torch(o);
    let nproc = torch.and_then(|t| t.get("numProcPerNode"));
    let elastic = torch.and_then(|t| t.get("elasticPolicy"));
    let refs = workload_refs(o);
    if nproc.is_none() && elastic.is_none() && refs.is_empty() {
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
    for (i, job) in &refs {
        let pointer = format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template/spec");
        let Some(spec) = converted.pointer_mut(&pointer).and_then(Json::as_object_mut) else { continue };
        let Some(r) = spec.remove("workloadRef") else { continue };
        let field = |k: &str| r.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let replica = match field("podGroupReplicaKey") {
            k if k.is_empty() => String::new(),
            k => format!(", replica key {k:?}"),
        };
        notes.push(Note::new(
            Level::Lost,
            format!("spec.template.spec.replicatedJobs[{i}].template.spec.template.spec.workloadRef"),
            format!(
                "removed (replicated job {job:?}: Workload {:?}, pod group {:?}{replica}): Kubernetes 1.36 replaced PodSpec.workloadRef with \
                 schedulingGroup, and the 2.2.1+ CRDs know only that, so kubectl apply refuses this field and the API server prunes it. \
                 It does not convert: schedulingGroup.podGroupName names a standalone PodGroup object, not a Workload's group. \
                 If this runtime's Pods must join a PodGroup, set schedulingGroup.podGroupName there yourself",
                field("name"),
                field("podGroup")
            ),
            SRC_WORKLOAD_REF,
        ));
    }
    let write = options.source == Source::Files;
    if !write {
        let crds = if refs.is_empty() { "2.2+" } else { "2.2.1+" };
        notes.push(Note::new(
            Level::Converted,
            "",
            format!("not in the List: once the {crds} CRDs are installed the API server drops these fields itself (pruning), and writing the runtime would make trainer-audit a co-owner of fields Helm or GitOps manage"),
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

    /// 2.2.0's CRDs carried Kubernetes 1.35's PodSpec.workloadRef; 2.2.1+ carry 1.36's
    /// schedulingGroup instead, and nothing maps one to the other: removed, reported lost.
    #[test]
    fn workload_ref_of_2_2_0_is_removed_and_named() {
        let mut r = rt(json!({}));
        r["kind"] = json!("TrainingRuntime");
        r["metadata"]["namespace"] = json!("team");
        r["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["workloadRef"] =
            json!({"name": "train", "podGroup": "workers", "podGroupReplicaKey": "r0"});
        let c = convert(&r, &Options::new(false, Source::Files)).expect("a runtime with workloadRef is converted");
        let out = c.converted.unwrap();
        let spec = &out["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
        assert!(spec.get("workloadRef").is_none(), "{spec}");
        assert_eq!(spec["containers"][0]["name"], "node", "the rest of the pod spec stays");
        assert_eq!(out["spec"]["mlPolicy"]["torch"], json!({}), "torch untouched");
        assert!(c.write);
        let lost: Vec<&Note> = c.notes.iter().filter(|n| n.level == Level::Lost).collect();
        assert_eq!(lost.len(), 1);
        assert_eq!(lost[0].path, "spec.template.spec.replicatedJobs[0].template.spec.template.spec.workloadRef");
        for part in ["\"train\"", "\"workers\"", "\"r0\"", "schedulingGroup"] {
            assert!(lost[0].text.contains(part), "{part}: {}", lost[0].text);
        }
        // From a cluster: not written (the 2.2.1+ CRDs prune it), still reported.
        let c = convert(&r, &Options::new(false, Source::Cluster)).unwrap();
        assert!(!c.write && c.notes.iter().any(|n| n.level == Level::Lost));
        // A runtime without torch is converted for its workloadRef alone.
        let mut plain = r.clone();
        plain["spec"]["mlPolicy"] = json!({"numNodes": 1});
        assert!(convert(&plain, &Options::new(false, Source::Files)).is_some());
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
