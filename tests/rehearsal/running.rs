//! What the rehearsals with admission webhooks on share: the controllers the stand-in runs as
//! their Pods (which binary each Pod ran, whether each is Ready after its last exit), and
//! TrainJobs that really run — the Trainer manager makes the JobSet, the JobSet controller its
//! Jobs, kube-controller-manager's job controller the Pods, the team namespace's own stand-in
//! runs their commands in the sandbox — with the TrainJob's status read back.

use std::collections::BTreeMap;

use serde_json::Value as Json;
use testkit::standin::{Record, StandIn};

use crate::lab::Lab;
use crate::users::TEAM;

/// The JobSet controller the Trainer 2.3.0 chart's JobSet subchart runs, by the name the stand-in
/// maps the subchart's `jobset:main` image to.
pub const JOBSET_0_12_0: &str = "jobset-v0.12.0";
/// The JobSet subchart's webhook Service and cert Secret (`fullnameOverride: jobset`).
pub const JOBSET_SERVICE: &str = "jobset-webhook-service";
pub const JOBSET_SECRET: &str = "jobset-webhook-server-cert";
pub const JOBSET_VALIDATING: &str = "jobset-validating-webhook-configuration";
pub const JOBSET_MUTATING: &str = "jobset-mutating-webhook-configuration";

/// Polls `probe` every second for up to `secs`; the last value.
pub fn poll<T>(secs: u64, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..secs {
        if let Some(v) = probe() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    probe()
}

/// Per controller Pod: the binary it ran and its records, in order.
pub fn controller_pods(records: &[Record]) -> BTreeMap<String, (String, Vec<Record>)> {
    let mut pods: BTreeMap<String, (String, Vec<Record>)> = BTreeMap::new();
    for r in records {
        let pod = match r {
            Record::ControllerStarted { pod, binary, .. } => {
                pods.entry(pod.clone()).or_insert_with(|| (binary.clone(), Vec::new()));
                pod
            }
            Record::ControllerReady { pod }
            | Record::ControllerExited { pod, .. }
            | Record::ControllerRestarted { pod, .. }
            | Record::ControllerStopped { pod, .. } => pod,
            _ => continue,
        };
        if let Some((_, list)) = pods.get_mut(pod) {
            list.push(r.clone());
        }
    }
    pods
}

/// The controller Pods that ran `binary`, in the order they were started.
pub fn pods_of(records: &[Record], binary: &str) -> Vec<String> {
    let mut pods: Vec<String> = Vec::new();
    for r in records {
        if let Record::ControllerStarted { pod, binary: b, .. } = r {
            if b == binary && !pods.contains(pod) {
                pods.push(pod.clone());
            }
        }
    }
    pods
}

/// A controller Pod's process does not crash once it runs. Exits a cluster sees too are
/// allowed, and the stand-in restarts the process after them as a kubelet does: before its first
/// Ready, a start that finds CRDs Helm applied in the same release not yet served (Trainer:
/// "Could not initialize runtimes … setting index on runtimeClass"), a crash loop that ends once
/// they are; after it, controller-runtime's "leader election lost" on a loaded machine, and the
/// cert rotator's own exit after it rewrote the certificate ("exiting so pod can be restarted",
/// open-policy-agent/cert-controller `pkg/rotator/rotator.go`). `Ok` when its last word is Ready
/// (or it was stopped, by a rollout or its Pod's deletion, after being Ready).
pub fn healthy(records: &[Record], pod: &str) -> Result<(), String> {
    let Some((_, list)) = controller_pods(records).remove(pod) else { return Err(format!("no controller Pod {pod}")) };
    let mut ready = false;
    let mut stopped = false;
    for r in &list {
        match r {
            Record::ControllerReady { .. } => ready = true,
            Record::ControllerExited { output, .. } if ready => {
                if !(output.contains("leader election lost") || output.contains("exiting so pod can be restarted")) {
                    return Err(format!("{pod} exited after it was Ready: {list:#?}"));
                }
                ready = false;
            }
            Record::ControllerExited { .. } => ready = false,
            Record::ControllerStopped { .. } => stopped = ready,
            _ => {}
        }
    }
    if ready || stopped {
        Ok(())
    } else {
        Err(format!("{pod} is not Ready after its last exit: {list:#?}"))
    }
}

/// The team namespace with its `default` ServiceAccount (what the ServiceAccount controller, not
/// run here, would create) and a stand-in of its own for the training Pods.
pub fn team_namespace(lab: &Lab) -> StandIn {
    lab.shell_ok(&format!(
        "kubectl create namespace {TEAM} --dry-run=client -o yaml | kubectl apply -f -\n\
         kubectl create serviceaccount default -n {TEAM} --dry-run=client -o yaml | kubectl apply -f -"
    ));
    StandIn::start(&lab.cp, TEAM).unwrap()
}

/// A TrainJob on `runtime` whose trainer command runs here (the host's userland stands in for
/// the image): `sh -c SCRIPT` on each of `nodes` nodes.
pub fn runnable_trainjob(name: &str, runtime: &str, nodes: u32, script: &str) -> String {
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}, namespace: {TEAM}}}
spec:
  runtimeRef: {{name: {runtime}}}
  trainer:
    image: registry.example.com/team-a/train:1.4
    command: [sh, -c, {script:?}]
    numNodes: {nodes}
