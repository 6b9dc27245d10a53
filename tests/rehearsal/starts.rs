//! Starting points beyond the first rehearsals (issue 20 §2, §2b): a Helm 2.0.0 install with a
//! TrainJob in the 2.0 schema (`spec.podSpecOverrides`) and a Helm 2.2.0 install, each → 2.3.0
//! like the others; and the downgrade 2.3.0 → 2.2.1, where the plain `helm upgrade` deletes the
//! templated CRDs and every TrainJob with them, the plan's command refuses to run until the CRDs
//! keep, and the runbook gets there with everything kept.

use crate::lab::{self, Lab, NAMESPACE, RELEASE};
use crate::{observe, printed, rehearse, users, Scenario};

/// A TrainJob in the 2.0 schema: `podSpecOverrides` (2.1 renamed it `podTemplateOverrides`, with
/// the pod spec fields under `spec`), `labels`, and a string `numProcPerNode`.
fn trainjob_2_0(name: &str, runtime: &str) -> String {
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}, namespace: {}}}
spec:
  runtimeRef: {{name: {runtime}}}
  labels: {{cost-center: research}}
  trainer:
    image: registry.example.com/team-a/train:1.4
    command: [torchrun, train.py]
    numNodes: 2
    numProcPerNode: auto
  podSpecOverrides:
  - targetJobs: [{{name: node}}]
    nodeSelector: {{gpu-pool: a100}}
    tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
"#,
        users::TEAM
    )
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_helm_2_0_0_to_2_3_0() {
    rehearse(&Scenario {
        name: "helm-2.0.0-to-2.3.0",
        versions: &["2.0.0", "2.3.0"],
        to: "2.3.0",
        errors: &["TA-OWN-001", "TA-FLD-001"],
        from: |lab| {
            lab.standin_start();
            lab.shell_ok(&format!(
                "helm install {RELEASE} {} --version 2.0.0 -n {NAMESPACE} --create-namespace --plain-http --wait --timeout 3m",
                lab.repo()
            ));
            users::apply(lab, &users::runtime_2_1("torch-distributed"));
            users::apply(lab, &trainjob_2_0("llama-ft", "torch-distributed"));
            users::mark_in_use(lab, "torch-distributed");
        },
        // With the 2.3 CRDs taken over, the 2.3.0 manager cannot list the TrainJob whose
        // numProcPerNode is still "auto" (TA-SCH-001): it never becomes Ready and Helm waits out
        // its --timeout 10m; the attempt stops once the manager has said why.
        stop_when: Some(|lab| lab.controller_logs().contains("json: cannot unmarshal string into Go struct field")),
        install_as: None,
    });
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_helm_2_2_0_to_2_3_0() {
    rehearse(&Scenario {
        name: "helm-2.2.0-to-2.3.0",
        versions: &["2.2.0", "2.3.0"],
        to: "2.3.0",
        errors: &["TA-OWN-001"],
        from: |lab| {
            lab.standin_start();
            crate::install_with_runtimes(lab, "2.2.0");
            users::apply(lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
            users::mark_in_use(lab, "torch-distributed");
        },
        stop_when: None,
        install_as: None,
    });
}

/// 2.3.0 → 2.2.1: check blocks it (TA-DIR-001); the plain downgrade the tool used to print
/// deletes the CRDs and the TrainJobs (observed); the plan's guarded command refuses while the
/// CRDs lack keep; the runbook, run verbatim, downgrades with every CRD and TrainJob kept.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn rehearse_helm_2_3_0_downgrade_to_2_2_1() {
    let to = "2.2.1";
    let Some(mut lab) = Lab::start("helm-2.3.0-downgrade-to-2.2.1", &["2.2.1", "2.3.0"]) else { return };
    crate::install_2_3_0(&mut lab, false);
    let check = printed::check(&lab, to);
    assert_eq!(check.ran.code, Some(1), "check must block a downgrade:\n{}", check.ran.stdout);
    assert!(check.errors().iter().any(|f| f.id == "TA-DIR-001"), "no TA-DIR-001: {:?}", check.summary());

    // What was printed before: a plain helm upgrade to the lower version (with --force-conflicts:
    // without it Helm 4 stops at the installer's field ownership of the runtimes, seen here,
    // before it deletes anything).
    // It deletes the CRDs and then waits out its --timeout on the 2.2.1 runtimes (their CRD is
    // gone): it is stopped once the TrainJob CRD is, what is observed until then is what counts.
    let before = observe::State::read(&lab);
    let started = std::time::Instant::now();
    let plain = lab.shell_until(
        &format!(
            "helm upgrade {RELEASE} {} --version {to} -n {NAMESPACE} --plain-http --reset-then-reuse-values --take-ownership --force-conflicts --wait --timeout 3m",
            lab.repo()
        ),
        &|| started.elapsed() > lab::COMMAND_LIMIT || !lab.shell("kubectl get crd trainjobs.trainer.kubeflow.org -o name").ok(),
    );
    let after = observe::State::read(&lab);
    lab.note(&format!("plain downgrade: {plain}\nbefore: {}\nafter:  {}", before.describe(), after.describe()));
    assert!(!before.trainjobs.is_empty() && after.trainjobs.is_empty(), "the plain downgrade kept the TrainJobs: {}", after.describe());
    assert!(after.crds.len() < observe::TRAINER_CRDS.len(), "the plain downgrade kept every CRD: {:?}", after.crds);

    // The plan's command refuses to run while a CRD lacks keep.
    lab.reset();
    crate::install_2_3_0(&mut lab, false);
    let (plan, commands) = printed::plan_upgrade_commands(&lab, to);
    let refused = lab.shell(&commands[0]);
    assert!(!refused.ok() && refused.stderr.contains("downgrade stopped"), "{refused}\n{plan}");
    assert_eq!(lab.release().1, "kubeflow-trainer-2.3.0", "the refused command changed the release");

    // The runbook, verbatim.
    let before = observe::State::read(&lab);
    let (runbook, blocks) = printed::runbook(&lab, to);
    let results = printed::run_blocks(&lab, &blocks);
    let last = results.last().expect("at least one block");
    assert!(
        results.len() == blocks.len() && last.ok(),
        "runbook block {}/{} failed:\n{last}\n--- runbook ---\n{runbook}",
        results.len(),
        blocks.len()
    );
    let after = observe::State::read(&lab);
    lab.note(&format!("runbook done: {}", after.describe()));
    assert_eq!(after.release, ("deployed".to_string(), format!("kubeflow-trainer-{to}")));
    assert_eq!(after.crds.len(), observe::TRAINER_CRDS.len(), "CRDs after the runbook: {:?}", after.crds);
    for key in before.trainjobs.keys() {
        assert!(after.trainjobs.contains_key(key), "TrainJob {key} lost by the runbook");
    }
}
