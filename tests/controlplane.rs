//! Tests against a real control plane (etcd, kube-apiserver and kube-controller-manager 1.36.1,
//! built by `cargo xtask controlplane`) with the real `helm` 4.2.3 and `kubectl`, and
//! `testkit::standin` doing the work of the scheduler and kubelet. Skipped, with a SKIPPED line, when
//! the binaries are absent outside CI; failing in CI.

mod support;

use std::time::{Duration, Instant};

use testkit::controlplane::{self, ControlPlane};
use testkit::standin::{Record, StandIn};

fn text(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Writes straight to the terminal: a measurement worth seeing even when the test passes.
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "observed: {}", line.replace('\n', "\n    "));
}

/// The stand-in's own API calls must never fail: a failure would make a scenario's outcome ours.
fn stand_in_clean(records: &[Record]) {
    let errors: Vec<&Record> = records.iter().filter(|r| matches!(r, Record::Error { .. })).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The stand-in runs hook containers under bubblewrap: absent, its tests skip (fail in CI).
fn sandbox_or_skip(test: &str) -> bool {
    if testkit::standin::sandbox::available() {
        return true;
    }
    assert!(!controlplane::in_ci(), "{test}: bwrap is not installed; `cargo xtask test` installs Debian's bubblewrap");
    controlplane::skipped(test, "bwrap is not installed (`cargo xtask test` installs Debian's bubblewrap)");
    false
}

/// Each controller binary the rehearsals run starts and parses its flags: `--help` (Go's `flag`
/// package prints the flags and exits 0) lists the `--config` and `--zap-log-level` the charts'
/// Deployments pass; Trainer 2.2.1's still defines `--enable-http2`, 2.3.0's no longer does
/// (TA-NB-006's premise).
#[test]
fn controller_binaries_start_and_parse_their_flags() {
    let bin = match controlplane::bin_dir() {
        Ok(bin) => bin,
        Err(e) => {
            assert!(!controlplane::in_ci(), "{e}");
            return controlplane::skipped("controller_binaries_start_and_parse_their_flags", &e.to_string());
        }
    };
    controlplane::wait_for_build(&bin);
    for name in controlplane::CONTROLLER_BINARIES {
        let path = bin.join(name);
        assert!(path.is_file(), "{} has no {name}; run `cargo xtask controlplane`", bin.display());
        let out = std::process::Command::new(&path).arg("--help").output().unwrap();
        let help = text(&out);
        assert!(out.status.success(), "{name} --help exited {:?}:\n{help}", out.status);
        assert!(help.contains("-zap-log-level"), "{name} --help does not list -zap-log-level:\n{help}");
        // Trainer 2.0.0 takes its settings as flags (its chart passes them); every later manager,
        // JobSet and Kueue read a `--config` file.
        let config = help.contains("-config");
        assert_eq!(config, name != "trainer-controller-manager-v2.0.0", "{name} --help and -config:\n{help}");
        let http2 = help.contains("-enable-http2");
        match name {
            "trainer-controller-manager-v2.2.1" => assert!(http2, "{name} lacks -enable-http2:\n{help}"),
            "trainer-controller-manager-v2.3.0" => assert!(!http2, "{name} still defines -enable-http2"),
            _ => {}
        }
    }
}

#[test]
fn control_plane_authenticates_authorizes_and_issues_tokens() {
    let Some(cp) = controlplane::shared_or_skip("control_plane_authenticates_authorizes_and_issues_tokens") else { return };
    note(&format!("control plane start-up: {:.1} s", cp.startup.as_secs_f64()));
    let version = cp.kubectl_ok(&cp.admin_kubeconfig, &["version", "-o", "json"], None).unwrap();
    assert!(version.contains("\"gitVersion\": \"v1.36.1\""), "{version}");
    let ns = cp.namespace("auth", &[]).unwrap();
    let sa = cp.service_account_kubeconfig(&ns, "reader").unwrap();
    let whoami = cp.kubectl_ok(&sa, &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], None).unwrap();
    assert_eq!(whoami, format!("system:serviceaccount:{ns}:reader"));
    // RBAC is on: a ServiceAccount with no bindings may not list Pods.
    let denied = cp.kubectl(&sa, &["get", "pods", "-n", &ns], None);
    assert!(!denied.status.success(), "{}", text(&denied));
    assert!(String::from_utf8_lossy(&denied.stderr).contains("forbidden"), "{}", text(&denied));
}

