//! Release states a platform team's cluster is left in after a bad week (issue 29 §1), each made
//! for real with the real Helm on the 2.2.1 from-state (every built-in runtime, a TrainJob on
//! `torch-distributed`, which the 2.2.1 manager marks in use), then rehearsed like every scenario:
//! `check` names what Helm will do, the plan's commands without their fixes fail as predicted,
//! and the runbook verbatim reaches `deployed` 2.3.0 with every TrainJob and runtime there and
//! `check` ready.
//!
//! - failed: the upgrade to 2.3.0 times out (`--wait --timeout 3s`: its post-upgrade installer
//!   hook does not complete that fast) and Helm records it `failed` over the deployed 2.2.1, which
//!   it upgrades from again. Installed as release `trainer` in `ml-platform` (issue 29 §4: every name printed is
//!   the one the chart renders for that release, run verbatim);
//! - uninstalling: `helm uninstall --wait` waits on `torch-distributed`, whose in-use finalizer no
//!   manager removes any more (the uninstall deleted it), and is killed (SIGKILL) while it waits:
//!   the record says `uninstalling` (Helm stores it after the pre-delete hooks, before deleting).
//!   Rolling it back to itself fails (the 2.2.1 runtimes are applied through the webhook the
//!   rollback re-creates before its Pod serves it: seen), so the plan finishes the uninstall
//!   (`--keep-history`) and installs 2.3.0 afresh;
//! - uninstalled: `helm uninstall --keep-history`: Helm refuses `helm upgrade`; `helm upgrade
//!   --install` installs 2.3.0 afresh over the CRDs (crds/, never deleted) and the TrainJob left.

use crate::lab::Lab;
use crate::{install_with_runtimes, rehearse, users, Scenario};

/// The 2.2.1 from-state every status starts from.
fn deployed_2_2_1(lab: &mut Lab) {
    lab.standin_start();
    install_with_runtimes(lab, "2.2.1");
    users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
    users::mark_in_use(lab, "torch-distributed");
}

/// Waits (up to a minute) until the release's last revision has `status`.
fn wait_for_status(lab: &Lab, status: &str) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed().as_secs() < 60 {
        if lab.release().0 == status {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    false
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_failed_2_3_0_over_deployed_2_2_1_as_trainer_in_ml_platform() {
    rehearse(&Scenario {
        name: "failed-over-deployed",
        versions: &["2.2.1", "2.3.0"],
        to: "2.3.0",
        // Helm upgrades from 2.2.1 again. The failed attempt had deleted the 2.2.1 runtimes and
        // its installer Job, left running when Helm gave up, re-created them — all but the one in
        // use, Terminating on its finalizer, which the 2.3 controller then deletes (TA-RT-002).
        errors: &["TA-RT-002"],
        from: |lab| {
            deployed_2_2_1(lab);
            let (release, namespace) = (lab.release, lab.namespace);
            let ran = lab.shell(&format!(
                "helm upgrade {release} {} --version 2.3.0 -n {namespace} --plain-http --reset-then-reuse-values --take-ownership --force-conflicts --wait --timeout 3s",
                lab.repo()
            ));
            lab.note(&format!("the upgrade that fails: {ran}"));
            assert!(!ran.ok(), "[{}] the 2.3.0 upgrade was to time out:\n{ran}", lab.scenario);
            assert_eq!(lab.release(), ("failed".to_string(), "kubeflow-trainer-2.3.0".to_string()));
        },
        stop_when: None,
        install_as: Some(("trainer", "ml-platform")),
    });
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_uninstalling_2_2_1() {
    rehearse(&Scenario {
        name: "uninstalling",
        versions: &["2.2.1", "2.3.0"],
        to: "2.3.0",
        errors: &["TA-REL-003"],
        from: |lab| {
            deployed_2_2_1(lab);
            let (release, namespace) = (lab.release, lab.namespace);
            // Killed once it waits: the record says uninstalling and the deletes are done (the
            // in-use runtime is Terminating, the last kind Helm deletes), so only it holds Helm.
            let uninstalling = || {
                lab.release().0 == "uninstalling"
                    && !lab
                        .shell("kubectl get clustertrainingruntime torch-distributed -o jsonpath='{.metadata.deletionTimestamp}'")
                        .stdout
                        .trim()
                        .is_empty()
            };
            let ran = lab.shell_until(&format!("helm uninstall {release} -n {namespace} --wait --timeout 10m"), &uninstalling);
            lab.note(&format!("the uninstall, killed while it waits: {ran}"));
            assert_eq!(ran.code, None, "[{}] the uninstall was to be killed while it waits:\n{ran}", lab.scenario);
            assert!(wait_for_status(lab, "uninstalling"));
        },
        stop_when: None,
        install_as: None,
    });
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_uninstalled_with_history_2_2_1() {
    rehearse(&Scenario {
        name: "uninstalled-keep-history",
        versions: &["2.2.1", "2.3.0"],
        to: "2.3.0",
        // Helm refuses the plain upgrade; --install's fresh install must adopt the crds/ CRDs.
        errors: &["TA-REL-003", "TA-OWN-001"],
        from: |lab| {
            deployed_2_2_1(lab);
            let (release, namespace) = (lab.release, lab.namespace);
            lab.shell_ok(&format!("helm uninstall {release} -n {namespace} --keep-history"));
            assert!(wait_for_status(lab, "uninstalled"));
        },
        stop_when: None,
        install_as: None,
    });
}
