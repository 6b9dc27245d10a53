//! The real Trainer 2.3.0 controller manager as the chart's Pod, with admission webhooks on
//! (`testkit::controlplane::Webhooks::On`): the stand-in runs the built binary for the
//! Deployment's Pod — the chart's `--config`, the Deployment's command and arguments, a token of
//! the chart's ServiceAccount — in the control plane's network namespace, and the API server calls
//! its webhooks at the Pod IP kube-controller-manager's endpointslice-controller publishes.
//!
//! JobSet is installed as its CRD only (`--set jobset.install=false`, the chart's setting for a
//! JobSet installed separately): no JobSet controller is built here, and the JobSet subchart's
//! webhooks (failurePolicy Fail) would refuse every JobSet the Trainer controller creates.

use serde_json::Value as Json;
use testkit::controlplane::Webhooks;
use testkit::standin::Record;

use crate::controllers::MANAGER_2_3_0;
use crate::lab::{Lab, NAMESPACE, RELEASE};
use crate::users::{self, TEAM};
use crate::{printed, values};

/// The webhook certificate Secret of the 2.3 chart (`trainer.webhook.secret.name`).
const CERT_SECRET: &str = "kubeflow-trainer-webhook-cert";
const VALIDATING: &str = "validator.trainer.kubeflow.org";
const MUTATING: &str = "defaulter.trainer.kubeflow.org";
const SECRET_KEYS: [&str; 4] = ["ca.crt", "ca.key", "tls.crt", "tls.key"];

/// What to look at when the controller does not come up: the stand-in's records, the Pods, the
/// webhook Service's endpoints, the manager's log.
fn diagnose(lab: &Lab) -> String {
    let cluster = lab.shell(&format!(
        "kubectl get pods,endpointslices,jobs -n {NAMESPACE} -o wide 2>&1; kubectl get events -A 2>&1 | tail -n 30; \
         tail -n 80 {dir}/standin-*/*/manager.log 2>&1; grep -i webhook {dir}/kube-apiserver.log | tail -n 20",
        dir = lab.cp.dir.display()
    ));
    format!("stand-in: {:#?}\n{}{}", lab.standin_records(), cluster.stdout, cluster.stderr)
}

/// Polls `probe` every second for up to `secs`; the last value.
fn poll<T>(secs: u64, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..secs {
        if let Some(v) = probe() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    probe()
}

/// Applies the JobSet CRD of the chart's own subchart, as a separately installed JobSet would
/// have it.
fn jobset_crd(lab: &Lab, version: &str) {
    let work = lab.dir.path().join(format!("chart-{version}"));
    std::fs::create_dir_all(&work).unwrap();
    let archive = lab.corpus.join(format!("charts/kubeflow-trainer-{version}.tgz"));
    lab.shell_ok(&format!("tar -xzf {} -C {}", archive.display(), work.display()));
    lab.shell_ok(&format!(
        "kubectl apply --server-side -f {}",
        work.join("kubeflow-trainer/charts/jobset/crds/jobset.x-k8s.io_jobsets.yaml").display()
    ));
}

fn field_managers(object: &Json, path: &str) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m.pointer(path).is_some())
        .filter_map(|m| m["manager"].as_str().map(String::from))
        .collect()
}

/// A ClusterTrainingRuntime the 2.3 runtime webhook refuses: the trainer ancestor's
/// replicatedJob with 2 replicas (`validateReplicatedJobs`: "always must be 1").
fn invalid_runtime(name: &str, bypass: bool) -> String {
    let labels = if bypass { "\n  labels: {trainer.kubeflow.org/webhook-validation: disabled}" } else { "" };
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: {name}{labels}
spec:
  mlPolicy: {{numNodes: 1}}
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 2
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: registry.example.com/team-a/train:1.4
"#
    )
}