/// A Job whose container installs kubectl with `apk`, reads a ConfigMap volume at an absolute
/// path and, with its ServiceAccount's token, creates an object in-cluster.
fn job_yaml(ns: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ServiceAccount
metadata: {{name: writer, namespace: {ns}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: writer, namespace: {ns}}}
rules:
- {{apiGroups: [""], resources: [configmaps], verbs: [get, create, patch]}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: writer, namespace: {ns}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: writer}}
subjects: [{{kind: ServiceAccount, name: writer, namespace: {ns}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: payload, namespace: {ns}}}
data:
  object.yaml: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {{name: made-in-cluster}}
    data: {{from: job}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: writer, namespace: {ns}}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: writer
      containers:
      - name: apply
        image: docker.io/alpine:3.21
        command: [/bin/sh, -c]
        args: ["set -e; apk add --no-cache kubectl; kubectl apply --server-side -f /payload/object.yaml; cat /var/run/secrets/kubernetes.io/serviceaccount/namespace"]
        volumeMounts: [{{name: payload, mountPath: /payload, readOnly: true}}]
      volumes: [{{name: payload, configMap: {{name: payload}}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx}}]
"#
    )
}

#[test]
fn standin_runs_jobs_in_cluster_and_makes_deployments_available() {
    if !sandbox_or_skip("standin_runs_jobs_in_cluster_and_makes_deployments_available") {
        return;
    }
    let Some(cp) = controlplane::shared_or_skip("standin_runs_jobs_in_cluster_and_makes_deployments_available") else { return };
    let ns = cp.namespace("standin", &[]).unwrap();
    let standin = StandIn::start(cp, &ns).unwrap();
    cp.apply(&job_yaml(&ns)).unwrap();
    cp.wait_for(&ns, "job/writer", "condition=Complete", Duration::from_secs(90))
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", standin.records()));
    let rollout = cp.kubectl(&cp.admin_kubeconfig, &["rollout", "status", "-n", &ns, "deployment/web", "--timeout=30s"], None);
    assert!(rollout.status.success(), "{}", text(&rollout));
    let records = standin.stop();
    stand_in_clean(&records);
    let ran: Vec<_> = records
        .iter()
        .filter_map(|r| if let Record::ContainerRan { exit_code, output, .. } = r { Some((exit_code, output)) } else { None })
        .collect();
    assert_eq!(ran.len(), 1, "{records:#?}");
    assert_eq!(*ran[0].0, 0, "{records:#?}");
    assert!(ran[0].1.ends_with(&format!("configmap/made-in-cluster serverside-applied\n{ns}")), "{}", ran[0].1);
    // The object exists, written by the Job's ServiceAccount.
    let managers = cp
        .kubectl_ok(
            &cp.admin_kubeconfig,
            &["get", "configmap", "made-in-cluster", "-n", &ns, "-o", "jsonpath={.data.from} {.metadata.managedFields[*].manager}"],
            None,
        )
        .unwrap();
    assert_eq!(managers, "job kubectl");
    let job = cp
        .kubectl_ok(
            &cp.admin_kubeconfig,
            &["get", "job", "writer", "-n", &ns, "-o", "jsonpath={.status.succeeded} {.status.conditions[*].type}"],
            None,
        )
        .unwrap();
    assert_eq!(job, "1 SuccessCriteriaMet Complete");
}

