//! `trainer-audit rbac --cronjob`: its usage errors, and the manifest against the real control
//! plane (`testkit::controlplane`; skipped with a SKIPPED line when the binaries are absent
//! outside CI) in a namespace enforcing Pod Security `restricted`: `kubectl apply
//! --dry-run=server` accepts every object without a Pod Security warning, and the Pod the
//! CronJob would create passes enforcement — while the same Pod with one setting loosened is
//! refused, so the check can fail.

mod support;

use serde_json::{json, Value as Json};
use support::{run, stderr, stdout};
use testkit::controlplane;

fn documents(yaml: &str) -> Vec<Json> {
    helm_render::yaml::read::read_documents(yaml).unwrap().iter().map(trainer_audit::objects::to_serde).filter(|d| !d.is_null()).collect()
}

#[test]
fn cronjob_usage_errors_exit_2_and_print_nothing() {
    let home = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["rbac", "--cronjob"], "--schedule"),
        (vec!["rbac", "--schedule", "@daily"], "--cronjob"),
        (vec!["rbac", "--cronjob", "--schedule", "0 6 * *"], "five cron fields"),
        (vec!["rbac", "--cronjob", "--schedule", "@daily", "-n", "Kubeflow"], "\"Kubeflow\""),
        (vec!["rbac", "--cronjob", "--schedule", "@daily", "--to", ">=banana"], "invalid --to"),
        (vec!["rbac", "--cronjob", "--schedule", "@daily", "--repo", "./chart"], "oci://"),
    ] {
        let out = run(home.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?} printed: {}", stdout(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    let out = run(home.path(), &["rbac", "--cronjob", "--schedule", "0 6 * * 1-5", "--time-zone", "Europe/Berlin"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(&stdout(&out));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "CronJob"]);
    let cron = &docs[3];
    assert_eq!(cron["spec"]["schedule"], "0 6 * * 1-5");
    assert_eq!(cron["spec"]["timeZone"], "Europe/Berlin");
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], docs[0]["metadata"]["name"]);
    assert_eq!(pod["containers"][0]["image"], format!("trainer-audit:{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(pod["containers"][0]["args"], json!(["check", "--to", "*", "--format", "jsonl"]));
}

#[test]
fn cronjob_manifest_is_accepted_by_the_api_server_under_restricted() {
    let Some(cp) = controlplane::shared_or_skip("cronjob_manifest_is_accepted_by_the_api_server_under_restricted") else { return };
    let restricted = [("pod-security.kubernetes.io/enforce", "restricted"), ("pod-security.kubernetes.io/warn", "restricted")];
    let ns = cp.namespace("cronjob", &restricted).unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["rbac", "--cronjob", "--schedule", "0 6 * * 1-5", "-n", &ns, "--service-account", "auditor"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = stdout(&out);

    let applied = cp.kubectl(&cp.admin_kubeconfig, &["apply", "--dry-run=server", "-f", "-"], Some(&manifest));
    let said = format!("{}{}", String::from_utf8_lossy(&applied.stdout), String::from_utf8_lossy(&applied.stderr));
    assert!(applied.status.success(), "{said}");
    for object in
        ["serviceaccount/auditor", "clusterrole.rbac.authorization.k8s.io/trainer-audit-reader", "cronjob.batch/trainer-audit-check"]
    {
        assert!(said.contains(&format!("{object} created (server dry run)")), "{object}: {said}");
    }
    assert!(!said.contains("PodSecurity"), "Pod Security warned about the CronJob's Pod template: {said}");

    // Pod Security enforces on Pods only (workloads get warnings): create the Pod the CronJob's
    // Job would, dry-run, where `restricted` is enforced.
    let cron = documents(&manifest).into_iter().find(|d| d["kind"] == "CronJob").unwrap();
    let template = &cron["spec"]["jobTemplate"]["spec"]["template"];
    let pod = |spec: &Json| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "check", "namespace": ns, "labels": template["metadata"]["labels"]}, "spec": spec});
    let created = cp.kubectl(&cp.admin_kubeconfig, &["create", "--dry-run=server", "-f", "-"], Some(&pod(&template["spec"]).to_string()));
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    // The same Pod with privilege escalation allowed is refused: the check above can fail.
    let mut loose = template["spec"].clone();
    loose["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = json!(true);
    let refused = cp.kubectl(&cp.admin_kubeconfig, &["create", "--dry-run=server", "-f", "-"], Some(&pod(&loose).to_string()));
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("violates PodSecurity \"restricted:latest\""),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
