//! Object corpus for the webhook differential (Trainer 2.3.0's validating webhooks against
//! trainer-audit's model of them): from the runtimes a cluster holds, a valid TrainJob on each
//! and one mutation per refusal the 2.3.0 webhooks make (kubeflow/trainer v2.3.0 `pkg/webhooks/`
//! and the runtime framework plugins' `Validate`): reserved envs of each ML policy, initializers
//! the runtime cannot serve, runtimePatches with a manager that is no domain-prefixed path or
//! envs on the trainer's containers, TorchTune's entrypoint, runtime references that resolve to
//! nothing; and per runtime a copy as a user's ClusterTrainingRuntime and TrainingRuntime, valid
//! and with each replicatedJobs refusal (replicas, the ancestor's container), with and without the
//! label that makes the runtime webhooks skip it. Mutations the model predicts to be admitted
//! (a patch adding a container or a job, another policy's reserved env) are in it too: a
//! prediction of admission is checked as much as one of refusal.

use serde_json::{json, Value};

/// One object to send as a dry-run create (or, with `update`, a dry-run update of the stored
/// object of that name).
#[derive(Debug, Clone)]
pub struct Case {
    /// `<runtime>/<mutation>`, unique.
    pub name: String,
    pub object: Value,
    pub update: bool,
}

pub const NAMESPACE: &str = "team-a";
/// A namespace without the TrainingRuntimes of [`NAMESPACE`].
pub const OTHER_NAMESPACE: &str = "team-b";
const GROUP_VERSION: &str = "trainer.kubeflow.org/v1alpha1";
const BYPASS: &str = "trainer.kubeflow.org/webhook-validation";

fn object_name(case: &str) -> String {
    let mut s: String = case.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    s.truncate(63);
    s.trim_matches('-').to_string()
}

/// A TrainJob named after the case, on `runtime_ref`, with `spec` merged over a minimal trainer.
pub fn trainjob(case: &str, namespace: &str, runtime_ref: Value, extra: Value) -> Case {
    let mut spec = json!({"runtimeRef": runtime_ref, "trainer": {"image": "registry.example.com/team-a/train:1.4", "numNodes": 1}});
    merge(&mut spec, extra);
    Case {
        name: case.to_string(),
        object: json!({"apiVersion": GROUP_VERSION, "kind": "TrainJob", "metadata": {"name": object_name(case), "namespace": namespace}, "spec": spec}),
        update: false,
    }
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(x) if x.is_object() && v.is_object() => merge(x, v),
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn env(name: &str) -> Value {
    json!({"trainer": {"env": [{"name": "TEAM", "value": "a"}, {"name": name, "value": "1"}]}})
}

fn patch(manager: &str, job: &str, container: &str, with_env: bool) -> Value {
    let mut c = json!({"name": container, "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]});
    if with_env {
        c["env"] = json!([{"name": "EXTRA", "value": "1"}]);
    }
    json!({"runtimePatches": [{"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
        {"name": job, "template": {"spec": {"template": {"spec": {"containers": [c]}}}}}]}}}}]})
}