#[test]
fn pod_security_restricted_rejects_the_jobs_pod_for_real() {
    if !sandbox_or_skip("pod_security_restricted_rejects_the_jobs_pod_for_real") {
        return;
    }
    let Some(cp) = controlplane::shared_or_skip("pod_security_restricted_rejects_the_jobs_pod_for_real") else { return };
    let ns = cp.namespace("restricted", &[("pod-security.kubernetes.io/enforce", "restricted")]).unwrap();
    let standin = StandIn::start(cp, &ns).unwrap();
    cp.apply(&job_yaml(&ns)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let message = loop {
        if let Some(message) =
            standin.records().iter().find_map(|r| if let Record::PodRejected { message, .. } = r { Some(message.clone()) } else { None })
        {
            break message;
        }
        assert!(Instant::now() < deadline, "no rejection: {:#?}", standin.records());
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(message.contains("violates PodSecurity \"restricted:latest\""), "{message}");
    // The real job controller's Warning event, and the Job neither fails nor completes.
    let events = cp
        .kubectl_ok(
            &cp.admin_kubeconfig,
            &[
                "get",
                "events",
                "-n",
                &ns,
                "--field-selector",
                "reason=FailedCreate,involvedObject.kind=Job",
                "-o",
                "jsonpath={.items[0].message}",
            ],
            None,
        )
        .unwrap();
    assert!(events.starts_with("Error creating: pods \"writer-"), "{events}");
    let conditions =
        cp.kubectl_ok(&cp.admin_kubeconfig, &["get", "job", "writer", "-n", &ns, "-o", "jsonpath={.status.conditions}"], None).unwrap();
    assert_eq!(conditions, "");
    // The Deployment's Pod template is refused too: ReplicaFailure, never available.
    let failure = cp
        .kubectl_ok(
            &cp.admin_kubeconfig,
            &["get", "deployment", "web", "-n", &ns, "-o", "jsonpath={.status.conditions[?(@.type==\"ReplicaFailure\")].message}"],
            None,
        )
        .unwrap();
    assert!(failure.contains("violates PodSecurity \"restricted:latest\""), "{failure}\n{:#?}", standin.records());
    let rollout = cp.kubectl(&cp.admin_kubeconfig, &["rollout", "status", "-n", &ns, "deployment/web", "--timeout=3s"], None);
    assert!(!rollout.status.success(), "{}", text(&rollout));
    note(&format!("Pod Security restricted, API server's answer: {message}"));
}

/// A Trainer scenario: its own control plane (the chart's CRDs, ClusterRoles and runtimes are
/// cluster-scoped), a real registry holding the corpus charts pushed by the real `helm push`.
struct Trainer {
    cp: ControlPlane,
    registry: support::registry::Registry,
    corpus: std::path::PathBuf,
}

const RELEASE: &str = "kubeflow-trainer";
const NAMESPACE: &str = "kubeflow-system";

impl Trainer {
    fn start(test: &str, versions: &[&str]) -> Option<Trainer> {
        let corpus = support::corpus();
        if !sandbox_or_skip(test) {
            return None;
        }
        let registry = support::registry::Registry::start()?;
        let cp = controlplane::fresh_or_skip(test)?;
        for version in versions {
            let archive = corpus.join(format!("charts/kubeflow-trainer-{version}.tgz"));
            let repo = format!("oci://{}/kubeflow/charts", registry.host());
            let out = cp.helm(&cp.admin_kubeconfig, &["push", &archive.to_string_lossy(), &repo, "--plain-http"]);
            assert!(out.status.success(), "helm push {version}: {}", text(&out));
        }
        Some(Trainer { cp, registry, corpus })
    }

    fn chart(&self) -> String {
        format!("oci://{}/kubeflow/charts/kubeflow-trainer", self.registry.host())
    }

    /// `helm install|upgrade kubeflow-trainer <chart> --version V -n NS … --plain-http --wait` with
    /// the corpus values file that enables every built-in runtime (so 2.3's installer hook runs).
    fn helm(&self, verb: &str, version: &str, namespace: &str, extra: &[&str]) -> std::process::Output {
        let values = self.corpus.join("values/runtimes-all.yaml");
        let chart = self.chart();
        let mut args = vec![verb, RELEASE, &chart, "--version", version, "-n", namespace, "--plain-http", "--wait", "-f"];
        let values = values.to_string_lossy();
        args.push(&values);
        args.extend_from_slice(extra);
        let started = Instant::now();
        let out = self.cp.helm(&self.cp.admin_kubeconfig, &args);
        note(&format!("helm {verb} {version} -n {namespace}: {:.1} s, exit {:?}", started.elapsed().as_secs_f64(), out.status.code()));
        out
    }

    fn kubectl(&self, args: &[&str]) -> String {
        self.cp.kubectl_ok(&self.cp.admin_kubeconfig, args, None).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn container_runs(records: &[Record]) -> Vec<(String, i32, String)> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::ContainerRan { job, exit_code, output, .. } => Some((job.clone(), *exit_code, output.clone())),
            _ => None,
        })
        .collect()
}

fn audit(home: &std::path::Path, kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    let kubeconfig = kubeconfig.to_string_lossy();
    all.extend_from_slice(&["--kubeconfig", &kubeconfig]);
    support::run(home, &all)
}

/// Issue 12 §1, items 1, 3 and 4: Helm installs 2.3.0 for real, the installer hook applies the
/// runtimes through the stand-in, `status` reads the install, and a ServiceAccount bound to
/// exactly what `trainer-audit rbac` prints reads it without a 403.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_installs_trainer_2_3_0_and_status_reads_it_with_least_privilege() {
    let Some(t) = Trainer::start("helm_installs_trainer_2_3_0_and_status_reads_it_with_least_privilege", &["2.3.0"]) else { return };
    let standin = StandIn::start(&t.cp, NAMESPACE).unwrap();
    let out = t.helm("install", "2.3.0", NAMESPACE, &["--create-namespace", "--timeout", "3m"]);
    let records = standin.stop();
    stand_in_clean(&records);
    assert!(out.status.success(), "{}\n{records:#?}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("STATUS: deployed"), "{}", text(&out));

    // The post-install hook ran once, through the stand-in, and succeeded (then Helm deleted it).
    let runs = container_runs(&records);
    assert_eq!(runs.len(), 1, "{records:#?}");
    assert_eq!((runs[0].0.as_str(), runs[0].1), ("kubeflow-trainer-runtimes-installer", 0), "{}", runs[0].2);
    assert!(records.contains(&Record::JobComplete { job: "kubeflow-trainer-runtimes-installer".into() }), "{records:#?}");
    assert_eq!(t.kubectl(&["get", "jobs", "-n", NAMESPACE, "-o", "name"]), "");

    // Every built-in runtime exists, labelled by the installer, applied server-side by kubectl.
    let wanted =
        t.kubectl(&["get", "configmap", "-n", NAMESPACE, "kubeflow-trainer-runtimes-installer", "-o", "jsonpath={.data.runtimes\\.yaml}"]);
    let wanted_names: std::collections::BTreeSet<String> = wanted
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .map(|n| format!("clustertrainingruntime.trainer.kubeflow.org/{n}"))
        .collect();
    assert!(wanted_names.len() >= 5, "{wanted}");
    let labelled: std::collections::BTreeSet<String> = t
        .kubectl(&["get", "clustertrainingruntimes", "-l", "trainer.kubeflow.org/managed-by=runtimes-installer", "-o", "name"])
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(labelled, wanted_names);
    let managers = t.kubectl(&[
        "get",
        "clustertrainingruntimes",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}:{range .metadata.managedFields[*]}{.manager}/{.operation} {end}{\"\\n\"}{end}",
    ]);
    for line in managers.lines() {
        assert!(line.contains("kubectl/Apply"), "{managers}");
    }
    note(&format!("runtimes' field managers after install:\n{managers}"));
    // Helm 4 installs with server-side apply (`--server-side` defaults to true for install) under
    // the field manager `helm`; the stand-in's status writes appear as the controller manager's.
    let deployment = t.kubectl(&[
        "get",
        "deployment",
        "-n",
        NAMESPACE,
        "kubeflow-trainer-controller-manager",
        "-o",
        "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource} {end}",
    ]);
    assert_eq!(deployment.trim(), "helm/Apply/ kube-controller-manager/Update/status");
    let crd = t.kubectl(&[
        "get",
        "crd",
        "trainjobs.trainer.kubeflow.org",
        "-o",
        "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation} {end}",
    ]);
    assert!(crd.contains("helm/Apply"), "{crd}");

    // `trainer-audit status` as the admin.
    let home = tempfile::tempdir().unwrap();
    let out = audit(home.path(), &t.cp.admin_kubeconfig, &["status", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["install"]["method"], "helm", "{status:#}");
    assert_eq!(status["version"]["version"], "2.3.0", "{status:#}");
    let admin_view = status.clone();

    // Issue 30 §4, live: `check --to-kube` against this cluster (kube-apiserver v1.36.1), the chart
    // from the repository it was installed from. Trainer stays at 2.3.0; its CRDs are judged as a
    // v1.37.2 server judges their next re-apply, and real v1.37.2 and v1.38.0-beta.0 servers accept
    // every write of them (docs/rehearsals.md), so neither TA-K8S-002 nor TA-K8S-003 may fire. A
    // version below the cluster's minor is refused.
    let repo = t.chart();
    let to_kube = |version: &str| {
        audit(home.path(), &t.cp.admin_kubeconfig, &["check", "--repo", &repo, "--plain-http", "--to-kube", version, "--format", "json"])
    };
    let out = to_kube("1.37.2");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let ids: Vec<&str> = report["findings"].as_array().unwrap().iter().filter_map(|f| f["id"].as_str()).collect();
    assert!(!ids.contains(&"TA-K8S-002") && !ids.contains(&"TA-K8S-003"), "{ids:?}\n{}", text(&out));
    let out = to_kube("1.35");
    assert_eq!(out.status.code(), Some(2), "a version below the cluster's is refused: {}", text(&out));

    // Least privilege: bind exactly what `trainer-audit rbac` prints, then read as that account.
    let rbac = support::run(home.path(), &["rbac", "-n", "audit", "--service-account", "auditor"]);
    assert!(rbac.status.success(), "{}", text(&rbac));
    t.kubectl(&["create", "namespace", "audit"]);
    t.cp.apply(&String::from_utf8_lossy(&rbac.stdout)).unwrap();
    let sa = t.cp.service_account_kubeconfig("audit", "auditor").unwrap();
    let out = audit(home.path(), &sa, &["status", "--format", "json"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(!all.to_lowercase().contains("forbidden"), "a permission is missing from `trainer-audit rbac`:\n{all}");
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status, admin_view, "the ServiceAccount sees less than the admin");

    // The installer prunes by its label for real: a user's runtime carrying the installer's label
    // is deleted by the post-upgrade hook of a same-version `helm upgrade`, with the chart's RBAC.
    let mut runtime: serde_json::Value =
        serde_json::from_str(&t.kubectl(&["get", "clustertrainingruntime", "torch-distributed", "-o", "json"])).unwrap();
    runtime["metadata"] =
        serde_json::json!({"name": "users-own-runtime", "labels": {"trainer.kubeflow.org/managed-by": "runtimes-installer"}});
    t.cp.kubectl_ok(&t.cp.admin_kubeconfig, &["create", "-f", "-"], Some(&runtime.to_string())).unwrap();
    let standin = StandIn::start(&t.cp, NAMESPACE).unwrap();
    let out = t.helm("upgrade", "2.3.0", NAMESPACE, &["--timeout", "3m"]);
    let records = standin.stop();
    stand_in_clean(&records);
    assert!(out.status.success(), "{}\n{records:#?}", text(&out));
    let runs = container_runs(&records);
    assert_eq!(runs.len(), 1, "{records:#?}");
    assert!(runs[0].2.contains("clustertrainingruntime.trainer.kubeflow.org \"users-own-runtime\" deleted"), "{}", runs[0].2);
    let after: std::collections::BTreeSet<String> =
        t.kubectl(&["get", "clustertrainingruntimes", "-o", "name"]).lines().map(String::from).collect();
    assert_eq!(after, wanted_names);
}

/// Issue 12 §1, item 2: the same install into a namespace enforcing Pod Security `restricted`.
/// The installer hook's Pod is refused by real admission; the Job never gets a Pod, so Helm's
/// hook wait runs into `--timeout`. Helm's exact error is recorded.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_install_into_a_restricted_namespace_fails_on_the_hook_pod() {
    let Some(t) = Trainer::start("helm_install_into_a_restricted_namespace_fails_on_the_hook_pod", &["2.3.0"]) else { return };
    t.kubectl(&["create", "namespace", NAMESPACE]);
    t.kubectl(&["label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=restricted"]);
    let standin = StandIn::start(&t.cp, NAMESPACE).unwrap();
    let out = t.helm("install", "2.3.0", NAMESPACE, &["--timeout", "20s"]);
    let records = standin.stop();
    stand_in_clean(&records);
    assert!(!out.status.success(), "{}", text(&out));
    let rejected: Vec<&String> =
        records.iter().filter_map(|r| if let Record::PodRejected { message, .. } = r { Some(message) } else { None }).collect();
    assert_eq!(rejected.len(), 1, "{records:#?}");
    assert!(rejected[0].contains("violates PodSecurity \"restricted:latest\""), "{}", rejected[0]);
    assert!(container_runs(&records).is_empty(), "{records:#?}");
    // The chart's own Deployments (Trainer's controller, JobSet's) pass `restricted`.
    assert!(!records.iter().any(|r| matches!(r, Record::DeploymentPodRejected { .. })), "{records:#?}");
    assert_eq!(records.iter().filter(|r| matches!(r, Record::DeploymentAvailable { .. })).count(), 2, "{records:#?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    note(&format!("restricted namespace: hook Pod refused with: {}\nhelm said: {}", rejected[0], stderr.trim()));
    // Helm 4.2.3 waits on the hook Job with its kstatus watcher until --timeout.
    assert!(
        stderr.contains(
            "Error: INSTALLATION FAILED: failed post-install: resource Job/kubeflow-system/kubeflow-trainer-runtimes-installer not ready. \
             status: InProgress, message: Job in progress\ncontext deadline exceeded"
        ),
        "{stderr}"
    );
    // Pod Security also warns when the Job itself is created (its Pod template would violate).
    assert!(stderr.contains("Warning: would violate PodSecurity \\\"restricted:latest\\\""), "{stderr}");
    let release = t.kubectl(&["get", "secrets", "-n", NAMESPACE, "-l", "owner=helm", "-o", "jsonpath={.items[*].metadata.labels.status}"]);
    assert_eq!(release, "failed");
}

/// Issue 12 §1, item 5: a Helm 2.2.1 install (CRDs from the chart's crds/ directory, which Helm
/// installs without release ownership) upgraded to 2.3.0 (CRDs as templates). Expected to fail on
/// CRD ownership; the exact error is what the product's rules are compared with.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn helm_upgrade_2_2_1_to_2_3_0_fails_on_crd_ownership() {
    let Some(t) = Trainer::start("helm_upgrade_2_2_1_to_2_3_0_fails_on_crd_ownership", &["2.2.1", "2.3.0"]) else { return };
    let standin = StandIn::start(&t.cp, NAMESPACE).unwrap();
    let out = t.helm("install", "2.2.1", NAMESPACE, &["--create-namespace", "--timeout", "3m"]);
    assert!(out.status.success(), "{}\n{:#?}", text(&out), standin.records());
    let runtimes_before = t.kubectl(&["get", "clustertrainingruntimes", "-o", "name"]);
    assert!(!runtimes_before.is_empty());
    let out = t.helm("upgrade", "2.3.0", NAMESPACE, &["--timeout", "3m"]);
    let records = standin.stop();
    stand_in_clean(&records);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    note(&format!("helm upgrade 2.2.1 -> 2.3.0: exit {:?}\n{}", out.status.code(), stderr.trim()));
    assert!(!out.status.success(), "the upgrade succeeded:\n{}\n{records:#?}", text(&out));
    assert_eq!(
        stderr.trim(),
        "Error: UPGRADE FAILED: unable to continue with update: CustomResourceDefinition \"clustertrainingruntimes.trainer.kubeflow.org\" \
         in namespace \"\" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: \
         missing key \"app.kubernetes.io/managed-by\": must be set to \"Helm\"; annotation validation error: missing key \
         \"meta.helm.sh/release-name\": must be set to \"kubeflow-trainer\"; annotation validation error: missing key \
         \"meta.helm.sh/release-namespace\": must be set to \"kubeflow-system\""
    );
    // Nothing ran: the upgrade stopped before any hook, and the 2.2.1 state is intact.
    assert!(container_runs(&records).is_empty(), "{records:#?}");
    assert_eq!(t.kubectl(&["get", "clustertrainingruntimes", "-o", "name"]), runtimes_before);
}

/// A tiny chart named like Trainer's (so trainer-audit reads its release records): a ConfigMap
/// carrying the revision's `mark`, and switches that make Helm leave each status for real — an
/// object in a namespace that does not exist (the apply fails: `failed`), a hook Job that never
/// completes (no kubelet runs its Pod: Helm waits and is killed, `pending-*`), a ConfigMap whose
/// finalizer holds `helm uninstall --wait` (killed: `uninstalling`).
fn states_chart(dir: &std::path::Path) {
    let templates = dir.join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(dir.join("Chart.yaml"), "apiVersion: v2\nname: kubeflow-trainer\nversion: 0.0.1\n").unwrap();
    std::fs::write(dir.join("values.yaml"), "mark: 0\nfail: false\nhang: \"\"\nhold: false\n").unwrap();
    std::fs::write(
        templates.join("objects.yaml"),
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-mark
  {{- if .Values.hold }}
  finalizers: [example.com/hold]
  {{- end }}
data:
  mark: {{ .Values.mark | quote }}
{{- if .Values.fail }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-fails
  namespace: no-such-namespace
{{- end }}
{{- if .Values.hang }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    helm.sh/hook: {{ .Values.hang }}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: example.com/never:1, command: ["true"]}]
{{- end }}
"#,
    )
    .unwrap();
}

/// Issue 29 §1: where real Helm 4.2.3 starts `helm upgrade` and `helm upgrade --install`, against
/// trainer-audit's model (`Release::start`), for every status Helm leaves, each made by real Helm
/// operations (a failed apply, a Helm killed while it waits on a hook or on a finalizer, `helm
/// uninstall --keep-history`, twelve revisions) or — `unknown`, which Helm 4 never stores — a record
/// rewritten by hand. What Helm starts from is read from a server-side dry run with
/// `--reuse-values`: the values it reuses are those of the revision it starts from (each revision
/// carries its number as `mark`); a fresh install reuses none.
#[test]
fn helm_starts_upgrades_where_trainer_audit_says() {
    use trainer_audit::cluster::release::Start;
    let Some(cp) = controlplane::shared_or_skip("helm_starts_upgrades_where_trainer_audit_says") else { return };
    let dir = tempfile::tempdir().unwrap();
    let chart_dir = dir.path().join("kubeflow-trainer");
    states_chart(&chart_dir);
    let chart = chart_dir.to_string_lossy().into_owned();
    let ns = cp.namespace("helm-states", &[]).unwrap();
    let ns = ns.as_str();
    let kubectl = |args: &[&str]| cp.kubectl_ok(&cp.admin_kubeconfig, args, None).unwrap_or_else(|e| panic!("{e}"));
    let home = cp.scratch("helm-states");
    let helm_command = |args: &[&str]| {
        let mut c = std::process::Command::new(cp.bin.join("helm"));
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("KUBECONFIG", &cp.admin_kubeconfig)
            .env("HOME", &home)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    };
    let helm = |args: &[&str]| helm_command(args).output().unwrap();
    let status_of = |release: &str, revision: i64| {
        let name = format!("sh.helm.release.v1.{release}.v{revision}");
        cp.kubectl(&cp.admin_kubeconfig, &["get", "secret", &name, "-n", ns, "-o", "jsonpath={.metadata.labels.status}"], None)
    };
    // One Helm operation on `release`, setting `mark` to the revision it makes; `expect` is the
    // status it must leave that revision in. A pending/uninstalling one is reached by killing
    // Helm once the record shows it (SIGKILL, as a dying CI runner).
    let op = |release: &str, verb: &str, revision: i64, extra: &[&str], expect: &str| {
        let mark = format!("mark={revision}");
        let mut args: Vec<&str> = match verb {
            "install" | "upgrade" => vec![verb, release, &chart, "-n", ns, "--set", &mark, "--timeout", "5m"],
            _ => vec![verb, release],
        };
        if verb == "rollback" || verb == "uninstall" {
            args.extend(["-n", ns]);
        }
        args.extend(extra);
        if expect.starts_with("pending-") || expect == "uninstalling" {
            let mut child = helm_command(&args).spawn().unwrap();
            let started = Instant::now();
            loop {
                let seen = status_of(release, revision);
                if String::from_utf8_lossy(&seen.stdout) == expect {
                    break;
                }
                assert!(child.try_wait().unwrap().is_none(), "helm {args:?} ended before {release} r{revision} was {expect}");
                assert!(started.elapsed() < Duration::from_secs(120), "{release} r{revision} never became {expect}");
                std::thread::sleep(Duration::from_millis(200));
            }
            child.kill().unwrap();
            child.wait().unwrap();
        } else {
            let out = helm(&args);
            let _ = out;
        }
        let seen = String::from_utf8_lossy(&status_of(release, revision).stdout).into_owned();
        assert_eq!(seen, expect, "helm {args:?}: revision {revision} of {release}");
    };
    let started = Instant::now();
    // The histories, each a release of its own.
    op("deployed", "install", 1, &[], "deployed");
    op("failed-over-deployed", "install", 1, &[], "deployed");
    op("failed-over-deployed", "upgrade", 2, &["--set", "fail=true"], "failed");
    op("failed-alone", "install", 1, &["--set", "fail=true"], "failed");
    op("pending-install", "install", 1, &["--set", "hang=post-install", "--wait"], "pending-install");
    op("pending-upgrade", "install", 1, &[], "deployed");
    op("pending-upgrade", "upgrade", 2, &["--set", "hang=post-upgrade", "--wait"], "pending-upgrade");
    op("pending-rollback", "install", 1, &["--set", "hang=post-rollback"], "deployed");
    op("pending-rollback", "upgrade", 2, &["--set", "hang="], "deployed");
    op("pending-rollback", "rollback", 3, &["1", "--wait"], "pending-rollback");
    op("superseded-last", "install", 1, &[], "deployed");
    op("superseded-last", "upgrade", 2, &[], "deployed");
    op("superseded-last", "upgrade", 3, &[], "deployed");
    kubectl(&["delete", "secret", "sh.helm.release.v1.superseded-last.v3", "-n", ns]);
    op("uninstalling", "install", 1, &["--set", "hold=true"], "deployed");
    op("uninstalling", "uninstall", 1, &["--wait", "--timeout", "5m"], "uninstalling");
    op("uninstalled", "install", 1, &[], "deployed");
    op("uninstalled", "upgrade", 2, &[], "deployed");
    op("uninstalled", "uninstall", 2, &["--keep-history"], "uninstalled");
    // Twelve revisions (the upgrades keep ten, Helm's default --history-max), then uninstalled.
    op("uninstalled-12", "install", 1, &[], "deployed");
    for revision in 2..=12 {
        op("uninstalled-12", "upgrade", revision, &[], "deployed");
    }
    op("uninstalled-12", "uninstall", 12, &["--keep-history"], "uninstalled");
    // `unknown`, which Helm 4 never stores (install.go sets it in memory before pending-install):
    // a deployed record rewritten, as an older tool or a hand edit leaves it.
    op("unknown", "install", 1, &[], "deployed");
    let record = kubectl(&["get", "secret", "sh.helm.release.v1.unknown.v1", "-n", ns, "-o", "json"]);
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    let mut release = trainer_audit::cluster::release::release_json(&record).unwrap();
    release["info"]["status"] = serde_json::json!("unknown");
    let mut rewritten = testkit::release::encode_secret(&release, true);
    rewritten["metadata"]["labels"]["status"] = serde_json::json!("unknown");
    cp.kubectl_ok(&cp.admin_kubeconfig, &["replace", "-f", "-"], Some(&rewritten.to_string())).unwrap();
    note(&format!("Helm states made in {:.1} s", started.elapsed().as_secs_f64()));

    // trainer-audit's model of the records as the cluster holds them.
    let secrets = kubectl(&["get", "secrets", "-n", ns, "-l", "owner=helm", "-o", "json"]);
    let items = serde_json::from_str::<serde_json::Value>(&secrets).unwrap()["items"].as_array().cloned().unwrap();
    let state = trainer_audit::cluster::ClusterState::from_objects(Default::default(), items, Vec::new());
    let (releases, errors) = state.releases();
    assert!(errors.is_empty(), "{errors:?}");
    // What Helm does: a server-side dry run that reuses the values of where it starts.
    let observe = |name: &str, install: bool| -> Start {
        let mut args =
            vec!["upgrade", name, chart.as_str(), "-n", ns, "--reuse-values", "--set", "probe=1", "--dry-run=server", "-o", "json"];
        if install {
            args.insert(1, "--install");
        }
        let out = helm(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            if stderr.contains("another operation (install/upgrade/rollback) is in progress") {
                return Start::Pending;
            }
            assert!(stderr.contains(&format!("\"{name}\" has no deployed releases")), "helm {args:?}: {stderr}");
            return Start::NoDeployed;
        }
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        match json["config"]["mark"].as_i64() {
            Some(mark) => Start::From(mark),
            None => Start::Reinstall,
        }
    };
    let expected: [(&str, Start, Start); 11] = [
        ("deployed", Start::From(1), Start::From(1)),
        ("failed-over-deployed", Start::From(1), Start::From(1)),
        ("failed-alone", Start::From(1), Start::From(1)),
        ("pending-install", Start::Pending, Start::Pending),
        ("pending-upgrade", Start::Pending, Start::Pending),
        ("pending-rollback", Start::Pending, Start::Pending),
        ("superseded-last", Start::From(2), Start::From(2)),
        ("uninstalling", Start::NoDeployed, Start::NoDeployed),
        ("uninstalled", Start::NoDeployed, Start::Reinstall),
        // Past revision 9 the record Helm lists last is not the highest: no fresh install.
        ("uninstalled-12", Start::NoDeployed, Start::NoDeployed),
        ("unknown", Start::NoDeployed, Start::NoDeployed),
    ];
    for (name, plain, install) in expected {
        let release = releases.iter().find(|r| r.current.name == name).unwrap_or_else(|| panic!("no release {name}"));
        let history: Vec<String> = release.history.iter().map(ToString::to_string).collect();
        let helm = (observe(name, false), observe(name, true));
        note(&format!("{name} [{}]: helm upgrade {:?}, --install {:?}", history.join("; "), helm.0, helm.1));
        assert_eq!(helm, (plain, install), "{name}: what Helm did is not what this test expects");
        assert_eq!((release.start(false), release.start(true)), helm, "{name}: trainer-audit's model disagrees with Helm");
    }
}
