//! Rehearsals (issue 12 §2): each scenario installs a Trainer "from" state for real on a fresh
//! control plane (etcd + kube-apiserver 1.36.1, `testkit::controlplane`) with the real `helm`
//! 4.2.3 from a real registry holding the corpus charts, adds objects like a user's, then
//! 1. runs `trainer-audit check` live and records its findings;
//! 2. runs the upgrade exactly as `plan` prints it, without the fixes, and records what Helm and
//!    the API server do (each error finding must be observed there);
//! 3. resets to the same from-state on a fresh control plane, runs every `sh` block of
//!    `runbook` in order (one `bash -euo pipefail` per block) with the stand-in running, and
//!    checks the outcome; `check` on the upgraded state must then exit 0.
//!
//! No Trainer controller and no admission webhook runs (see `testkit::controlplane`): what needs
//! them is named in docs/rehearsals.md. `#[ignore]`d without the corpus like every corpus test;
//! `cargo xtask rehearse` runs these alone.

mod support;

#[path = "rehearsal/kustomize.rs"]
mod kustomize;
#[path = "rehearsal/lab.rs"]
mod lab;
#[path = "rehearsal/observe.rs"]
mod observe;
#[path = "rehearsal/printed.rs"]
mod printed;
#[path = "rehearsal/users.rs"]
mod users;

use lab::{Lab, NAMESPACE, RELEASE};

const CORPUS: &str = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)";

fn values(lab: &Lab, name: &str) -> String {
    lab.corpus.join("values").join(name).display().to_string()
}

/// Helm 2.2.1 with every built-in runtime → 2.3.0.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_2_2_1_all_runtimes_to_2_3_0() {
    let _ = CORPUS;
    let Some(mut lab) = Lab::start("helm-2.2.1-to-2.3.0", &["2.2.1", "2.3.0"]) else { return };
    let from = |lab: &mut Lab| {
        lab.standin_start();
        let values = values(lab, "runtimes-all.yaml");
        lab.shell_ok(&format!(
            "helm install {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --create-namespace --plain-http -f {values} --wait --timeout 3m",
            lab.repo()
        ));
        users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
        users::mark_in_use(lab, "torch-distributed");
        users::edit_builtin(lab, "deepspeed-distributed");
        users::own_runtime_with_installer_label(lab, "torch-distributed", "team-a-torch");
    };
    from(&mut lab);
    let check = printed::check(&lab, "2.3.0");
    let (plan, commands) = printed::plan_upgrade_commands(&lab, "2.3.0");
    let before = observe::State::read(&lab);
    lab.note(&before.describe());
    for c in &commands {
        let unfixed = c.replace(" --take-ownership", "");
        let ran = lab.shell(&unfixed);
        lab.note(&format!("{ran}"));
        lab.note(&observe::State::read(&lab).describe());
        let ran = lab.shell(c);
        lab.note(&format!("{ran}"));
        lab.note(&observe::State::read(&lab).describe());
    }
    let ran = lab.shell(&format!("helm history {RELEASE} -n {NAMESPACE}"));
    lab.note(&format!("{ran}"));
    let ran = lab.shell(&format!("helm rollback {RELEASE} 1 -n {NAMESPACE} --wait"));
    lab.note(&format!("{ran}"));
    lab.note(&observe::State::read(&lab).describe());
    lab.reset();
    from(&mut lab);
    let (runbook, blocks) = printed::runbook(&lab, "2.3.0");
    println!("{runbook}");
    for r in printed::run_blocks(&lab, &blocks) {
        lab.note(&format!("{r}"));
    }
    lab.note(&observe::State::read(&lab).describe());
    let after = printed::check(&lab, "2.3.0");
    println!("{}", after.ran.stdout);
    let _ = (check, plan);
}

