//! trainer-audit's CEL cost and environment verdict on CRD writes against the API server's own.
//!
//! `crdcel` (tests/controlplane/cmd/crdcel, built with the control plane at Kubernetes 1.36.1)
//! runs apiextensions-apiserver's CRD validation in process on the generated CEL corpus
//! (`testkit::celcorpus`) and, with `TRAINER_AUDIT_CORPUS`, on the CRDs of every corpus chart;
//! each rule's estimated cost and each write's verdict (create, unchanged re-apply, changed
//! re-apply, the upgrade from one chart's CRD to the next) must be the server's. The other
//! Kubernetes minors were observed once with `cargo xtask kube-versions` and are replayed from
//! tests/data/kube-versions/ by `recorded_kubernetes_versions_agree`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use testkit::celdiff::{self, Report};
use testkit::controlplane;

/// The CRDs the differential runs on, by the name `crdcel` is given: the generated corpus, then
/// (with the corpus) each chart's CRDs in version order.
fn crds() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = testkit::celcorpus::crds()
        .into_iter()
        .map(|c| (format!("generated/{}.json", c["metadata"]["name"].as_str().unwrap_or("crd")), c))
        .collect();
    if let Some(corpus) = std::env::var_os("TRAINER_AUDIT_CORPUS") {
        out.extend(corpus_crds(Path::new(&corpus)));
    }
    out
}

fn corpus_crds(corpus: &Path) -> Vec<(String, Value)> {
    let mut charts: Vec<PathBuf> = std::fs::read_dir(corpus.join("charts"))
        .expect("the corpus has charts/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    charts.sort_by_key(|p| {
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("").trim_start_matches("kubeflow-trainer-").to_string();
        semver::Version::parse(&name).ok()
    });
    let mut out = Vec::new();
    for chart in charts {
        let request = trainer_audit::upgrade::Request { chart: Some(chart.display().to_string()), ..Default::default() };
        let crds = trainer_audit::upgrade::crds::chart_crds(&request).expect("corpus chart renders");
        let stem = chart.file_stem().and_then(|s| s.to_str()).unwrap_or("chart").to_string();
        for crd in crds.crds {
            let name = crd["metadata"]["name"].as_str().unwrap_or("crd").to_string();
            out.push((format!("corpus/{stem}/{name}.json"), crd));
        }
    }
    out
}

/// Runs `crdcel` on the CRDs, written under a scratch directory by their names.
fn crdcel(binary: &Path, crds: &[(String, Value)]) -> Report {
    let dir = tempfile::tempdir().expect("scratch directory");
    for (name, crd) in crds {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("scratch directory");
        std::fs::write(&path, serde_json::to_vec(crd).expect("JSON")).expect("scratch file");
    }
    let out = Command::new(binary).current_dir(dir.path()).args(crds.iter().map(|(n, _)| n)).output().expect("crdcel runs");
    assert!(out.status.success(), "crdcel failed: {}", String::from_utf8_lossy(&out.stderr));
    if let Some(keep) = std::env::var_os("KEEP_CRDCEL") {
        std::fs::write(keep, &out.stdout).unwrap();
    }
    serde_json::from_slice(&out.stdout).expect("crdcel prints its report as JSON")
}

#[test]
fn cel_cost_and_environment_agree_with_the_api_server() {
    let test = "cel_cost_and_environment_agree_with_the_api_server";
    let binary = match std::env::var_os("TRAINER_AUDIT_CRDCEL") {
        Some(b) => PathBuf::from(b),
        None => match controlplane::bin_dir() {
            Ok(dir) => dir.join("crdcel"),
            Err(e) => {
                assert!(!controlplane::in_ci(), "{test}: {e}");
                controlplane::skipped(test, &e.to_string());
                return;
            }
        },
    };
    let crds = crds();
    let report = crdcel(&binary, &crds);
    let files: BTreeMap<String, Value> = crds.into_iter().collect();
    let c = celdiff::compare(&report, &files);
    eprintln!("cel cost differential at Kubernetes {}: {}", report.kubernetes, c.summary());
    assert!(c.disagreements.is_empty(), "{} disagreements:\n{}", c.disagreements.len(), c.disagreements.join("\n"));
    assert!(c.rules > 300 && c.writes > 40, "the corpus is all there: {}", c.summary());
}
