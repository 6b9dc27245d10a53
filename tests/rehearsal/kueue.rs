//! Trainer 2.1.0 beside Kueue 0.17.0 with admission webhooks on (TA-NB-001, kubernetes-sigs/kueue
//! #11931): the 2.1.0 chart installed by the real Helm with its manager and its JobSet 0.10.1
//! subchart's controller running as their Pods; Kueue installed from the chart its module ships at
//! the v0.17.0 tag (packaged and valued as its release packages it), its manager running as its
//! Pod in a network namespace of its own, its own cert management writing its webhook Secret and
//! `caBundle`s; a ResourceFlavor, ClusterQueue and LocalQueue; then a TrainJob labelled
//! `kueue.x-k8s.io/queue-name`. What really happens is observed — the Workload, the TrainJob's
//! `suspend` and `runtimePatches`, Kueue's log — and `trainer-audit check` must predict it live.

use serde_json::Value as Json;
use testkit::controlplane::Webhooks;
use testkit::standin::StandIn;

use crate::lab::{Lab, NAMESPACE, RELEASE};
use crate::printed;
use crate::running::{self, poll};
use crate::users::{self, TEAM};

const MANAGER_2_1_0: &str = "trainer-controller-manager-v2.1.0";
const JOBSET_0_10_1: &str = "jobset-v0.10.1";
const KUEUE_0_17_0: &str = "kueue-v0.17.0";
const KUEUE_NAMESPACE: &str = "kueue-system";
const QUEUE: &str = "user-queue";

/// Kueue's log line when the runtime patch it wrote is missing from the TrainJob it admitted
/// (kubernetes-sigs/kueue v0.17.0 pkg/controller/jobs/trainjob/trainjob_controller.go#L294-L297).
pub const PATCH_NOT_FOUND: &str = "kueue runtime patch not found";

/// The quota objects a platform team creates: one flavour, one ClusterQueue, the team's
/// LocalQueue (Kueue 0.17's storage version, v1beta2).
fn queues() -> String {
    format!(
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: "8"}}
      - {{name: memory, nominalQuota: 32Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {QUEUE}, namespace: {TEAM}}}
spec: {{clusterQueue: cluster-queue}}
"#
    )
}

fn queued_trainjob(name: &str) -> String {
    running::runnable_trainjob(name, "torch-distributed", 1, "echo trained beside Kueue").replace(
        &format!("metadata: {{name: {name}, namespace: {TEAM}}}"),
        &format!("metadata: {{name: {name}, namespace: {TEAM}, labels: {{kueue.x-k8s.io/queue-name: {QUEUE}}}}}"),
    )
}

/// The Workload Kueue made for the TrainJob (owned by it), if any.
fn workload_of(lab: &Lab, trainjob: &str) -> Option<Json> {
    let list = lab.get_json(&format!("workloads.kueue.x-k8s.io -n {TEAM}"));
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| {
            w["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|r| r["kind"] == "TrainJob" && r["name"] == trainjob)
        })
        .cloned()
}

