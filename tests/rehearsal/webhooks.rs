//! The real Trainer 2.3.0 controller manager and the real JobSet 0.12.0 controller as the chart's
//! Pods, with admission webhooks on (`testkit::controlplane::Webhooks::On`): the stand-in runs
//! each built binary for its Deployment's Pod — the chart's `--config`, the Deployment's command
//! and arguments, a token of the chart's ServiceAccount — Trainer's in the control plane's
//! network namespace, JobSet's (which binds the same ports) in one of its own joined to it by a
//! veth pair, and the API server calls their webhooks at the Pod IPs kube-controller-manager's
//! endpointslice-controller publishes. A TrainJob then runs the whole chain: the Trainer manager
//! makes its JobSet, the JobSet controller the Jobs, the job controller the Pods, the team
//! namespace's stand-in runs them, and the TrainJob completes.

use serde_json::Value as Json;
use testkit::controlplane::Webhooks;
use testkit::standin::Record;

use crate::controllers::MANAGER_2_3_0;
use crate::lab::{Lab, NAMESPACE, RELEASE};
use crate::running::{self, poll, JOBSET_0_12_0, JOBSET_MUTATING, JOBSET_SECRET, JOBSET_SERVICE, JOBSET_VALIDATING};
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
         tail -n 80 {dir}/standin-*/*/manager.log {dir}/standin-*/*/controller.log 2>&1; grep -i webhook {dir}/kube-apiserver.log | tail -n 20",
        dir = lab.cp.dir.display()
    ));
    format!("stand-in: {:#?}\n{}{}", lab.standin_records(), cluster.stdout, cluster.stderr)
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

