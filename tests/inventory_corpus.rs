//! `hooks` and `diff` acceptance on the real Trainer charts of the shared corpus. Runs only when
//! `TRAINER_AUDIT_CORPUS` is set (as `.ci/run` does); a set but broken corpus fails.

mod support;

use std::path::Path;

use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use trainer_audit::audit::hooks::review;
use trainer_audit::diff::ChartDiff;
use trainer_audit::engine::Engine;
use trainer_audit::inventory::Inventory;
use trainer_audit::objects::Origin;

fn inventory(corpus: &Path, version: &str, values: Option<&str>) -> Inventory {
    let chart = Chart::load_archive_file(&corpus.join(format!("charts/kubeflow-trainer-{version}.tgz"))).unwrap();
    let mut o = RenderOptions::default();
    if let Some(v) = values {
        o.values = helm_render::values::read_values_file(&std::fs::read_to_string(corpus.join("values").join(v)).unwrap()).unwrap();
    }
    o.release.name = "kubeflow-trainer".into();
    o.release.namespace = "kubeflow-system".into();
    Inventory::build(&chart, &render_chart(&chart, &o).unwrap(), "kubeflow-system")
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn hooks_of_2_3_0_with_every_runtime() {
    let corpus = support::corpus();
    let inv = inventory(&corpus, "2.3.0", Some("runtimes-all.yaml"));
    let report = review(&rules(), &inv, Engine::Helm, None, "kubeflow-trainer", "kubeflow-system");
    let hook = |name: &str| report.hooks.iter().find(|h| h.hook.identity.name == name).unwrap();
    let installer = hook("kubeflow-trainer-runtimes-installer");
    let cleanup = hook("kubeflow-trainer-runtimes-installer-cleanup");
    assert_eq!(installer.hook.events, ["post-install", "post-upgrade"]);
    assert_eq!(cleanup.hook.events, ["pre-delete"]);
    for h in [installer, cleanup] {
        assert_eq!(h.hook.weight, 0);
        assert_eq!(h.hook.delete_policies, ["before-hook-creation", "hook-succeeded"]);
        assert_eq!(h.hook.containers[0].image, "docker.io/alpine:3.21");
    }
    assert!(installer.argocd.iter().all(|p| p.phase == Some("PostSync")), "installer → PostSync on every sync");
    assert_eq!((cleanup.argocd[0].phase, cleanup.argocd[0].since), (Some("PreDelete"), Some("3.3.0")));
    assert!(cleanup.helm.contains("at pre-delete"), "{}", cleanup.helm);
    let has = |id: &str, subject: &str| report.findings.iter().any(|f| f.id == id && f.subject.ends_with(subject));
    assert!(has("TA-HOOK-102", "kubeflow-trainer-runtimes-installer"), "apk add egress");
    assert!(has("TA-HOOK-002", "kubeflow-trainer-runtimes-installer"), "--force-conflicts");
    assert!(has("TA-HOOK-003", "kubeflow-trainer-runtimes-installer"), "prune loop");
    assert!(has("TA-HOOK-101", "kubeflow-trainer-runtimes-installer"), "no securityContext");
    assert!(has("TA-HOOK-006", "kubeflow-trainer-runtimes-installer"), "alpine not digest-pinned");
    assert!(has("TA-HOOK-007", "kubeflow-trainer-runtimes-installer"), "delete on clustertrainingruntimes");
    let size = |name: &str| report.crds.iter().find(|c| c.name == name).unwrap();
    for name in ["clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org"] {
        let c = size(name);
        assert!(c.over_budget && (350_000..365_000).contains(&c.json_size), "{name}: {}", c.json_size);
        assert!(!c.keep);
    }
    let tj = size("trainjobs.trainer.kubeflow.org");
    assert!(!tj.over_budget && (180_000..190_000).contains(&tj.json_size), "{}", tj.json_size);
    assert_eq!(report.findings.iter().filter(|f| f.id == "TA-CRD-011").count(), 3, "no keep policy on the three CRDs");
    // The runtimes live in the installer ConfigMap.
    assert!(!inv.runtimes.is_empty());
    assert!(inv
        .runtimes
        .iter()
        .all(|r| r.delivery.describe().starts_with("ConfigMap kubeflow-trainer-runtimes-installer key runtimes.yaml")));
    insta::assert_snapshot!("hooks_2_3_0_runtimes_all_text", trainer_audit::report::hooks::text(&report));
    insta::assert_snapshot!("hooks_2_3_0_runtimes_all_json", serde_json::to_string_pretty(&report).unwrap());
    insta::assert_snapshot!(
        "hooks_2_3_0_runtimes_all_sarif",
        serde_json::to_string_pretty(&trainer_audit::report::sarif::sarif(&report.findings, &rules())).unwrap()
    );
    // kustomize: the cleanup Job runs once, when first applied: at install.
    let kustomize = review(&rules(), &inv, Engine::Kustomize, None, "kubeflow-trainer", "kubeflow-system");
    assert!(kustomize.findings.iter().any(|f| f.id == "TA-HOOK-103"
        && f.subject.ends_with("cleanup")
        && f.message.contains("runs once when first applied: at install")));
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn argocd_counts_crds_from_the_crds_directory() {
    let corpus = support::corpus();
    let inv = inventory(&corpus, "2.2.1", None);
    let helm = review(&rules(), &inv, Engine::Helm, None, "kubeflow-trainer", "kubeflow-system");
    assert!(helm.crds.is_empty(), "Helm never client-side applies crds/");
    let argocd = review(&rules(), &inv, Engine::Argocd, None, "kubeflow-trainer", "kubeflow-system");
    let jobset = argocd.crds.iter().find(|c| c.name == "jobsets.jobset.x-k8s.io").unwrap();
    assert_eq!(jobset.origin, Origin::CrdsDir);
    assert!(jobset.over_budget && (350_000..362_000).contains(&jobset.json_size), "{}", jobset.json_size);
    assert!(argocd
        .findings
        .iter()
        .any(|f| f.id == "TA-HOOK-104" && f.subject.ends_with("jobsets.jobset.x-k8s.io") && f.severity.as_str() == "error"));
}

fn crd<'a>(diff: &'a ChartDiff, name: &str) -> &'a trainer_audit::diff::CrdChange {
    diff.crds.iter().find(|c| c.name == name).unwrap()
}