fn condition(object: &Json, kind: &str) -> Option<String> {
    object["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == kind).and_then(|c| c["status"].as_str().map(String::from))
}

pub fn trainer_2_1_0_beside_kueue_0_17_0() {
    let Some(mut lab) = Lab::start_with("kueue-0.17.0-trainer-2.1.0", &["2.1.0"], Webhooks::On) else { return };
    for binary in [MANAGER_2_1_0, JOBSET_0_10_1, KUEUE_0_17_0] {
        assert!(lab.cp.bin.join(binary).is_file(), "{binary} not built: run `cargo xtask controlplane`");
    }
    let chart = lab.cp.bin.join("charts").join(KUEUE_0_17_0);
    assert!(chart.join("Chart.yaml").is_file(), "the Kueue chart is not in {}: run `cargo xtask controlplane`", chart.display());

    // Kueue first, as the platform team runs it: the chart of the v0.17.0 tag packaged as
    // hack/helm-chart-package.sh packages the release (version 0.17.0, appVersion v0.17.0, the
    // manager image registry.k8s.io/kueue/kueue:v0.17.0, IfNotPresent), default configuration:
    // internal cert management on, trainer.kubeflow.org/trainjob among integrations.frameworks.
    let kueue = StandIn::start(&lab.cp, KUEUE_NAMESPACE).unwrap();
    let install = lab.shell(&format!(
        "helm package {} --version 0.17.0 --app-version v0.17.0 -d .\n\
         helm install kueue kueue-0.17.0.tgz -n {KUEUE_NAMESPACE} --create-namespace \
         --set controllerManager.manager.image.repository=registry.k8s.io/kueue/kueue \
         --set controllerManager.manager.image.tag=v0.17.0 --set controllerManager.manager.image.pullPolicy=IfNotPresent \
         --wait --timeout 4m",
        chart.display()
    ));
    assert!(install.ok(), "{install}\n{:#?}", kueue.records());
    let records = kueue.records();
    let pods = running::pods_of(&records, KUEUE_0_17_0);
    let kueue_pod = pods.last().unwrap_or_else(|| panic!("{KUEUE_0_17_0} not started: {records:#?}")).clone();
    let ready = poll(120, || running::healthy(&kueue.records(), &kueue_pod).ok());
    assert!(ready.is_some(), "{:?}\n{}", running::healthy(&kueue.records(), &kueue_pod), kueue.controller_log(&kueue_pod, "manager"));
    let config = lab.shell_ok(&format!(
        "kubectl get configmap kueue-manager-config -n {KUEUE_NAMESPACE} -o jsonpath='{{.data.controller_manager_config\\.yaml}}'"
    ));
    assert!(config.stdout.contains("trainer.kubeflow.org/trainjob"), "{}", config.stdout);
    // Kueue's own rotator wrote its Secret and the caBundles.
    let secret =
        lab.shell_ok(&format!("kubectl get secret kueue-webhook-server-cert -n {KUEUE_NAMESPACE} -o jsonpath='{{.data.tls\\.crt}}'"));
    assert!(!secret.stdout.trim().is_empty(), "kueue-webhook-server-cert has no tls.crt");
    let bundle = lab.shell_ok(
        "kubectl get mutatingwebhookconfiguration kueue-mutating-webhook-configuration -o jsonpath='{.webhooks[0].clientConfig.caBundle}'",
    );
    assert!(!bundle.stdout.trim().is_empty(), "no caBundle on Kueue's mutating webhooks");
    let ip = lab.shell_ok(&format!("kubectl get pod {kueue_pod} -n {KUEUE_NAMESPACE} -o jsonpath='{{.status.podIP}}'")).stdout;
    lab.note(&format!("Kueue 0.17.0 installed: Pod {kueue_pod} ({KUEUE_0_17_0}) Ready at Pod IP {ip}; its rotator wrote kueue-webhook-server-cert and the caBundles"));

    // Trainer 2.1.0 by the real Helm, chart defaults (its JobSet 0.10.1 subchart with it).
    lab.standin_start();
    let trainer = lab.shell(&format!(
        "helm install {RELEASE} {} --version 2.1.0 -n {NAMESPACE} --create-namespace --plain-http --wait --timeout 4m",
        lab.repo()
    ));
    assert!(trainer.ok(), "{trainer}\n{:#?}", lab.standin_records());
    let records = lab.standin_records();
    for binary in [MANAGER_2_1_0, JOBSET_0_10_1] {
        let pods = running::pods_of(&records, binary);
        let pod = pods.last().unwrap_or_else(|| panic!("{binary} not started: {records:#?}")).clone();
        let ready = poll(120, || running::healthy(&lab.standin_records(), &pod).ok());
        assert!(ready.is_some(), "{binary}: {:?}", running::healthy(&lab.standin_records(), &pod));
    }
    lab.note("Trainer 2.1.0 installed: the 2.1.0 manager and JobSet 0.10.1 Ready as their Pods");
    let crd = lab.shell_ok("kubectl get crd trainjobs.trainer.kubeflow.org -o json").stdout;
    assert!(!crd.contains("runtimePatches"), "the 2.1.0 TrainJob CRD declares runtimePatches");

    // The platform team's queues, a runtime, and the user's TrainJob labelled for the queue.
    let team = running::team_namespace(&lab);
    users::apply(&lab, &queues());
    // A 2.1 ClusterTrainingRuntime (2.1's chart ships none), numProcPerNode a number (valid in
    // 2.1's int-or-string and in the 2.2 API Kueue 0.17 reads runtimes with).
    users::apply(&lab, &users::torch_runtime("torch-distributed", "{numProcPerNode: 1}"));
    let check = printed::check(&lab, "2.1.0");
    // As the user submits it (`kubectl apply`, strict field validation by default): whatever the
    // API server says about the field it drops from the webhook's patch is shown here.
    let submitted = lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{}EOF", queued_trainjob("queued")));
    lab.note(&format!("kubectl apply of the queued TrainJob: stdout {:?}, stderr {:?}", submitted.stdout.trim(), submitted.stderr.trim()));

    // Kueue's webhook suspended it and wrote a runtime patch, which the 2.1 CRD pruned.
    let (_, object) = running::trainjob(&lab, "queued");
    lab.note(&format!(
        "TrainJob queued as stored: suspend {}, runtimePatches {}",
        object["spec"]["suspend"], object["spec"]["runtimePatches"]
    ));
    assert_eq!(object["spec"]["suspend"], Json::Bool(true), "Kueue's webhook did not suspend the TrainJob: {object}");
    assert!(object["spec"].get("runtimePatches").is_none(), "runtimePatches survived the 2.1 CRD: {object}");

    // The Workload is admitted; the TrainJob never starts; Kueue says why.
    let workload = poll(120, || workload_of(&lab, "queued").filter(|w| condition(w, "Admitted").as_deref() == Some("True")))
        .unwrap_or_else(|| {
            panic!("no admitted Workload for TrainJob queued: {:?}\n{}", workload_of(&lab, "queued"), running::chain(&lab, "queued"))
        });
    lab.note(&format!(
        "Workload {} admitted: QuotaReserved={:?} Admitted={:?} (ClusterQueue {})",
        workload["metadata"]["name"],
        condition(&workload, "QuotaReserved"),
        condition(&workload, "Admitted"),
        workload["status"]["admission"]["clusterQueue"]
    ));
    let said = poll(120, || {
        let log = kueue.controller_log(&kueue_pod, "manager");
        log.lines().find(|l| l.contains(PATCH_NOT_FOUND)).map(String::from)
    })
    .unwrap_or_else(|| panic!("Kueue never logged {PATCH_NOT_FOUND:?}:\n{}", kueue.controller_log(&kueue_pod, "manager")));
    lab.note(&format!("Kueue's log: {said}"));
    // Still suspended a minute after admission, with no Pod.
    std::thread::sleep(std::time::Duration::from_secs(60));
    let (conditions, object) = running::trainjob(&lab, "queued");
    let chain = running::chain(&lab, "queued");
    lab.note(&format!(
        "TrainJob queued a minute after admission: suspend {}, conditions {conditions:?}\n{chain}",
        object["spec"]["suspend"]
    ));
    assert_eq!(object["spec"]["suspend"], Json::Bool(true), "the TrainJob started: {chain}");
    let (_, pods) = running::owned_chain(&lab, "queued");
    assert!(pods.is_empty(), "Pods were created for the suspended TrainJob: {pods:?}");
    // Trainer 2.1 made the JobSet, suspended, as it does for a suspended TrainJob: what Kueue's
    // start looks for before it looks for its patch.
    let jobset = lab.get_json(&format!("jobset -n {TEAM} queued"));
    assert_eq!(jobset["spec"]["suspend"], Json::Bool(true), "{jobset}");
    let log = kueue.controller_log(&kueue_pod, "manager");
    let tries = log.lines().filter(|l| l.contains(PATCH_NOT_FOUND)).count();
    lab.note(&format!("Kueue's log has {tries} lines with {PATCH_NOT_FOUND:?} (the start retried with back-off)"));
    let events = lab.shell(&format!("kubectl get events -n {TEAM} -o custom-columns=REASON:.reason,MESSAGE:.message --no-headers"));
    lab.note(&format!("events in {TEAM}:\n{}", events.stdout));

    // check predicted it, live, before the TrainJob was submitted.
    let hit = check.findings.iter().find(|f| f.id == "TA-NB-001");
    assert!(hit.is_some_and(|f| f.severity == "error"), "check did not predict TA-NB-001 as an error: {:?}", check.summary());
    let hit = hit.unwrap();
    lab.note(&format!("check predicted TA-NB-001 ({}): {}", hit.subject, hit.message));
    assert!(hit.message.contains("runtimePatches") && hit.message.contains(PATCH_NOT_FOUND), "{}", hit.message);
    let _ = team.stop();
    let _ = kueue.stop();
}