/// Helm 2.3.0 installed with admission webhooks on, the real 2.3.0 manager and JobSet 0.12.0
/// controller serving them, a TrainJob run to completion through both; then the upgrade to the
/// relabelled 2.3.1 (same images) as `plan` would run it.
pub fn real_manager_serves_the_2_3_webhooks() {
    let Some(mut lab) = Lab::start_with("webhooks-2.3.0", &["2.3.0", "2.3.1"], Webhooks::On) else { return };
    for binary in [MANAGER_2_3_0, JOBSET_0_12_0] {
        assert!(lab.cp.bin.join(binary).is_file(), "{binary} not built: run `cargo xtask controlplane`");
    }
    lab.standin_start();
    let values = values(&lab, "runtimes-all.yaml");
    let install = lab.shell(&format!(
        "helm install {RELEASE} {} --version 2.3.0 -n {NAMESPACE} --create-namespace --plain-http -f {values} --wait --timeout 4m",
        lab.repo()
    ));
    if !install.ok() {
        panic!("install failed:\n{install}\n{}", diagnose(&lab));
    }

    // 1. Both controllers run as their Pods, with the Pods' own command lines, and are Ready
    //    (exits a cluster sees too are allowed, see `running::healthy`).
    let records = lab.standin_records();
    let started: Vec<&Record> = records.iter().filter(|r| matches!(r, Record::ControllerStarted { .. })).collect();
    lab.note(&format!("controller records: {started:?}"));
    let argv_of = |binary: &str| {
        started.iter().find_map(|r| match r {
            Record::ControllerStarted { binary: b, argv, .. } if b == binary => Some(argv.clone()),
            _ => None,
        })
    };
    assert_eq!(
        argv_of(MANAGER_2_3_0).unwrap_or_else(|| panic!("{MANAGER_2_3_0} not started: {records:#?}")),
        ["/manager", "--config=/controller_manager_config.yaml"]
    );
    assert_eq!(
        argv_of(JOBSET_0_12_0).unwrap_or_else(|| panic!("{JOBSET_0_12_0} not started: {records:#?}")),
        ["/manager", "--zap-log-level=2", "--config=/controller_manager_config.yaml"]
    );
    for binary in [MANAGER_2_3_0, JOBSET_0_12_0] {
        for pod in running::pods_of(&records, binary) {
            running::healthy(&records, &pod).unwrap_or_else(|e| panic!("{e}\n{}", diagnose(&lab)));
        }
    }

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

    // JobSet's rotator did the same for its Secret, which the 2.3.0 chart's JobSet subchart
    // declares with the four keys empty (TA-NB-007's premise).
    let jobset_secret = lab.get_json(&format!("secret -n {NAMESPACE} {JOBSET_SECRET} --show-managed-fields"));
    for key in SECRET_KEYS {
        assert!(jobset_secret["data"][key].as_str().is_some_and(|v| !v.is_empty()), "{JOBSET_SECRET}: {key} not written: {jobset_secret}");
    }
    let jobset_managers = field_managers(&jobset_secret, "/fieldsV1/f:data");
    lab.note(&format!("Secret {JOBSET_SECRET}: data keys written; data managed by {jobset_managers:?}"));
    let jobset_ca = jobset_secret["data"]["ca.crt"].as_str().unwrap().to_string();
    for (kind, name) in [("validatingwebhookconfiguration", JOBSET_VALIDATING), ("mutatingwebhookconfiguration", JOBSET_MUTATING)] {
        let config = lab.get_json(&format!("{kind} {name}"));
        let bundles: Vec<&str> =
            config["webhooks"].as_array().into_iter().flatten().filter_map(|w| w["clientConfig"]["caBundle"].as_str()).collect();
        assert!(!bundles.is_empty() && bundles.iter().all(|b| *b == jobset_ca), "{kind} {name}: caBundle not JobSet's CA: {config}");
        lab.note(&format!("{kind} {name}: {} webhooks, caBundle = {JOBSET_SECRET}'s ca.crt", bundles.len()));
    }

    // 3. The endpoints the API server calls: each controller's Pod IP, published by the real
    //    endpointslice controller for its webhook Service — each in a network namespace of its
    //    own, reached over its veth pair.
    let endpoints = |service: &str| {
        lab.shell_ok(&format!(
            "kubectl get endpointslices -n {NAMESPACE} -l kubernetes.io/service-name={service} -o jsonpath='{{.items[*].endpoints[*].addresses[*]}}'"
        ))
        .stdout
        .trim()
        .to_string()
    };
    let (trainer_ip, jobset_ip) = (endpoints(&format!("{RELEASE}-controller-manager")), endpoints(JOBSET_SERVICE));
    lab.note(&format!("webhook Service endpoints: Trainer {trainer_ip}, JobSet {jobset_ip}"));
    // The Pod IP of the Pods the Service selects (the ready ones are its endpoints).
    let pod_ip = |service: &str| {
        let selector = lab.get_json(&format!("service {service} -n {NAMESPACE}"))["spec"]["selector"].clone();
        let labels: Vec<String> =
            selector.as_object().into_iter().flatten().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect();
        lab.shell_ok(&format!("kubectl get pods -n {NAMESPACE} -l {} -o jsonpath='{{.items[*].status.podIP}}'", labels.join(",")))
            .stdout
            .trim()
            .to_string()
    };
    assert_eq!(trainer_ip, pod_ip(&format!("{RELEASE}-controller-manager")));
    assert_eq!(jobset_ip, pod_ip(JOBSET_SERVICE));
    assert!(
        trainer_ip.starts_with("10.244.0.") && jobset_ip.starts_with("10.244.0.") && trainer_ip != jobset_ip,
        "{trainer_ip} {jobset_ip}"
    );

    // The whole chain for a TrainJob whose trainer command runs here: admitted by Trainer's
    // webhooks, its JobSet admitted by JobSet's, the Jobs made by the JobSet controller, the Pods
    // by the job controller, run by the team namespace's stand-in; the TrainJob completes.
    let team = running::team_namespace(&lab);
    users::apply(&lab, &running::runnable_trainjob("smoke", "torch-distributed", 2, "echo training on $(hostname); exit 0"));
    let conditions = running::wait_condition(&lab, &team, "smoke", "Complete", 180);
    let (jobs, pods) = running::owned_chain(&lab, "smoke");
    let ran: Vec<(String, i32)> = team
        .records()
        .iter()
        .filter_map(|r| match r {
            Record::ContainerRan { pod, exit_code, .. } => Some((pod.clone(), *exit_code)),
            _ => None,
        })
        .collect();
    lab.note(&format!("TrainJob {TEAM}/smoke: conditions {conditions:?}; Jobs {jobs:?}; Pods {pods:?}; containers run {ran:?}"));
    assert!(!jobs.is_empty(), "no Job owned by the JobSet smoke\n{}", running::chain(&lab, "smoke"));
    assert_eq!(pods.len(), 2, "two nodes, two Pods: {pods:?}\n{}", running::chain(&lab, "smoke"));
    assert!(pods.iter().all(|p| ran.iter().any(|(q, code)| q == p && *code == 0)), "{ran:?} vs {pods:?}");
    lab.note("TrainJob → JobSet → Jobs → Pods → Complete through the real Trainer, JobSet and job controllers");

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
    let upgrade_command = format!(
        "helm upgrade {RELEASE} {} --version 2.3.1 -n {NAMESPACE} --plain-http --reset-then-reuse-values --set image.tag=v2.3.0 --wait --timeout 4m",
        lab.repo()
    );
    let upgrade = lab.shell(&upgrade_command);
    lab.note(&format!("upgrade to 2.3.1: {upgrade}"));
    // Trainer's own Secret declares no keys in 2.3: never the object of a conflict.
    let trainer_conflict = format!("conflict occurred while applying object {NAMESPACE}/{CERT_SECRET}");
    assert!(!upgrade.stderr.contains(&trainer_conflict), "{upgrade}");
    // JobSet's Secret does declare them, and JobSet's rotator rewrote them: TA-NB-007's conflict.
    let jobset_conflict = format!("conflict occurred while applying object {NAMESPACE}/{JOBSET_SECRET}");
    if upgrade.stderr.contains(&jobset_conflict) {
        assert!(!upgrade.ok());
        let predicted = nb007.iter().any(|f| f.subject.contains(JOBSET_SECRET) || f.message.contains(JOBSET_SECRET));
        assert!(predicted, "the conflict on {JOBSET_SECRET} happened and check did not predict it: {nb007:?}\n{upgrade}");
        lab.note(&format!(
            "OBSERVED TA-NB-007 (the conflict, on the 2.3 chart's JobSet subchart Secret {JOBSET_SECRET}; predicted by check: {predicted})"
        ));
        // The way through the rule names: force the apply (Helm writes the empty keys back over
        // the certificate; JobSet's rotator, which watches its Secret, writes a new one).
        let forced = lab.shell(&format!("{upgrade_command} --force-conflicts"));
        lab.note(&format!("the same upgrade with --force-conflicts: {forced}"));
        assert!(forced.ok(), "{forced}\n{}", diagnose(&lab));
    } else {
        assert!(upgrade.ok(), "{upgrade}\n{}", diagnose(&lab));
        lab.note(&format!("no conflict on {JOBSET_SECRET} either"));
    }
    let after = lab.get_json(&format!("secret -n {NAMESPACE} {CERT_SECRET}"));
    assert_eq!(after["data"]["ca.crt"].as_str(), Some(ca.as_str()), "the upgrade changed the certificate");
    lab.note("TA-NB-007 on Trainer's own Secret (2.3 → 2.3.1, Helm 4 server-side): no conflict; the rotator's keys kept");
    // Still served after the upgrade: a TrainJob through both controllers' webhooks (JobSet's
    // with whatever certificate its rotator serves now) runs to completion again.
    users::apply(&lab, &running::runnable_trainjob("after-upgrade", "torch-distributed", 1, "echo after the upgrade"));
    let conditions = running::wait_condition(&lab, &team, "after-upgrade", "Complete", 240);
    lab.note(&format!("TrainJob {TEAM}/after-upgrade: {conditions:?}"));
    let jobset_after = lab.get_json(&format!("secret -n {NAMESPACE} {JOBSET_SECRET}"));
    lab.note(&format!(
        "{JOBSET_SECRET} after the upgrade: ca.crt {}",
        if jobset_after["data"]["ca.crt"].as_str() == Some(jobset_ca.as_str()) { "unchanged" } else { "rewritten" }
    ));
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

    gang_scheduler_crd_missing(&lab);
    crds_too_large_for_client_side_apply(&lab);
}

