//! trainer-audit's CEL cost and environment verdict on CRD writes against the API server's own.
//!
//! `crdcel` (tests/controlplane/cmd/crdcel, built with the control plane at Kubernetes 1.36.1)
//! runs apiextensions-apiserver's CRD validation in process on the generated CEL corpus
//! (`testkit::celcorpus`) and, with `TRAINER_AUDIT_CORPUS`, on the CRDs of every corpus chart;
//! each rule's estimated cost and each write's verdict (create, unchanged re-apply, changed
//! re-apply, the upgrade from one chart's CRD to the next) must be the server's. The other
//! Kubernetes minors, and real kube-apiservers, were observed once with `cargo xtask
//! kube-versions`; `recorded_kubernetes_versions_agree` replays those recordings
//! (tests/data/kube-versions/) against trainer-audit's verdict at each version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use testkit::celdiff::{self, Report};
use testkit::controlplane;

/// The CRDs the differential runs on: the generated corpus, then (with the corpus) each chart's.
fn crds() -> Vec<(String, Value)> {
    let mut out = celdiff::generated();
    if let Some(corpus) = std::env::var_os("TRAINER_AUDIT_CORPUS") {
        out.extend(celdiff::corpus_crds(Path::new(&corpus)).expect("the corpus charts render"));
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
    serde_json::from_slice(&out.stdout).expect("crdcel prints its report as JSON")
}

#[test]
fn cel_cost_and_environment_agree_with_the_api_server() {
    let test = "cel_cost_and_environment_agree_with_the_api_server";
    let binary = match std::env::var_os("TRAINER_AUDIT_CRDCEL") {
        Some(b) => PathBuf::from(b),
        None => match controlplane::bin_dir() {
            Ok(dir) if dir.join("crdcel").is_file() => dir.join("crdcel"),
            Ok(dir) => {
                let why = format!("{} has no crdcel (built by `cargo xtask controlplane` since the CEL cost differential)", dir.display());
                assert!(!controlplane::in_ci(), "{test}: {why}");
                controlplane::skipped(test, &why);
                return;
            }
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
    assert!(c.rules > 500 && c.writes > 40, "the corpus is all there: {}", c.summary());
}

/// The recordings of `cargo xtask kube-versions`: crdcel at every minor it built, and the real
/// kube-apiservers' answers, replayed against trainer-audit at each version. The recorded
/// corpus-chart CRDs need `TRAINER_AUDIT_CORPUS` (skipped visibly without it).
#[test]
fn recorded_kubernetes_versions_agree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kube-versions");
    let mut files: BTreeMap<String, Value> = celdiff::generated().into_iter().collect();
    let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS");
    match &corpus {
        Some(c) => files.extend(celdiff::corpus_crds(Path::new(c)).expect("the corpus charts render")),
        None => controlplane::skipped("recorded_kubernetes_versions_agree (corpus CRDs)", "TRAINER_AUDIT_CORPUS is unset"),
    }
    let mut recordings: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("tests/data/kube-versions").filter_map(|e| e.ok().map(|e| e.path())).collect();
    recordings.sort();
    let mut seen = 0;
    let mut failures = Vec::new();
    for path in recordings.iter().filter(|p| p.extension().is_some_and(|x| x == "json")) {
        let mut report: Report = serde_json::from_slice(&std::fs::read(path).expect("recording")).expect("a crdcel report");
        report.crds.retain(|c| files.contains_key(&c.file));
        let c = celdiff::compare(&report, &files);
        eprintln!("{}: {}", path.file_name().and_then(|n| n.to_str()).unwrap_or(""), c.summary());
        seen += 1;
        failures.extend(c.disagreements.into_iter().map(|d| format!("{}: {d}", path.display())));
    }
    assert!(seen >= 8, "the recordings are there: {seen} in {}", dir.display());
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}
