//! A healthy Trainer 2.2.1 install with admission webhooks on and its controllers running as
//! their Pods (the 2.2.1 manager, the JobSet 0.11.0 controller of its subchart), TrainJobs
//! submitted under them, then `trainer-audit runbook` to 2.3.0 executed verbatim: the stand-in
//! restarts each controller at its new version when the upgrade rolls its Deployment out (the
//! 2.3.0 manager, JobSet 0.12.0), and the TrainJobs must live through it.

use serde_json::Value as Json;
use testkit::controlplane::Webhooks;
use testkit::standin::Record;

use crate::controllers::MANAGER_2_3_0;
use crate::lab::{Lab, NAMESPACE, RELEASE};
use crate::running::{self, poll, JOBSET_0_12_0};
use crate::users::{self, IN_USE, TEAM};
use crate::{printed, values};

const MANAGER_2_2_1: &str = "trainer-controller-manager-v2.2.1";
const JOBSET_0_11_0: &str = "jobset-v0.11.0";

fn names(lab: &Lab, what: &str) -> Vec<String> {
    let list = lab.get_json(&format!("{what} -n {TEAM}"));
    list["items"].as_array().into_iter().flatten().filter_map(|o| o["metadata"]["name"].as_str().map(String::from)).collect()
}

fn started(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::ControllerStarted { binary, .. } => Some(binary.clone()),
            _ => None,
        })
        .collect()
}

/// How the release was last applied before the runbook: the stored method a `helm upgrade`
/// (`--server-side=auto`) keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The runtimes enabled by a client-side upgrade (`--server-side=false`).
    ClientSide,
    /// Enabled by a server-side upgrade forced over the rotators (`--force-conflicts`), as a
    /// Helm 4 user gets through TA-NB-007.
    ServerSide,
}