/// TA-NB-002 with the real 2.3.0 manager: a runtime asking for coscheduling on a cluster without
/// scheduler-plugins' PodGroup CRD. `check` reports the error on it; the manager skipped the
/// plugin's watches at start without a word (the message it means to log goes to an unset
/// logger), and a TrainJob on the runtime gets no JobSet: the manager's build of its PodGroup is
/// refused by its REST mapper.
fn gang_scheduler_crd_missing(lab: &Lab) {
    let mut runtime = lab.get_json("clustertrainingruntime torch-distributed");
    let metadata = serde_json::json!({"name": "team-gang"});
    runtime["metadata"] = metadata;
    runtime["spec"]["podGroupPolicy"] = serde_json::json!({"coscheduling": {"scheduleTimeoutSeconds": 60}});
    runtime.as_object_mut().unwrap().remove("status");
    lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{runtime}\nEOF"));
    let check = printed::check(lab, "2.3.1");
    let gang: Vec<&printed::Finding> = check.errors().into_iter().filter(|f| f.id == "TA-NB-002").collect();
    assert!(gang.iter().any(|f| f.subject.contains("team-gang")), "check reports no TA-NB-002 error on team-gang: {:?}", check.summary());
    // The plugin means to log "PodGroup CRDs must be installed in advance" when it skips its
    // watches, but its logger is never set (coscheduling.go `New`): nothing is logged.
    let logs = lab.controller_logs();
    assert!(
        !logs.contains("PodGroup CRDs must be installed in advance"),
        "the 2.3.0 manager now says it skips coscheduling: update TA-NB-002's why"
    );
    users::apply(lab, &running::runnable_trainjob("gang", "team-gang", 2, "echo gang"));
    let refused = running::poll(90, || {
        let events = lab.shell(&format!(
            "kubectl get events -n {TEAM} --field-selector involvedObject.name=gang -o custom-columns=MESSAGE:.message --no-headers"
        ));
        events.stdout.lines().find(|l| l.contains("no matches for kind \"PodGroup\"")).map(String::from)
    });
    let jobset = lab.shell(&format!("kubectl get jobset gang -n {TEAM} -o name"));
    lab.note(&format!("TrainJob {TEAM}/gang on team-gang: Event {refused:?}; JobSet: {}", if jobset.ok() { "made" } else { "none" }));
    let refused = refused.unwrap_or_else(|| {
        panic!("no Event names the missing PodGroup kind:\n{}", lab.shell(&format!("kubectl get events -n {TEAM}")).stdout)
    });
    assert!(!jobset.ok(), "a JobSet was made for a TrainJob whose PodGroup cannot be: {jobset}");
    lab.note(&format!("OBSERVED TA-NB-002 ClusterTrainingRuntime/team-gang: the manager skipped coscheduling at start and refused the TrainJob: {refused}"));
    lab.shell_ok(&format!(
        "kubectl delete trainjob gang -n {TEAM} --wait=false && kubectl delete clustertrainingruntime team-gang --wait=false"
    ));
}

