use serde_json::json;

use super::*;
use crate::migrate::{Options, Source, DEFAULT_PATCH_MANAGER};

fn files() -> Options {
    Options::new(true, Source::Files)
}

fn container(extra: Json) -> Json {
    let mut c = json!({"name": "pytorch", "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
        "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]});
    if let (Some(c), Some(e)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    c
}

fn pytorchjob(master: Json, worker: Json, spec_extra: Json) -> Json {
    let mut j = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pytorch-simple", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {"Master": master, "Worker": worker}}});
    if let (Some(s), Some(e)) = (j["spec"].as_object_mut(), spec_extra.as_object()) {
        s.extend(e.clone());
    }
    j
}

fn replica(n: i64, c: Json) -> Json {
    json!({"replicas": n, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [c]}}})
}

#[test]
fn the_guide_example() {
    // T@v2.3.0 docs/operator-guides/migration.md#L38-L89: the old PyTorchJob and the new TrainJob.
    let j = pytorchjob(replica(1, container(json!({}))), replica(1, container(json!({}))), json!({}));
    let c = convert_all(&[j], &files()).pop().unwrap();
    assert_eq!(
        c.converted.unwrap(),
        json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "pytorch-simple", "namespace": "ml"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2,
                "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727", "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]}}})
    );
    let lost: Vec<&str> = c.notes.iter().filter(|n| n.level == Level::Lost).map(|n| n.path.as_str()).collect();
    assert_eq!(lost, ["spec.pytorchReplicaSpecs.Master.restartPolicy", "spec.pytorchReplicaSpecs.Worker.restartPolicy"]);
    assert!(c.notes.iter().any(|n| n.level == Level::Review && n.text.contains("does not run torchrun")));
}

#[test]
fn the_complex_job() {
    let c = container(json!({
        "command": ["torchrun", "train.py"], "args": ["--lr", "0.1"],
        "env": [{"name": "A", "value": "1"}, {"name": "PET_NNODES", "value": "9"}],
        "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": 32}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}], "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
        "workingDir": "/w"
    }));
    let mut w = replica(3, c.clone());
    w["template"]["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]);
    w["template"]["spec"]["nodeSelector"] = json!({"pool": "a100"});
    w["template"]["spec"]["tolerations"] = json!([{"key": "gpu", "operator": "Exists"}]);
    w["template"]["spec"]["hostNetwork"] = json!(true);
    w["template"]["spec"]["containers"] = json!([c, {"name": "sidecar", "image": "s"}]);
    w["template"]["metadata"] = json!({"labels": {"team": "a"}});
    let mut m = w.clone();
    m["replicas"] = json!(1);
    m["template"]["spec"]["nodeSelector"] = json!({"pool": "cpu"});
    let j = pytorchjob(
        m,
        w,
        json!({"nprocPerNode": "gpu", "elasticPolicy": {"maxReplicas": 4},
               "runPolicy": {"backoffLimit": 3, "suspend": true, "activeDeadlineSeconds": 3600, "cleanPodPolicy": "None", "ttlSecondsAfterFinished": 60,
                             "schedulingPolicy": {"queue": "q"}, "managedBy": "kueue.x-k8s.io/multikueue"}}),
    );
    let c = convert_all(&[j], &files()).pop().unwrap();
    let out = c.converted.clone().unwrap();
    let spec = &out["spec"];
    assert_eq!(spec["trainer"]["numNodes"], 4);
    assert_eq!(spec["trainer"]["numProcPerNode"], 8);
    assert_eq!(spec["trainer"]["args"], json!(["--lr", "0.1"]));
    assert_eq!(spec["trainer"]["env"], json!([{"name": "A", "value": "1"}]));
    assert_eq!(spec["trainer"]["resourcesPerNode"], json!({"limits": {"nvidia.com/gpu": 8, "cpu": 32}}));
    assert_eq!(
        (&spec["suspend"], &spec["activeDeadlineSeconds"], &spec["managedBy"]),
        (&json!(true), &json!(3600), &json!("kueue.x-k8s.io/multikueue"))
    );
    let patch = &spec["runtimePatches"][0];
    assert_eq!(patch["manager"], DEFAULT_PATCH_MANAGER);
    let pod = &patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
    assert_eq!(pod["metadata"], json!({"labels": {"team": "a"}}));
    assert_eq!(pod["spec"]["volumes"], json!([{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]));
    assert_eq!(pod["spec"]["containers"], json!([{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]));
    assert!(pod["spec"].get("nodeSelector").is_none(), "differs between Master and Worker");
    let lost: BTreeSet<&str> = c.notes.iter().filter(|n| n.level == Level::Lost).map(|n| n.path.as_str()).collect();
    for path in [
        "spec.pytorchReplicaSpecs.*.template.spec.nodeSelector",
        "spec.pytorchReplicaSpecs.*.template.spec.hostNetwork",
        "spec.pytorchReplicaSpecs.*.template.spec.containers.sidecar",
        "spec.pytorchReplicaSpecs.Master.template.spec.containers.env.PET_NNODES",
        "spec.pytorchReplicaSpecs.Master.template.spec.containers.ports",
        "spec.pytorchReplicaSpecs.Master.template.spec.containers.workingDir",
        "spec.runPolicy.backoffLimit",
        "spec.runPolicy.cleanPodPolicy",
        "spec.runPolicy.ttlSecondsAfterFinished",
        "spec.runPolicy.schedulingPolicy",
        "spec.elasticPolicy",
    ] {
        assert!(lost.contains(path), "{path} not listed in {lost:?}");
    }
    assert!(pod["spec"].get("tolerations").is_some());
}

#[test]
fn nproc_mappings() {
    let job = |nproc: Option<&str>, command: Json, res: Json| {
        let c = container(json!({"command": command, "resources": res}));
        let mut j = pytorchjob(replica(1, c.clone()), replica(1, c), json!({}));
        if let Some(n) = nproc {
            j["spec"]["nprocPerNode"] = json!(n);
        }
        convert_all(&[j], &files()).pop().unwrap()
    };
    let n = |c: &Conversion| c.converted.as_ref().unwrap()["spec"]["trainer"].get("numProcPerNode").cloned();
    let gpus = json!({"limits": {"nvidia.com/gpu": 2}});
    assert_eq!(n(&job(None, json!(["torchrun", "x.py"]), json!({}))), Some(json!(1)), "torchrun's default");
    assert_eq!(n(&job(None, json!(["python", "x.py"]), json!({}))), None);
    assert_eq!(n(&job(Some("3"), json!(["torchrun"]), json!({}))), Some(json!(3)));
    assert_eq!(n(&job(Some("gpu"), json!(["torchrun"]), gpus.clone())), Some(json!(2)));
    assert_eq!(n(&job(Some("auto"), json!(["torchrun"]), gpus)), None);
    let cpu = job(Some("cpu"), json!(["torchrun"]), json!({"limits": {"cpu": 4}}));
    assert_eq!(n(&cpu), None);
    assert!(cpu.notes.iter().any(|x| x.level == Level::Lost && x.path == "spec.nprocPerNode"));
}

#[test]
fn refusals() {
    let c = container(json!({}));
    let mut other = container(json!({}));
    other["image"] = json!("other:1");
    let first = |j: Json| convert_all(&[j], &files()).pop().unwrap();
    let r = first(pytorchjob(replica(1, c.clone()), replica(1, other), json!({})));
    assert!(r.refused() && r.notes.iter().any(|n| n.text.contains("differ in image")));
    let mut j = pytorchjob(replica(1, c.clone()), replica(1, c.clone()), json!({}));
    j["metadata"]["name"] = json!("job.v1");
    assert!(first(j).refused());
    let two = json!({"replicas": 1, "template": {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}});
    assert!(first(pytorchjob(two.clone(), two, json!({}))).refused());
    let tf = json!({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "t"}});
    let r = first(tf);
    assert!(r.refused() && r.notes[0].text.contains("no converter for TFJob"));
    let existing = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "pytorch-simple", "namespace": "ml"}});
    let cs = convert_all(&[pytorchjob(replica(1, c.clone()), replica(0, c), json!({})), existing], &files());
    assert!(cs[0].refused() && cs[0].notes.iter().any(|n| n.text.contains("already exists")));
}

#[test]
fn suspend_and_status() {
    let c = container(json!({}));
    let mut j = pytorchjob(replica(1, c.clone()), replica(1, c), json!({}));
    j["status"] = json!({"conditions": [{"type": "Created", "status": "True"}, {"type": "Succeeded", "status": "True"}]});
    let mut o = files();
    o.suspend_legacy = true;
    let c = convert_all(&[j], &o).pop().unwrap();
    assert_eq!(c.converted.as_ref().unwrap()["spec"]["suspend"], true);
    assert!(c.notes.iter().any(|n| n.path == "status" && n.text.contains("Succeeded")));
}