pub fn healthy_2_2_1_with_running_trainjobs_to_2_3_0(applied: Applied) {
    let scenario = match applied {
        Applied::ClientSide => "swap-2.2.1-to-2.3.0",
        Applied::ServerSide => "swap-ssa-2.2.1-to-2.3.0",
    };
    let Some(mut lab) = Lab::start_with(scenario, &["2.2.1", "2.3.0"], Webhooks::On) else { return };
    for binary in [MANAGER_2_2_1, JOBSET_0_11_0, MANAGER_2_3_0, JOBSET_0_12_0] {
        assert!(lab.cp.bin.join(binary).is_file(), "{binary} not built: run `cargo xtask controlplane`");
    }
    lab.standin_start();
    let values = values(&lab, "runtimes-all.yaml");
    // With the webhooks on, a first install of 2.2.1 with its runtimes fails: the chart applies
    // the ClusterTrainingRuntimes in the same release as the webhook configuration
    // (failurePolicy Fail), before any manager Pod serves it ("no endpoints available for
    // service"). So the platform team installs the controllers first, then enables the runtimes.
    let first = lab.shell(&format!(
        "helm install {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --create-namespace --plain-http -f {values} --wait --timeout 4m",
        lab.repo()
    ));
    lab.note(&format!(
        "first install of 2.2.1 with its runtimes: exit {:?}: {}",
        first.code,
        first.stderr.lines().last().unwrap_or_default()
    ));
    if !first.ok() {
        assert!(first.stderr.contains("no endpoints available for service"), "{first}");
        lab.shell_ok(&format!("helm uninstall {RELEASE} -n {NAMESPACE} --wait --timeout 2m"));
        lab.shell_ok(&format!("helm install {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --plain-http --wait --timeout 4m", lab.repo()));
        // Enabling the runtimes by a server-side upgrade conflicts with both rotators on the
        // Secrets' declared keys (TA-NB-007, seen here on 2.2.1 → 2.2.1: "conflict occurred while
        // applying object kubeflow-system/kubeflow-trainer-webhook-cert … conflicts with
        // \"manager\""); a client-side upgrade (three-way merge) leaves the rotators' keys alone.
        let how = match applied {
            Applied::ClientSide => "--server-side=false",
            Applied::ServerSide => "--force-conflicts",
        };
        let install = lab.shell(&format!(
            "helm upgrade {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --plain-http -f {values} {how} --wait --timeout 4m",
            lab.repo()
        ));
        assert!(install.ok(), "{install}\n{:#?}", lab.standin_records());
    }
    let records = lab.standin_records();
    let before_binaries = started(&records);
    lab.note(&format!("2.2.1 installed; controllers started: {before_binaries:?}"));
    for binary in [MANAGER_2_2_1, JOBSET_0_11_0] {
        // The last Pod (those of the failed first install were deleted with it).
        let pods = running::pods_of(&records, binary);
        let pod = pods.last().unwrap_or_else(|| panic!("{binary} not started: {records:#?}"));
        running::healthy(&records, pod).unwrap_or_else(|e| panic!("{e}"));
    }

    // Under 2.2.1: one TrainJob runs to its end; two more are submitted while the team's node is
    // down (no stand-in for team-a), so their JobSets, Jobs and Pods exist and the Pods wait.
    let team = running::team_namespace(&lab);
    users::apply(&lab, &running::runnable_trainjob("early", "torch-distributed", 2, "echo trained under 2.2.1"));
    let early = running::wait_condition(&lab, &team, "early", "Complete", 180);
    lab.note(&format!("TrainJob early under the 2.2.1 controllers: {early:?}"));
    let team_records = team.stop();
    for name in ["waiting-1", "waiting-2"] {
        users::apply(&lab, &running::runnable_trainjob(name, "torch-distributed", 1, "echo trained after the upgrade"));
    }
    let pods_waiting = poll(120, || {
        let pods = names(&lab, "pods");
        (pods.iter().filter(|p| p.starts_with("waiting-")).count() == 2).then_some(pods)
    })
    .unwrap_or_else(|| panic!("the waiting TrainJobs got no Pods:\n{}", running::chain(&lab, "waiting-1")));
    lab.note(&format!("under 2.2.1: JobSets {:?}, Jobs {:?}, Pods {pods_waiting:?}", names(&lab, "jobsets"), names(&lab, "jobs")));
    // The 2.2.1 manager's own finalizer on the runtime the TrainJobs use (TA-RT-002's premise).
    let finalizers = lab.shell_ok("kubectl get clustertrainingruntime torch-distributed -o jsonpath='{.metadata.finalizers}'").stdout;
    lab.note(&format!("torch-distributed finalizers under 2.2.1: {finalizers}"));
    assert!(finalizers.contains(IN_USE), "the 2.2.1 manager did not put {IN_USE} on torch-distributed: {finalizers}");
    let before: Vec<(String, Json)> =
        ["early", "waiting-1", "waiting-2"].iter().map(|n| (n.to_string(), running::trainjob(&lab, n).1["status"].clone())).collect();

    // The runbook, verbatim.
    let (runbook, blocks) = printed::runbook(&lab, "2.3.0");
    let mut results = printed::run_blocks(&lab, &blocks);
    if applied == Applied::ServerSide {
        // Observed: on a release applied server-side, the runbook's upgrade stops on JobSet's
        // Secret — the 2.3.0 chart's JobSet subchart still declares the keys JobSet's rotator
        // rewrote. `check` warns of it (TA-NB-007, a warning), and the runbook carries no step for
        // it. A person then reruns the upgrade with the fix the rule names, --force-conflicts.
        let failed = results.last().expect("at least one block").clone();
        let conflict = format!("conflict occurred while applying object {NAMESPACE}/{}", running::JOBSET_SECRET);
        assert!(!failed.ok() && failed.stderr.contains(&conflict), "expected the runbook's upgrade to stop on {conflict:?}:\n{failed}");
        assert!(runbook.contains(&format!("**TA-NB-007** `Secret/{NAMESPACE}/{}`", running::JOBSET_SECRET)), "{runbook}");
        lab.note(&format!(
            "OBSERVED TA-NB-007 in the runbook (block {}/{}): {}",
            results.len(),
            blocks.len(),
            failed.stderr.lines().find(|l| l.starts_with("Error:")).unwrap_or_default()
        ));
        let at = results.len() - 1;
        let forced: String = blocks[at]
            .lines()
            .map(|l| if l.starts_with("helm ") && l.contains(" upgrade ") { format!("{l} --force-conflicts") } else { l.to_string() })
            .collect::<Vec<_>>()
            .join("\n");
        results.pop();
        results.extend(printed::run_blocks(&lab, &[forced]));
        if results.last().is_some_and(|r| r.ok()) {
            results.extend(printed::run_blocks(&lab, &blocks[at + 1..]));
        }
    }
    let last = results.last().expect("at least one block");
    assert!(
        results.len() == blocks.len() && last.ok(),
        "runbook block {}/{} failed:\n{last}\n--- runbook ---\n{runbook}\n{:#?}",
        results.len(),
        blocks.len(),
        lab.standin_records()
    );
    assert_eq!(lab.release(), ("deployed".to_string(), "kubeflow-trainer-2.3.0".to_string()));

    // Each controller restarted at its new version when its Deployment rolled out.
    let records = lab.standin_records();
    let after_binaries = started(&records);
    lab.note(&format!("controllers started, in order: {after_binaries:?}"));
    for binary in [MANAGER_2_3_0, JOBSET_0_12_0] {
        let pods = running::pods_of(&records, binary);
        assert!(!pods.is_empty(), "{binary} never started after the runbook: {records:#?}");
        let pod = pods.last().unwrap();
        let ready = poll(120, || running::healthy(&lab.standin_records(), pod).ok());
        assert!(ready.is_some(), "{binary}: {:?}", running::healthy(&lab.standin_records(), pod));
    }

    // The team's node back: the waiting Pods run, under the 2.3.0 and JobSet 0.12.0 controllers.
    let team = running::team_namespace(&lab);
    let mut outcome = Vec::new();
    for name in ["early", "waiting-1", "waiting-2"] {
        let (conditions, _) = running::trainjob(&lab, name);
        assert!(!conditions.iter().any(|c| c == "Failed=True"), "TrainJob {name} failed: {conditions:?}\n{}", running::chain(&lab, name));
    }
    for name in ["waiting-1", "waiting-2"] {
        let conditions = running::wait_condition(&lab, &team, name, "Complete", 180);
        outcome.push(format!("{name}: {conditions:?}"));
    }
    lab.note(&format!("after the runbook: {outcome:?}"));
    // None lost; none failed; the 2.3 runtime snapshots for the ones unfinished at the upgrade.
    let trainjobs = names(&lab, "trainjobs");
    for name in ["early", "waiting-1", "waiting-2"] {
        assert!(trainjobs.iter().any(|t| t == name), "TrainJob {name} lost: {trainjobs:?}");
        let (conditions, object) = running::trainjob(&lab, name);
        assert!(!conditions.iter().any(|c| c == "Failed=True"), "TrainJob {name} failed: {conditions:?}");
        let was = before.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone()).unwrap_or_default();
        lab.note(&format!("TrainJob {name}: status before {was}; after {}", object["status"]));
    }
    let configmaps = names(&lab, "configmaps");
    lab.note(&format!("ConfigMaps in {TEAM}: {configmaps:?}"));
    for name in ["waiting-1", "waiting-2"] {
        assert!(configmaps.iter().any(|c| c == &format!("{name}-runtime-snapshot")), "no runtime snapshot for {name}: {configmaps:?}");
    }
    // The 2.0–2.2 finalizer gone: the 2.3 manager removes it.
    let gone = poll(90, || {
        let f = lab.shell_ok("kubectl get clustertrainingruntime torch-distributed -o jsonpath='{.metadata.finalizers}'").stdout;
        (!f.contains(IN_USE)).then_some(f)
    });
    assert!(gone.is_some(), "{IN_USE} still on torch-distributed after the runbook");
    lab.note(&format!("OBSERVED TA-RT-002 in the upgrade: {IN_USE} removed from torch-distributed by the 2.3.0 manager"));
    let _ = team_records;
    let _ = team.stop();
}
