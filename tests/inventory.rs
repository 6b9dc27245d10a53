//! `hooks` and `diff` on the project's own pair of charts (`tests/fixtures/charts/upgrade-from`
//! → `upgrade-to`): a CRD moving from `crds/` into templates with a retyped and a removed field,
//! a runtime moving from a release object into a ConfigMap applied by a hook, an installer hook
//! with egress, forced apply and a prune loop, a pre-delete hook and a test hook.

mod support;

use std::path::{Path, PathBuf};

use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use support::{run, stderr, stdout};
use trainer_audit::audit::hooks::review;
use trainer_audit::diff::ChartDiff;
use trainer_audit::engine::Engine;
use trainer_audit::inventory::Inventory;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts").join(name)
}

fn inventory(name: &str) -> Inventory {
    let chart = Chart::load_dir(&fixture(name)).unwrap();
    let mut o = RenderOptions::default();
    o.release.name = "demo".into();
    o.release.namespace = "apps".into();
    Inventory::build(&chart, &render_chart(&chart, &o).unwrap(), "apps")
}

fn ids(report: &trainer_audit::audit::hooks::HooksReport, subject_suffix: &str) -> Vec<String> {
    report.findings.iter().filter(|f| f.subject.ends_with(subject_suffix)).map(|f| format!("{} {}", f.id, f.severity.as_str())).collect()
}

#[test]
fn hook_review_reports_lifecycle_and_risks() {
    let inv = inventory("upgrade-to");
    let argocd = semver::Version::new(3, 2, 0);
    let report = review(&rules(), &inv, Engine::Argocd, Some(&argocd), "widgets", "apps");
    let installer = report.hooks.iter().find(|h| h.hook.identity.name == "demo-installer").unwrap();
    assert_eq!(installer.hook.events, ["post-install", "post-upgrade"]);
    assert_eq!(installer.hook.delete_policies, ["before-hook-creation", "hook-succeeded"]);
    assert!(installer.argocd.iter().all(|p| p.phase == Some("PostSync")));
    assert_eq!(installer.hook.grants.len(), 1, "the binding in the same render grants the installer role");
    assert_eq!(
        ids(&report, "demo-installer"),
        [
            "TA-HOOK-002 warning",
            "TA-HOOK-007 warning",
            "TA-HOOK-101 warning",
            "TA-HOOK-102 warning",
            "TA-HOOK-003 info",
            "TA-HOOK-005 info",
            "TA-HOOK-006 info"
        ]
    );
    // Digest-pinned, bounded, non-root: only its delete semantics are reported; Argo CD 3.2 has
    // no PreDelete, so the cleanup never runs there.
    assert_eq!(ids(&report, "demo-cleanup"), ["TA-HOOK-007 warning", "TA-HOOK-103 warning", "TA-HOOK-003 info"]);
    assert_eq!(ids(&report, "demo-smoke"), ["TA-HOOK-006 warning", "TA-HOOK-009 warning", "TA-HOOK-005 info"]);
    insta::assert_snapshot!("hooks_fixture_argocd_text", trainer_audit::report::hooks::text(&report));
    insta::assert_snapshot!(
        "hooks_fixture_argocd_sarif",
        serde_json::to_string_pretty(&trainer_audit::report::sarif::sarif(&report.findings, &rules())).unwrap()
    );
    // kustomize applies the pre-delete hook at install: an error there.
    let kustomize = review(&rules(), &inv, Engine::Kustomize, None, "widgets", "apps");
    assert!(kustomize
        .findings
        .iter()
        .any(|f| f.id == "TA-HOOK-103" && f.severity.as_str() == "error" && f.subject.ends_with("demo-cleanup")));
    // Argo CD 3.3 runs PreDelete.
    let newer = review(&rules(), &inv, Engine::Argocd, Some(&semver::Version::new(3, 3, 0)), "widgets", "apps");
    assert!(newer.findings.iter().any(|f| f.id == "TA-HOOK-103" && f.severity.as_str() == "info"));
}

#[test]
fn diff_reports_crd_move_schema_runtime_delivery_values_rbac() {
    let diff = ChartDiff::compute(&inventory("upgrade-from"), &inventory("upgrade-to"));
    let crd = &diff.crds[0];
    assert_eq!(crd.name, "widgets.example.dev");
    let moved = crd.moved.as_ref().unwrap();
    assert_eq!(format!("{:?} → {:?}", moved.from, moved.to), "CrdsDir → Template");
    assert_eq!(crd.types[0].path, "spec.size");
    assert_eq!((crd.types[0].from.as_str(), crd.types[0].to.as_str()), (Some("int-or-string"), Some("integer")));
    assert_eq!(crd.schema_removed.iter().map(|c| c.to_string()).collect::<Vec<_>>(), ["spec.old (+3 nested paths)"]);
    assert_eq!(crd.schema_added.iter().map(|c| c.to_string()).collect::<Vec<_>>(), ["spec.mode"]);
    let runtime = &diff.runtimes[0];
    let delivery = runtime.delivery.as_ref().unwrap();
    assert_eq!(delivery.from, "release object");
    assert_eq!(delivery.to, "ConfigMap demo-runtimes key runtimes.yaml, applied by hook demo-installer");
    assert_eq!(diff.values.added.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["crds", "installer"]);
    assert_eq!(diff.values.removed[0].path, "legacy");
    assert!(diff.rbac.added.contains(&"ClusterRole/demo-installer: delete clustertrainingruntimes.trainer.kubeflow.org".to_string()));
    insta::assert_snapshot!("diff_fixture_text", trainer_audit::report::diff::text(&diff));
    insta::assert_snapshot!("diff_fixture_markdown", trainer_audit::report::diff::markdown(&diff));
    insta::assert_snapshot!("diff_fixture_json", serde_json::to_string_pretty(&diff).unwrap());
}

#[test]
fn cli_formats_and_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let to = fixture("upgrade-to");
    let to = to.to_str().unwrap();
    let out = run(home.path(), &["hooks", to, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["hooks"].as_array().unwrap().len(), 3);
    let out = run(home.path(), &["hooks", to, "--fail-on", "warning"]);
    assert_eq!(out.status.code(), Some(1), "warnings at --fail-on warning exit 1");
    let out = run(home.path(), &["hooks", to, "--argocd-version", "three"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--argocd-version"), "{}", stderr(&out));
    let from = fixture("upgrade-from");
    let out = run(home.path(), &["diff", from.to_str().unwrap(), to, "--format", "markdown"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("## `widgets` 1.0.0 → 2.0.0\n"), "{}", stdout(&out));
    let out = run(home.path(), &["diff", "/nonexistent/chart", to]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/chart"), "{}", stderr(&out));
}

fn rules() -> Vec<trainer_audit::audit::rules::Rule> {
    trainer_audit::audit::rules::load(None).unwrap()
}