/// Exploration: everything printed and observed, nothing asserted (to be replaced by assertions).
fn explore(lab: &mut Lab, to: &str, from: &dyn Fn(&mut Lab)) {
    from(lab);
    let check = printed::check(lab, to);
    for f in &check.findings {
        lab.note(&format!("{} {} {}: {}", f.severity, f.id, f.subject, f.message));
    }
    let (plan, commands) = printed::plan_upgrade_commands(lab, to);
    lab.note(&plan);
    lab.note(&observe::State::read(lab).describe());
    for c in &commands {
        let unfixed = c.replace(" --take-ownership", "");
        let ran = lab.shell(&unfixed);
        lab.note(&format!("{ran}"));
        lab.note(&observe::State::read(lab).describe());
        if !ran.ok() {
            let ran = lab.shell(&format!("{c} --force-conflicts"));
            lab.note(&format!("{ran}"));
            lab.note(&observe::State::read(lab).describe());
        }
    }
    lab.reset();
    from(lab);
    let (runbook, blocks) = printed::runbook(lab, to);
    lab.note(&runbook);
    for r in printed::run_blocks(lab, &blocks) {
        lab.note(&format!("{r}"));
    }
    lab.note(&observe::State::read(lab).describe());
    let after = printed::check(lab, to);
    lab.note(&after.ran.stdout);
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn kustomize_2_2_0_to_helm_2_3_0() {
    let Some(mut lab) = Lab::start("kustomize-2.2.0-to-helm-2.3.0", &["2.2.0", "2.3.0"]) else { return };
    let from = |lab: &mut Lab| {
        lab.standin_start();
        let manifests = kustomize::manifests(lab, "v2.2.0", "v0.11.0");
        kustomize::install(lab, &manifests);
        users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
        users::mark_in_use(lab, "torch-distributed");
    };
    explore(&mut lab, "2.3.0", &from);
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_2_1_0_manager_labels_to_2_3_0() {
    let Some(mut lab) = Lab::start("helm-2.1.0-to-2.3.0", &["2.1.0", "2.3.0"]) else { return };
    let from = |lab: &mut Lab| {
        lab.standin_start();
        lab.shell_ok(&format!(
            "helm install {RELEASE} {} --version 2.1.0 -n {NAMESPACE} --create-namespace --plain-http --set manager.labels.team=ml-platform --wait --timeout 3m",
            lab.repo()
        ));
        users::apply(lab, &users::runtime_2_1("torch-distributed"));
        users::apply(lab, &users::trainjob_2_1("llama-ft", "torch-distributed"));
        users::mark_in_use(lab, "torch-distributed");
    };
    explore(&mut lab, "2.3.0", &from);
}

fn install_2_3_0(lab: &mut Lab) {
    lab.standin_start();
    let values = values(lab, "runtimes-all.yaml");
    lab.shell_ok(&format!(
        "helm install {RELEASE} {} --version 2.3.0 -n {NAMESPACE} --create-namespace --plain-http -f {values} --wait --timeout 3m",
        lab.repo()
    ));
    users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
    users::edit_builtin(lab, "deepspeed-distributed");
    users::own_runtime_with_installer_label(lab, "torch-distributed", "team-a-torch");
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_2_3_0_to_2_4_0() {
    let Some(mut lab) = Lab::start("helm-2.3.0-to-2.4.0", &["2.3.0", "2.3.1", "2.4.0"]) else { return };
    explore(&mut lab, "2.4.0", &install_2_3_0);
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn pending_upgrade() {
    let Some(mut lab) = Lab::start("pending-upgrade", &["2.2.1", "2.3.0"]) else { return };
    let from = |lab: &mut Lab| {
        lab.standin_start();
        let values = values(lab, "runtimes-all.yaml");
        lab.shell_ok(&format!(
            "helm install {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --create-namespace --plain-http -f {values} --wait --timeout 3m",
            lab.repo()
        ));
        users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
        // Killed while it waits: no stand-in, so the Deployments never become ready and Helm
        // waits (--wait) after applying the 2.3.0 objects; SIGKILL then, as a dying CI runner.
        lab.standin_stop();
        let applied = || {
            lab.release().0 == "pending-upgrade"
                && !lab.shell("kubectl get crd trainjobs.trainer.kubeflow.org -o jsonpath='{.metadata.annotations.meta\\.helm\\.sh/release-name}'").stdout.is_empty()
        };
        let ran = lab.shell_until(
            &format!("helm upgrade {RELEASE} {} --version 2.3.0 -n {NAMESPACE} --plain-http --reset-then-reuse-values --take-ownership --wait --timeout 10m", lab.repo()),
            &applied,
        );
        lab.note(&format!("{ran}"));
        lab.note(&observe::State::read(lab).describe());
        lab.standin_start();
    };
    explore(&mut lab, "2.3.0", &from);
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn restricted_namespace() {
    let Some(mut lab) = Lab::start("restricted-namespace", &["2.3.0", "2.3.1"]) else { return };
    let from = |lab: &mut Lab| {
        install_2_3_0(lab);
        lab.shell_ok(&format!("kubectl label namespace {NAMESPACE} pod-security.kubernetes.io/enforce=restricted"));
    };
    explore(&mut lab, "2.3.1", &from);
}
