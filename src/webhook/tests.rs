use serde_json::{json, Value};

use super::*;

fn torch_runtime() -> Value {
    json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": {"name": "torch-distributed"},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
            {"name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
              "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "x"}]}}}}}]}}}})
}

fn job(spec: Value) -> Value {
    json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "j", "namespace": "team-a"}, "spec": spec})
}

fn details(r: &[Refusal]) -> Vec<String> {
    r.iter().map(ToString::to_string).collect()
}

#[test]
fn a_valid_trainjob_and_runtime_pass() {
    let rt = torch_runtime();
    let rts = Runtimes(vec![&rt]);
    assert!(trainjob(&job(json!({"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}})), &rts).is_empty());
    assert!(runtime(&rt, Operation::Create).is_empty());
}

#[test]
fn a_missing_runtime_is_refused_with_the_webhooks_words() {
    let r = trainjob(&job(json!({"runtimeRef": {"name": "gone"}})), &Runtimes::default());
    assert_eq!(
        details(&r),
        ["spec.RuntimeRef: ClusterTrainingRuntime.trainer.kubeflow.org \"gone\" not found: specified clusterTrainingRuntime must be created before the TrainJob is created"]
    );
    let r = trainjob(&job(json!({"runtimeRef": {"name": "x", "kind": "Foo"}})), &Runtimes::default());
    assert_eq!(details(&r), ["unsupported runtime: Foo.trainer.kubeflow.org"]);
}

#[test]
fn reserved_envs_and_patches() {
    let rt = torch_runtime();
    let rts = Runtimes(vec![&rt]);
    let r = trainjob(
        &job(json!({"runtimeRef": {"name": "torch-distributed"}, "trainer": {"env": [{"name": "PET_NODE_RANK"}, {"name": "PET_NNODES"}]}})),
        &rts,
    );
    assert_eq!(details(&r), ["spec.trainer.env: must not have reserved envs, invalid envs configured: [PET_NNODES PET_NODE_RANK]"]);
    let patch = |manager: &str, container: &str| {
        job(
            json!({"runtimeRef": {"name": "torch-distributed"}, "runtimePatches": [{"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
            {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": container, "env": [{"name": "A", "value": "1"}]}]}}}}}]}}}}]}),
        )
    };
    assert!(trainjob(&patch("example.com/me", "sidecar"), &rts).is_empty(), "a new container is merged in, not refused");
    assert_eq!(details(&trainjob(&patch("example.com/me", "node"), &rts)).len(), 1);
    assert_eq!(
        details(&trainjob(&patch("kueue", "sidecar"), &rts)),
        ["spec.runtimePatches.manager: must be a domain-prefixed path (such as \"acme.io/foo\")"]
    );
}

#[test]
fn initializers_and_torchtune() {
    let rt = torch_runtime();
    let rts = Runtimes(vec![&rt]);
    let r =
        trainjob(&job(json!({"runtimeRef": {"name": "torch-distributed"}, "initializer": {"dataset": {"storageUri": "hf://x"}}})), &rts);
    assert_eq!(details(&r), ["spec.runtimeRef: must have dataset-initializer job when trainJob is configured with input datasetConfig"]);
    let r =
        trainjob(&job(json!({"runtimeRef": {"name": "torch-distributed"}, "trainer": {"command": ["tune", "run"], "numNodes": 2}})), &rts);
    assert_eq!(
        details(&r),
        [
            "spec.runtimeRef.name: must have a supported pretrained model, invalid model configured: ",
            "spec.trainer.numNodes: must be 1 for  model"
        ]
    );
}

#[test]
fn runtime_replicated_jobs_and_the_bypass_label() {
    let mut rt = torch_runtime();
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = json!(2);
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = json!("trainer");
    let r = runtime(&rt, Operation::Create);
    assert_eq!(
        details(&r),
        [
            "spec.template.spec.replicatedJobs[0].replicas: always must be 1",
            "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: must contain the required container for the ancestor: trainer"
        ]
    );
    assert!(r.iter().all(|x| x.webhook == CLUSTER_RUNTIME_WEBHOOK));
    rt["kind"] = json!("TrainingRuntime");
    assert!(runtime(&rt, Operation::Update).is_empty(), "the TrainingRuntime webhook validates creates only");
    rt["metadata"]["labels"] = json!({"trainer.kubeflow.org/webhook-validation": "disabled"});
    assert!(runtime(&rt, Operation::Create).is_empty());
}

#[test]
fn a_wrongly_typed_trainjob_is_refused_by_the_defaulter() {
    use kube_validate::{BadValue, ErrorKind, FieldError};
    let e = FieldError::new(
        ErrorKind::TypeInvalid,
        "spec.trainer.numNodes",
        BadValue::Str("string".into()),
        "spec.trainer.numNodes in body must be of type integer: \"string\"",
    );
    let r = trainjob_undecodable(&json!({}), &[e]).unwrap();
    assert_eq!(r.webhook, DEFAULTING_WEBHOOK);
    assert_eq!(r.to_string(), "spec.trainer.numNodes: json: cannot unmarshal string into Go struct field");
    let null =
        FieldError::new(ErrorKind::TypeInvalid, "spec.x", BadValue::Str("null".into()), "spec.x in body must be of type integer: \"null\"");
    assert!(trainjob_undecodable(&json!({}), &[null]).is_none());
}

#[test]
fn runtime_patches_change_only_while_suspended() {
    let rt = torch_runtime();
    let rts = Runtimes(vec![&rt]);
    let old = job(json!({"runtimeRef": {"name": "torch-distributed"}}));
    let mut new = old.clone();
    new["spec"]["runtimePatches"] =
        json!([{"manager": "example.com/x", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"a": "b"}}}}}]);
    assert_eq!(trainjob_update(&old, &new, &rts).len(), 1);
    new["spec"]["suspend"] = json!(true);
    assert!(trainjob_update(&old, &new, &rts).is_empty());
    let mut timed = new.clone();
    timed["spec"]["runtimePatches"][0]["time"] = json!("2026-12-03T00:00:00Z");
    timed["spec"]["suspend"] = json!(false);
    let mut same = new.clone();
    same["spec"]["suspend"] = json!(false);
    assert!(trainjob_update(&timed, &same, &rts).is_empty(), "only the time differs");
}

#[test]
fn qlora_on_torchtune_runtimes() {
    let mut rt = torch_runtime();
    rt["metadata"]["name"] = json!("torchtune-qwen2.5-1.5b");
    let qwen = Runtimes(vec![&rt]);
    let tune = |name: &str| {
        job(json!({"runtimeRef": {"name": name}, "trainer": {"command": ["tune", "run"], "args": ["model.quantize_base=True"]}}))
    };
    assert_eq!(
        details(&trainjob(&tune("torchtune-qwen2.5-1.5b"), &qwen)),
        ["spec.runtimeRef.name: QLoRA is not supported for qwen2_5/1.5B model"]
    );
    rt["metadata"]["name"] = json!("torchtune-llama3.2-1b");
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"limits": {"nvidia.com/gpu": 2}});
    let llama = Runtimes(vec![&rt]);
    assert_eq!(trainjob(&tune("torchtune-llama3.2-1b"), &llama).len(), 2);
    let mut one = tune("torchtune-llama3.2-1b");
    one["spec"]["trainer"]["numProcPerNode"] = json!(1);
    assert!(trainjob(&one, &llama).is_empty(), "one process per node is the single-device recipe");
}

/// A Volcano copy of torch-distributed whose replicated jobs name these PriorityClasses, in order.
fn volcano_runtime(classes: &[&str]) -> Value {
    let mut rt = torch_runtime();
    rt["metadata"]["name"] = json!("volcano");
    rt["spec"]["podGroupPolicy"] = json!({"volcano": {}});
    let first = rt["spec"]["template"]["spec"]["replicatedJobs"][0].clone();
    let jobs: Vec<Value> = classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut j = first.clone();
            j["name"] = json!(format!("job-{i}"));
            j["template"]["spec"]["template"]["spec"]["priorityClassName"] = json!(c);
            j
        })
        .collect();
    rt["spec"]["template"]["spec"]["replicatedJobs"] = json!(jobs);
    rt
}

#[test]
fn the_volcano_plugin_looks_up_priority_classes_until_a_reserved_one() {
    assert_eq!(priority_lookups(&volcano_runtime(&["team-high", "team-low"])), ["team-high", "team-low"]);
    // volcano.go returns from its loop at the first reserved name: the jobs after it are not looked up.
    assert_eq!(priority_lookups(&volcano_runtime(&["team-high", "system-node-critical", "team-low"])), ["team-high"]);
    assert!(priority_lookups(&volcano_runtime(&["system-cluster-critical", "team-low"])).is_empty());
    // Not a Volcano runtime: no lookup.
    let mut plain = volcano_runtime(&["team-high"]);
    plain["spec"].as_object_mut().unwrap().remove("podGroupPolicy");
    assert!(priority_lookups(&plain).is_empty());
}

#[test]
fn the_call_fails_only_when_the_manager_cannot_read_priority_classes() {
    let rt = volcano_runtime(&["team-high"]);
    let rts = Runtimes(vec![&rt]);
    let tj = job(json!({"runtimeRef": {"name": "volcano"}}));
    let failed = trainjob_call_fails(&tj, &rts, false).expect("the lookup hangs");
    assert_eq!(failed.webhook, TRAINJOB_WEBHOOK);
    assert!(failed.reason.contains("\"team-high\""), "{}", failed.reason);
    assert_eq!(trainjob_call_fails(&tj, &rts, true), None);
    // A runtime that is not found never reaches the plugin; a reserved class is never looked up.
    assert_eq!(trainjob_call_fails(&job(json!({"runtimeRef": {"name": "gone"}})), &rts, false), None);
    let reserved = volcano_runtime(&["system-node-critical"]);
    assert_eq!(trainjob_call_fails(&tj, &Runtimes(vec![&reserved]), false), None);
}