fn paths(list: &[trainer_audit::inventory::paths::Collapsed]) -> Vec<&str> {
    list.iter().map(|c| c.path.as_str()).collect()
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn diff_2_1_0_to_2_2_0() {
    let corpus = support::corpus();
    let diff = ChartDiff::compute(&inventory(&corpus, "2.1.0", None), &inventory(&corpus, "2.2.0", None));
    let tj = crd(&diff, "trainjobs.trainer.kubeflow.org");
    let removed = paths(&tj.schema_removed);
    for p in ["spec.podTemplateOverrides", "spec.labels", "spec.annotations"] {
        assert!(removed.contains(&p), "{p} not in {removed:?}");
    }
    assert!(paths(&tj.schema_added).contains(&"spec.runtimePatches"));
    let npn = tj.types.iter().find(|t| t.path == "spec.trainer.numProcPerNode").unwrap();
    assert_eq!((npn.from.as_str(), npn.to.as_str()), (Some("int-or-string"), Some("integer")));
    for runtime_crd in ["clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org"] {
        let removed = paths(&crd(&diff, runtime_crd).schema_removed);
        assert!(
            removed.contains(&"spec.mlPolicy.torch.numProcPerNode") && removed.contains(&"spec.mlPolicy.torch.elasticPolicy"),
            "{removed:?}"
        );
    }
    assert!(paths(&diff.values.removed).contains(&"manager.annotations"));
    assert!(paths(&diff.values.added).contains(&"runtimes"));
    insta::assert_snapshot!("diff_2_1_0_2_2_0_text", trainer_audit::report::diff::text(&diff));
    insta::assert_snapshot!("diff_2_1_0_2_2_0_markdown", trainer_audit::report::diff::markdown(&diff));
    insta::assert_snapshot!("diff_2_1_0_2_2_0_json", serde_json::to_string_pretty(&diff).unwrap());
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn diff_2_2_1_to_2_3_0() {
    let corpus = support::corpus();
    let from = inventory(&corpus, "2.2.1", Some("runtimes-all.yaml"));
    let to = inventory(&corpus, "2.3.0", Some("runtimes-all.yaml"));
    let diff = ChartDiff::compute(&from, &to);
    for name in ["clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org", "trainjobs.trainer.kubeflow.org"]
    {
        let moved = crd(&diff, name).moved.as_ref().unwrap_or_else(|| panic!("{name} did not move"));
        assert_eq!((moved.from, moved.to), (Origin::CrdsDir, Origin::Template));
    }
    let torch = diff.runtimes.iter().find(|r| r.name == "torch-distributed").unwrap();
    let delivery = torch.delivery.as_ref().unwrap();
    assert_eq!(delivery.from, "release object");
    assert!(delivery.to.starts_with("ConfigMap kubeflow-trainer-runtimes-installer key runtimes.yaml, applied by hook"));
    let images = torch.images.as_ref().unwrap();
    assert_eq!(images.from, ["pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime"]);
    assert_eq!(images.to, ["pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"]);
    let added = paths(&diff.values.added);
    for p in ["crds", "runtimes.installer", "runtimes.commonLabels", "manager.config.clientConnection"] {
        assert!(added.contains(&p), "{p} not in {added:?}");
    }
    assert!(diff.rbac.added.contains(&"ClusterRole/kubeflow-trainer-controller-manager: delete jobsets.jobset.x-k8s.io".to_string()));
    assert_eq!(diff.subcharts.iter().map(|s| (s.name.as_str(), s.to.as_deref())).collect::<Vec<_>>(), [("jobset", Some("0.12.0"))]);
    assert_eq!(diff.hooks.added.len(), 2);
    insta::assert_snapshot!("diff_2_2_1_2_3_0_text", trainer_audit::report::diff::text(&diff));
    insta::assert_snapshot!("diff_2_2_1_2_3_0_markdown", trainer_audit::report::diff::markdown(&diff));
    insta::assert_snapshot!("diff_2_2_1_2_3_0_json", serde_json::to_string_pretty(&diff).unwrap());
}

fn rules() -> Vec<trainer_audit::audit::rules::Rule> {
    trainer_audit::audit::rules::load(None).unwrap()
}