/// TA-HOOK-104's failure, the API server's: the 2.3 runtime CRDs applied client-side (as Argo
/// CD applies by default, `kubectl apply` keeping the whole object in its last-applied
/// annotation) are refused for the annotation's size; `hooks --engine argocd` predicts it.
fn crds_too_large_for_client_side_apply(lab: &Lab) {
    let chart = lab.corpus.join("charts/kubeflow-trainer-2.3.0.tgz");
    let review = lab.audit_offline(&["hooks", &chart.display().to_string(), "--engine", "argocd", "--format", "json"]);
    assert!(review.stdout.contains("TA-HOOK-104"), "hooks --engine argocd does not report TA-HOOK-104:\n{review}");
    // The CRD as the chart renders it (the live one, with what the server added taken off).
    let mut crd = lab.get_json("crd clustertrainingruntimes.trainer.kubeflow.org");
    crd.as_object_mut().unwrap().remove("status");
    crd["metadata"] = serde_json::json!({"name": "clustertrainingruntimes.trainer.kubeflow.org"});
    std::fs::write(lab.run_dir().join("runtime-crd.json"), crd.to_string()).unwrap();
    let applied = lab.shell("kubectl apply -f runtime-crd.json");
    let expected = "metadata.annotations: Too long: may not be more than 262144 bytes";
    assert!(
        !applied.ok() && applied.stderr.contains(expected),
        "client-side apply of the 2.3 runtime CRD was to be refused with {expected:?}:\n{applied}"
    );
    lab.note(&format!(
        "OBSERVED TA-HOOK-104: kubectl apply (client-side) of the 2.3 ClusterTrainingRuntime CRD: {}",
        applied.stderr.trim()
    ));
}