/// TrainJob mutations on one runtime (`kind` ClusterTrainingRuntime or TrainingRuntime).
pub fn trainjobs_on(runtime: &str, kind: &str) -> Vec<Case> {
    let r = json!({"name": runtime, "kind": kind});
    let c = |m: &str, extra: Value| trainjob(&format!("{runtime}/{m}"), NAMESPACE, r.clone(), extra);
    vec![
        c("valid", json!({})),
        c("valid-2-nodes", json!({"trainer": {"numNodes": 2}})),
        c("torch-reserved-env", env("PET_NNODES")),
        c("mpi-reserved-env", env("OMPI_MCA_plm_rsh_args")),
        c("xgboost-reserved-env", env("DMLC_TASK_ID")),
        c("dataset-initializer", json!({"initializer": {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}}})),
        c("model-initializer", json!({"initializer": {"model": {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"}}})),
        c("patch-env-on-node", patch("example.com/team-a", "node", "node", true)),
        c("patch-new-container", patch("example.com/team-a", "node", "sidecar", true)),
        c("patch-new-job", patch("example.com/team-a", "extra", "extra", false)),
        c("patch-manager-not-a-path", patch("team-a", "node", "node", false)),
        c("patch-manager-bad-host", patch("Team_A.example.com/x", "node", "node", false)),
        c("tune-run", json!({"trainer": {"command": ["tune", "run"]}})),
        c("tune-run-2-nodes", json!({"trainer": {"command": ["tune", "run"], "numNodes": 2}})),
        c("tune-run-qlora", json!({"trainer": {"command": ["tune", "run"], "args": ["model.quantize_base=True"]}})),
        c("flux-zero-procs", json!({"trainer": {"numProcPerNode": 0}})),
    ]
}

/// TrainJobs whose runtime reference resolves to nothing the webhook knows.
pub fn dangling_references(cluster_runtime: &str, namespaced_runtime: &str) -> Vec<Case> {
    vec![
        trainjob("missing/cluster-runtime", NAMESPACE, json!({"name": "torch-distributed-deleted"}), json!({})),
        trainjob("missing/training-runtime", NAMESPACE, json!({"name": "no-such-runtime", "kind": "TrainingRuntime"}), json!({})),
        trainjob(
            "missing/training-runtime-other-namespace",
            OTHER_NAMESPACE,
            json!({"name": namespaced_runtime, "kind": "TrainingRuntime"}),
            json!({}),
        ),
        trainjob("unsupported/kind", NAMESPACE, json!({"name": cluster_runtime, "kind": "PyTorchJob"}), json!({})),
        trainjob("unsupported/api-group", NAMESPACE, json!({"name": cluster_runtime, "apiGroup": "example.com"}), json!({})),
        // The API server's own validation (schema, CEL), after the mutating webhook.
        trainjob("schema/no-runtime-name", NAMESPACE, json!({"kind": "ClusterTrainingRuntime"}), json!({})),
        // Values of the wrong JSON type: the mutating webhook cannot decode them, and it runs first.
        trainjob("decode/num-nodes-string", NAMESPACE, json!({"name": cluster_runtime}), json!({"trainer": {"numNodes": "two"}})),
        trainjob("decode/env-a-string", NAMESPACE, json!({"name": cluster_runtime}), json!({"trainer": {"env": "A=1"}})),
        trainjob("decode/suspend-string", NAMESPACE, json!({"name": cluster_runtime}), json!({"suspend": "yes"})),
    ]
}

/// A stored, running TrainJob given a runtime patch: the 2.3.0 webhook lets runtimePatches change
/// only while the TrainJob is suspended (before or after the update).
pub fn patched_while_running(stored: &Value) -> Case {
    let mut object = stored.clone();
    object["spec"]["runtimePatches"] =
        json!([{"manager": "example.com/team-a", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"team": "a"}}}}}]);
    if let Some(m) = object["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    Case { name: "update/runtime-patches-while-running".into(), object, update: true }
}

/// A runtime the CRD's CEL refuses (two ML policies), as each runtime kind: the API server's
/// refusal, the runtime webhooks being validating ones that run after it.
pub fn schema_runtimes(spec: &Value) -> Vec<Case> {
    let mut two = spec.clone();
    two["mlPolicy"]["mpi"] = json!({"runLauncherAsNode": false});
    two["mlPolicy"]["torch"] = json!({});
    vec![
        runtime_copy("schema/ctr-two-policies", "ClusterTrainingRuntime", &two, json!({"team": "a"})),
        runtime_copy("schema/tr-two-policies", "TrainingRuntime", &two, json!({"team": "a"})),
    ]
}

/// A user's copy of a runtime's spec as `kind` (`namespace` for a TrainingRuntime), with
/// `labels`.
fn runtime_copy(case: &str, kind: &str, spec: &Value, labels: Value) -> Case {
    let mut metadata = json!({"name": object_name(case), "labels": labels});
    if kind == "TrainingRuntime" {
        metadata["namespace"] = json!(NAMESPACE);
    }
    Case {
        name: case.to_string(),
        object: json!({"apiVersion": GROUP_VERSION, "kind": kind, "metadata": metadata, "spec": spec}),
        update: false,
    }
}

/// Copies of one runtime's spec, valid and mutated, as both runtime kinds.
pub fn runtimes_from(name: &str, spec: &Value) -> Vec<Case> {
    let jobs = spec.pointer("/template/spec/replicatedJobs").and_then(Value::as_array).cloned().unwrap_or_default();
    // The first replicatedJob that names an ancestor: what the runtime webhooks check.
    let ancestor = jobs.iter().position(|j| j.pointer("/template/metadata/labels/trainer.kubeflow.org~1trainjob-ancestor-step").is_some());
    let mut variants: Vec<(&str, Value)> = vec![("valid", spec.clone())];
    if let Some(i) = ancestor {
        let mut replicas = spec.clone();
        replicas["template"]["spec"]["replicatedJobs"][i]["replicas"] = json!(2);
        variants.push(("replicas-2", replicas));
        let mut renamed = spec.clone();
        if let Some(cs) = renamed
            .pointer_mut(&format!("/template/spec/replicatedJobs/{i}/template/spec/template/spec/containers"))
            .and_then(Value::as_array_mut)
        {
            for c in cs {
                let n = c["name"].as_str().unwrap_or_default().to_string();
                c["name"] = json!(format!("{n}-renamed"));
            }
        }
        variants.push(("container-renamed", renamed));
    }
    let mut out = Vec::new();
    for (kind, short) in [("ClusterTrainingRuntime", "ctr"), ("TrainingRuntime", "tr")] {
        for (m, s) in &variants {
            out.push(runtime_copy(&format!("{name}/{short}-{m}"), kind, s, json!({"team": "a"})));
            if *m != "valid" {
                out.push(runtime_copy(&format!("{name}/{short}-{m}-bypassed"), kind, s, json!({BYPASS: "disabled"})));
            }
        }
    }
    out
}

/// A torch runtime gang-scheduled by Volcano, with these template annotations and the trainer
/// pod's priority class.
fn volcano(name: &str, annotations: Value, priority: Option<&str>) -> Value {
    let mut pod = json!({"containers": [{"name": "node", "image": "registry.example.com/team-a/train:1.4"}]});
    if let Some(p) = priority {
        pod["priorityClassName"] = json!(p);
    }
    json!({"apiVersion": GROUP_VERSION, "kind": "ClusterTrainingRuntime", "metadata": {"name": name},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "podGroupPolicy": {"volcano": {}},
            "template": {"metadata": {"annotations": annotations}, "spec": {"replicatedJobs": [
                {"name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                    "spec": {"template": {"spec": pod}}}}]}}}})
}

/// Runtimes a user might write, created for real before the corpus runs, so that TrainJobs can
/// name them: a TrainingRuntime copy of torch-distributed, an MPI runtime that runs its launcher
/// as a node without a `launcher` job, a torch runtime injecting PET_* envs into a container it
/// does not have, a Flux runtime with a reserved init container, and two Volcano runtimes: an
/// empty queue annotation, and a priority class that does not exist.
pub fn fixture_runtimes(torch_spec: &Value) -> Vec<Value> {
    let node = |containers: Value, init: Value| {
        json!({"name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"initContainers": init, "containers": containers}}}}})
    };
    let image = json!([{"name": "node", "image": "registry.example.com/team-a/train:1.4"}]);
    let ctr = |name: &str, policy: Value, jobs: Value| {
        json!({"apiVersion": GROUP_VERSION, "kind": "ClusterTrainingRuntime", "metadata": {"name": name},
            "spec": {"mlPolicy": policy, "template": {"spec": {"replicatedJobs": jobs}}}})
    };
    vec![
        json!({"apiVersion": GROUP_VERSION, "kind": "TrainingRuntime", "metadata": {"name": "team-torch", "namespace": NAMESPACE}, "spec": torch_spec}),
        ctr(
            "wd-mpi-no-launcher",
            json!({"numNodes": 1, "mpi": {"runLauncherAsNode": true, "mpiImplementation": "OpenMPI"}}),
            json!([node(image.clone(), json!([]))]),
        ),
        ctr(
            "wd-torch-env-injection",
            json!({"numNodes": 1, "torch": {"envInjection": {"targets": [{"jobName": "node", "containerNames": ["preflight"]}]}}}),
            json!([node(image.clone(), json!([]))]),
        ),
        ctr(
            "wd-flux",
            json!({"numNodes": 1, "flux": {"numProcPerNode": 1}}),
            json!([node(image.clone(), json!([{"name": "flux-installer", "image": "registry.example.com/flux:1"}]))]),
        ),
        volcano("wd-volcano-empty-queue", json!({"scheduling.volcano.sh/queue-name": ""}), None),
        volcano("wd-volcano-priority", json!({}), Some("no-such-priority-class")),
    ]
}