"#
    )
}

/// A TrainJob's conditions as `type=status` (sorted) and its whole object.
pub fn trainjob(lab: &Lab, name: &str) -> (Vec<String>, Json) {
    let object = lab.get_json(&format!("trainjob -n {TEAM} {name}"));
    let mut conditions: Vec<String> = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{}={}", c["type"].as_str().unwrap_or("?"), c["status"].as_str().unwrap_or("?")))
        .collect();
    conditions.sort();
    (conditions, object)
}

/// Waits until the TrainJob has condition `kind` True; its conditions then, or a panic with
/// what the chain (JobSet, Jobs, Pods, Events) looks like.
pub fn wait_condition(lab: &Lab, team: &StandIn, name: &str, kind: &str, secs: u64) -> Vec<String> {
    let wanted = format!("{kind}=True");
    poll(secs, || {
        let (conditions, _) = trainjob(lab, name);
        conditions.contains(&wanted).then_some(conditions)
    })
    .unwrap_or_else(|| {
        panic!("TrainJob {TEAM}/{name} not {kind} within {secs} s:\n{}\nteam stand-in: {:#?}", chain(lab, name), team.records())
    })
}

/// The TrainJob, its JobSet, Jobs, Pods and the namespace's Events, for a failure message.
pub fn chain(lab: &Lab, name: &str) -> String {
    let r = lab.shell(&format!(
        "kubectl get trainjob,jobset,jobs,pods,configmaps -n {TEAM} -o wide 2>&1; kubectl get trainjob -n {TEAM} {name} -o yaml 2>&1 | sed -n '/^status:/,$p'; \
         kubectl get events -n {TEAM} 2>&1 | tail -n 30"
    ));
    format!("{}{}", r.stdout, r.stderr)
}

/// The chain of owners the real controllers made for a TrainJob: the JobSet it owns, the Jobs
/// the JobSet owns and the Pods those own, by name.
pub fn owned_chain(lab: &Lab, name: &str) -> (Vec<String>, Vec<String>) {
    let owned_by = |kind: &str, owner_kind: &str, owners: &[String]| -> Vec<String> {
        let list = lab.get_json(&format!("{kind} -n {TEAM}"));
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| {
                o["metadata"]["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["kind"] == owner_kind && owners.iter().any(|n| r["name"] == n.as_str()))
            })
            .filter_map(|o| o["metadata"]["name"].as_str().map(String::from))
            .collect()
    };
    let jobs = owned_by("jobs", "JobSet", &[name.to_string()]);
    let pods = owned_by("pods", "Job", &jobs);
    (jobs, pods)
}