/// Helm 2.3.0 installed with admission webhooks on, the real 2.3.0 manager serving them; then
/// the upgrade to the relabelled 2.3.1 (same manager image) as `plan` would run it.
pub fn real_manager_serves_the_2_3_webhooks() {
    let Some(mut lab) = Lab::start_with("webhooks-2.3.0", &["2.3.0", "2.3.1"], Webhooks::On) else { return };
    assert!(lab.cp.bin.join(MANAGER_2_3_0).is_file());
    lab.standin_start();
    jobset_crd(&lab, "2.3.0");
    let values = values(&lab, "runtimes-all.yaml");
    let install = lab.shell(&format!(
        "helm install {RELEASE} {} --version 2.3.0 -n {NAMESPACE} --create-namespace --plain-http -f {values} --set jobset.install=false --wait --timeout 3m",
        lab.repo()
    ));
    if !install.ok() {
        panic!("install failed:\n{install}\n{}", diagnose(&lab));
    }

    // 1. The manager runs as the Pod, with the Pod's own command line, and became Ready.
    let records = lab.standin_records();
    let started: Vec<&Record> = records.iter().filter(|r| matches!(r, Record::ControllerStarted { .. })).collect();
    lab.note(&format!("controller records: {started:?}"));
    let Some(Record::ControllerStarted { binary, argv, .. }) = started.first() else { panic!("no controller started: {records:#?}") };
    assert_eq!(binary, MANAGER_2_3_0);
    assert_eq!(argv, &["/manager".to_string(), "--config=/controller_manager_config.yaml".to_string()]);
    assert!(records.iter().any(|r| matches!(r, Record::ControllerReady { .. })), "{records:#?}");
    // It does not crash once it runs. Two exits are what a cluster sees too, and the stand-in
    // restarts the process after them as a kubelet does: before its first Ready, a start that
    // finds the CRDs Helm applied in the same release not yet served (seen in CI: "Could not
    // initialize runtimes … setting index on runtimeClass"), a crash loop that ends once they
    // are; after it, only controller-runtime's "leader election lost" on a loaded machine. The
    // last word is Ready.
    let mut ready = false;
    for r in &records {
        match r {
            Record::ControllerReady { .. } => ready = true,
            Record::ControllerExited { output, .. } if ready => {
                assert!(output.contains("leader election lost"), "the manager exited after it was Ready: {records:#?}");
                ready = false;
            }
            Record::ControllerExited { .. } => ready = false,
            _ => {}
        }
    }
    assert!(ready, "the manager is not Ready after its last exit: {records:#?}");

    // 2. Its cert rotator wrote the Secret's keys and the webhook configurations' caBundle
    //    (TA-NB-007's mechanism): who owns what, read from managedFields.
    let secret = lab.get_json(&format!("secret -n {NAMESPACE} {CERT_SECRET} --show-managed-fields"));
    for key in SECRET_KEYS {
        assert!(secret["data"][key].as_str().is_some_and(|v| !v.is_empty()), "{key} not written: {secret}");
    }
    let data_managers = field_managers(&secret, "/fieldsV1/f:data");
    lab.note(&format!("Secret {CERT_SECRET}: data keys written; data managed by {data_managers:?}"));
    assert!(!data_managers.iter().any(|m| m == "helm"), "Helm manages the Secret's data: {data_managers:?}");
    assert!(!data_managers.is_empty(), "nobody manages the Secret's data: {secret}");
    let ca = secret["data"]["ca.crt"].as_str().unwrap().to_string();
    for (kind, name) in [("validatingwebhookconfiguration", VALIDATING), ("mutatingwebhookconfiguration", MUTATING)] {
        let config = lab.get_json(&format!("{kind} {name} --show-managed-fields"));
        let bundles: Vec<&str> =
            config["webhooks"].as_array().into_iter().flatten().filter_map(|w| w["clientConfig"]["caBundle"].as_str()).collect();
        assert!(!bundles.is_empty() && bundles.iter().all(|b| *b == ca), "{kind} {name}: caBundle not the rotator's CA: {config}");
        lab.note(&format!("{kind} {name}: {} webhooks, caBundle = the Secret's ca.crt", bundles.len()));
    }

    // 3. The endpoint the API server calls: the Pod IP, published by the real endpointslice
    //    controller for the webhook Service.
    let slices = lab.shell_ok(&format!(
        "kubectl get endpointslices -n {NAMESPACE} -l kubernetes.io/service-name={RELEASE}-controller-manager -o jsonpath='{{.items[*].endpoints[*].addresses[*]}}'"
    ));
    lab.note(&format!("webhook Service endpoints: {}", slices.stdout));
    assert_eq!(slices.stdout.trim(), testkit::controlplane::netns::POD_IP);

    // 4. The installer hook's runtimes went through the real runtime webhook; a new TrainJob on a
    //    built-in runtime is admitted by the real TrainJob webhooks and gets its JobSet.
    lab.shell_ok("kubectl get clustertrainingruntime torch-distributed");
    users::apply(&lab, &users::trainjob_2_2("llama-ft", "torch-distributed"));
    let jobset = poll(90, || {
        let r = lab.shell(&format!("kubectl get jobset -n {TEAM} llama-ft -o json"));
        r.ok().then(|| serde_json::from_str::<Json>(&r.stdout).unwrap())
    })
    .unwrap_or_else(|| {
        let tj = lab.shell(&format!("kubectl get trainjob -n {TEAM} llama-ft -o yaml"));
        panic!("no JobSet for the admitted TrainJob within 90 s:\n{}\n{:#?}", tj.stdout, lab.standin_records())
    });
    let owner = jobset["metadata"]["ownerReferences"][0]["kind"].as_str().unwrap_or_default().to_string();
    lab.note(&format!("TrainJob {TEAM}/llama-ft admitted; JobSet {TEAM}/llama-ft created, owned by {owner}"));
    assert_eq!(owner, "TrainJob");
    let defaulted = lab.shell_ok(&format!("kubectl get trainjob -n {TEAM} llama-ft -o jsonpath='{{.spec.managedBy}}'"));
    lab.note(&format!("TrainJob spec.managedBy after the mutating webhook and defaults: {}", defaulted.stdout));

    // The 2.3 runtime snapshot beside the TrainJob (what TA-NB-005 counts).
    lab.shell_ok(&format!("kubectl get configmap -n {TEAM} llama-ft-runtime-snapshot"));
    lab.note(&format!("ConfigMap {TEAM}/llama-ft-runtime-snapshot written by the 2.3 manager"));

    // TA-NB-005: a namespace whose quota holds no more ConfigMaps; the 2.3 manager's snapshot
    // for a new TrainJob is refused, and with it the TrainJob's JobSet.
    lab.shell_ok(
        "kubectl create namespace team-quota
         kubectl create quota configmaps -n team-quota --hard=count/configmaps=0
         for i in $(seq 60); do kubectl get quota -n team-quota configmaps -o jsonpath='{.status.used}' | grep -q configmaps && break; sleep 1; done",
    );
    users::apply(
        &lab,
        &users::trainjob_2_2("llama-ft", "torch-distributed").replace(&format!("namespace: {TEAM}"), "namespace: team-quota"),
    );
    let refused = poll(90, || {
        let r = lab.shell_ok(
            "kubectl get events -n team-quota --field-selector reason=TrainJobResourcesCreationFailed -o jsonpath='{.items[*].message}'",
        );
        (!r.stdout.trim().is_empty()).then_some(r.stdout)
    })
    .unwrap_or_else(|| panic!("no TrainJobResourcesCreationFailed Event in team-quota within 90 s\n{}", diagnose(&lab)));
    lab.note(&format!("quota-bound namespace: Warning TrainJobResourcesCreationFailed: {}", refused.trim()));
    assert!(refused.contains("exceeded quota"), "{refused}");
    assert!(!lab.shell("kubectl get jobset -n team-quota llama-ft").ok(), "a JobSet was created despite the refused snapshot");
    lab.note("OBSERVED TA-NB-005 (the mechanism): the quota refused the 2.3 runtime snapshot, no JobSet");

    // TA-RT-002: the 2.3 controller strips the 2.0–2.2 controllers' resource-in-use finalizer
    // from a runtime (written here as that controller writes it).
    users::mark_in_use(&lab, "torch-distributed");
    let stripped = poll(60, || {
        let r = lab.shell_ok("kubectl get clustertrainingruntime torch-distributed -o jsonpath='{.metadata.finalizers}'");
        (!r.stdout.contains(users::IN_USE)).then_some(())
    });
    assert!(stripped.is_some(), "the 2.3 manager left {} on torch-distributed", users::IN_USE);
    lab.note(&format!("OBSERVED TA-RT-002: the 2.3 manager removed {} from torch-distributed", users::IN_USE));

    // 5. Rejections by the real webhooks. A TrainJob naming a runtime that does not exist (what
    //    TA-RT-001 warns of: "new ones naming it are rejected"):
    let missing = lab
        .shell(&format!("kubectl apply -f - <<'EOF'\n{}EOF", users::trainjob_2_2("names-a-deleted-runtime", "torch-distributed-deleted")));
    lab.note(&format!("TrainJob naming a missing runtime: exit {:?}: {}", missing.code, missing.stderr.trim()));
    assert!(!missing.ok(), "{missing}");
    for text in [
        "admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request",
        "specified clusterTrainingRuntime must be created before the TrainJob is created",
    ] {
        assert!(missing.stderr.contains(text), "missing {text:?} in:\n{missing}");
    }
    // TA-RT-004: an invalid runtime is refused by the runtime webhook, and admitted when it carries
    // the bypass label, which `check` warns of.
    let refused = lab.shell(&format!("kubectl apply -f - <<'EOF'\n{}EOF", invalid_runtime("team-a-invalid", false)));
    lab.note(&format!("invalid runtime: exit {:?}: {}", refused.code, refused.stderr.trim()));
    assert!(!refused.ok(), "{refused}");
    assert!(
        refused.stderr.contains("admission webhook \"validator.clustertrainingruntime.trainer.kubeflow.org\" denied the request"),
        "{refused}"
    );
    assert!(refused.stderr.contains("always must be 1"), "{refused}");
    let bypassed = lab.shell(&format!("kubectl apply -f - <<'EOF'\n{}EOF", invalid_runtime("team-a-bypass", true)));
    lab.note(&format!("the same runtime labelled webhook-validation=disabled: exit {:?}: {}", bypassed.code, bypassed.stdout.trim()));
    assert!(bypassed.ok(), "{bypassed}");

    // 6. `check` to the relabelled 2.3.1, then the upgrade as plan prints it (with the image tag the
    //    built manager has): the Secret the rotator rewrote must not conflict (2.3 declares no keys).
    let check = printed::check(&lab, "2.3.1");
    lab.note(&format!("check --to 2.3.1: {:?}", check.summary()));
    let bypass = check.findings.iter().find(|f| f.id == "TA-RT-004" && f.subject.contains("team-a-bypass"));
    assert!(bypass.is_some(), "check does not warn of the bypass label on team-a-bypass: {:?}", check.summary());
    lab.note(&format!("OBSERVED TA-RT-004 {}: admitted with the label, refused without it", bypass.unwrap().subject));
    let nb007: Vec<&printed::Finding> = check.findings.iter().filter(|f| f.id == "TA-NB-007").collect();
    lab.note(&format!("TA-NB-007 findings: {nb007:?}"));
    let upgrade = lab.shell(&format!(
        "helm upgrade {RELEASE} {} --version 2.3.1 -n {NAMESPACE} --plain-http --reset-then-reuse-values --set image.tag=v2.3.0 --wait --timeout 4m",
        lab.repo()
    ));
    lab.note(&format!("upgrade to 2.3.1: {upgrade}"));
    assert!(!upgrade.stderr.contains("conflict occurred while applying object"), "{upgrade}");
    assert!(upgrade.ok(), "{upgrade}");
    let after = lab.get_json(&format!("secret -n {NAMESPACE} {CERT_SECRET}"));
    assert_eq!(after["data"]["ca.crt"].as_str(), Some(ca.as_str()), "the upgrade changed the certificate");
    lab.note("TA-NB-007 (2.3 → 2.3.1, Helm 4 server-side): no conflict; the rotator's keys kept");
    // Still served after the upgrade.
    users::apply(&lab, &users::trainjob_2_2("after-upgrade", "deepspeed-distributed"));
    assert!(poll(90, || lab.shell(&format!("kubectl get jobset -n {TEAM} after-upgrade")).ok().then_some(())).is_some());
    lab.note(&format!(
        "stand-in after the upgrade: {:?}",
        lab.standin_records()
            .iter()
            .filter(|r| matches!(
                r,
                Record::ControllerStarted { .. }
                    | Record::ControllerStopped { .. }
                    | Record::ControllerExited { .. }
                    | Record::ControllerRestarted { .. }
            ))
            .collect::<Vec<_>>()
    ));
}
