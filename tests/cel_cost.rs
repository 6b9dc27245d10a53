//! trainer-audit's CEL cost and environment verdict on CRD writes against the API server's own.
//!
//! `crdcel` (tests/controlplane/cmd/crdcel, built with the control plane at Kubernetes 1.36.1)
//! runs apiextensions-apiserver's CRD validation in process on the generated CEL corpus
//! (`testkit::celcorpus`) and, with `TRAINER_AUDIT_CORPUS`, on the CRDs of every corpus chart;
//! each rule's estimated cost and each write's verdict (create, unchanged re-apply, changed
//! re-apply, the upgrade from one chart's CRD to the next) must be the server's. The other
//! Kubernetes minors, and real kube-apiservers, are observed with `cargo xtask kube-versions`
//! (one-off: it compares their answers with trainer-audit's verdict itself).

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
