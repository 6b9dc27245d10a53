//! Tests against a real control plane (etcd + kube-apiserver 1.36.1, built by `cargo xtask
//! controlplane`) with the real `helm` 4.2.3 and `kubectl`, and `testkit::standin` doing the work
//! of the job controller, kubelet and deployment controller. Skipped, with a SKIPPED line, when
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
    let _ = writeln!(std::io::stderr(), "{line}");
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
    let Some(cp) = controlplane::shared_or_skip("standin_runs_jobs_in_cluster_and_makes_deployments_available") else { return };
    let ns = cp.namespace("standin", &[]).unwrap();
    let standin = StandIn::start(cp, &ns).unwrap();
    cp.apply(&job_yaml(&ns)).unwrap();
    cp.wait_for(&ns, "job/writer", "condition=Complete", Duration::from_secs(90)).unwrap_or_else(|e| panic!("{e}\n{:#?}", standin.records()));
    let rollout = cp.kubectl(&cp.admin_kubeconfig, &["rollout", "status", "-n", &ns, "deployment/web", "--timeout=30s"], None);
    assert!(rollout.status.success(), "{}", text(&rollout));
    let records = standin.stop();
    let ran: Vec<_> = records.iter().filter_map(|r| if let Record::ContainerRan { exit_code, output, .. } = r { Some((exit_code, output)) } else { None }).collect();
    assert_eq!(ran.len(), 1, "{records:#?}");
    assert_eq!(*ran[0].0, 0, "{records:#?}");
    assert!(ran[0].1.ends_with(&format!("configmap/made-in-cluster serverside-applied\n{ns}")), "{}", ran[0].1);
    // The object exists, written by the Job's ServiceAccount.
    let managers = cp
        .kubectl_ok(&cp.admin_kubeconfig, &["get", "configmap", "made-in-cluster", "-n", &ns, "-o", "jsonpath={.data.from} {.metadata.managedFields[*].manager}"], None)
        .unwrap();
    assert_eq!(managers, "job kubectl");
    let job = cp.kubectl_ok(&cp.admin_kubeconfig, &["get", "job", "writer", "-n", &ns, "-o", "jsonpath={.status.succeeded} {.status.conditions[*].type}"], None).unwrap();
    assert_eq!(job, "1 SuccessCriteriaMet Complete");
}

#[test]
fn pod_security_restricted_rejects_the_jobs_pod_for_real() {
    let Some(cp) = controlplane::shared_or_skip("pod_security_restricted_rejects_the_jobs_pod_for_real") else { return };
    let ns = cp.namespace("restricted", &[("pod-security.kubernetes.io/enforce", "restricted")]).unwrap();
    let standin = StandIn::start(cp, &ns).unwrap();
    cp.apply(&job_yaml(&ns)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let message = loop {
        if let Some(message) = standin.records().iter().find_map(|r| if let Record::PodRejected { message, .. } = r { Some(message.clone()) } else { None }) {
            break message;
        }
        assert!(Instant::now() < deadline, "no rejection: {:#?}", standin.records());
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(message.contains("violates PodSecurity \"restricted:latest\""), "{message}");
    // As with the real job controller: a Warning event, and the Job neither fails nor completes.
    let events = cp
        .kubectl_ok(&cp.admin_kubeconfig, &["get", "events", "-n", &ns, "--field-selector", "reason=FailedCreate", "-o", "jsonpath={.items[0].message}"], None)
        .unwrap();
    assert!(events.starts_with("Error creating: pods \"writer-"), "{events}");
    let conditions = cp.kubectl_ok(&cp.admin_kubeconfig, &["get", "job", "writer", "-n", &ns, "-o", "jsonpath={.status.conditions}"], None).unwrap();
    assert_eq!(conditions, "");
    note(&format!("Pod Security restricted, API server's answer: {message}"));
}
