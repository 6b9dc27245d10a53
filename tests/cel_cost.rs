//! trainer-audit's CEL cost and environment verdict on CRD writes against the API server's own.
//!
//! `crdcel` (tests/controlplane/cmd/crdcel at Kubernetes 1.36.1, the control plane's version;
//! built on demand, not with the control plane) runs apiextensions-apiserver's CRD validation in
//! process on the generated CEL corpus (`testkit::celcorpus`) and, with `TRAINER_AUDIT_CORPUS`, on
//! the CRDs of every corpus chart; each rule's estimated cost and each write's verdict (create,
//! unchanged re-apply, changed re-apply, the upgrade from one chart's CRD to the next) must be the
//! server's. Real kube-apiservers of other minors were observed with `cargo xtask kube-versions`;
//! `recorded_kubernetes_versions_agree` replays what it recorded (tests/data/kube-versions/).

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
    // Not part of the control plane (its build would lengthen every cold CI run): built on
    // demand by `cargo xtask kube-versions --no-servers --only v1.36.1`.
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/kube-versions/v1.36.1/crdcel/crdcel");
    let binary = match std::env::var_os("TRAINER_AUDIT_CRDCEL").map(PathBuf::from) {
        Some(b) => b,
        None if built.is_file() => built,
        None => {
            let why = "no crdcel: set TRAINER_AUDIT_CRDCEL, or build it with `cargo xtask kube-versions --no-servers --only v1.36.1`";
            controlplane::skipped(test, why);
            return;
        }
    };
    let crds = crds();
    let report = crdcel(&binary, &crds);
    let files: BTreeMap<String, Value> = crds.into_iter().collect();
    let c = celdiff::compare(&report, &files);
    eprintln!("cel cost differential at Kubernetes {}: {}", report.kubernetes, c.summary());
    assert!(c.disagreements.is_empty(), "{} disagreements:\n{}", c.disagreements.len(), c.disagreements.join("\n"));
    assert!(c.rules > 500 && c.writes > 40, "the corpus is all there: {}", c.summary());
}

/// The recordings of `cargo xtask kube-versions` (real kube-apiservers' answers, and crdcel's at
/// other minors), replayed against trainer-audit at each version: CI checks the verdict at the
/// minors it claims without building their servers. The recorded corpus-chart CRDs need
/// `TRAINER_AUDIT_CORPUS` (skipped visibly without it).
#[test]
fn recorded_kubernetes_versions_agree() {
    let test = "recorded_kubernetes_versions_agree";
    let Some(corpus) = std::env::var_os("TRAINER_AUDIT_CORPUS") else {
        controlplane::skipped(test, "TRAINER_AUDIT_CORPUS is unset: the recordings are of the corpus charts' CRDs");
        return;
    };
    let mut files: BTreeMap<String, Value> = celdiff::generated().into_iter().collect();
    files.extend(celdiff::corpus_crds(Path::new(&corpus)).expect("the corpus charts render"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kube-versions");
    let mut recordings: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("tests/data/kube-versions").filter_map(|e| e.ok().map(|e| e.path())).collect();
    recordings.retain(|p| p.extension().is_some_and(|x| x == "json"));
    recordings.sort();
    let mut failures = Vec::new();
    let mut writes = 0;
    for path in &recordings {
        let report: Report = serde_json::from_slice(&std::fs::read(path).expect("recording")).expect("a crdcel report");
        let unknown: Vec<&str> = report.crds.iter().filter(|c| !files.contains_key(&c.file)).map(|c| c.file.as_str()).collect();
        assert!(unknown.is_empty(), "{}: recorded CRDs the corpus no longer has: {unknown:?}", path.display());
        let c = celdiff::compare(&report, &files);
        eprintln!("{}: {}", path.file_name().and_then(|n| n.to_str()).unwrap_or(""), c.summary());
        writes += c.writes;
        failures.extend(c.disagreements.into_iter().map(|d| format!("{}: {d}", path.display())));
    }
    assert!(recordings.len() >= 2 && writes > 300, "the recordings are there: {} files, {writes} writes", recordings.len());
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}
