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
