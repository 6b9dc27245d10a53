//! The gate on the servers `cargo xtask kube-versions` starts (issue 30 §3): TA-SCH-004 and
//! TA-K8S-001 observed where they apply. On each server Helm installs the corpus Trainer 2.1.0
//! chart (its crds/ CRDs are accepted from 1.29), `trainer-audit check` to 2.3.0 runs live against
//! that server, then the upgrade runs as Helm would (`--take-ownership --force-conflicts`, without
//! hooks: no kubelet runs them). On a server that cannot compile the 2.3.0 CRDs' CEL (1.31) check
//! must report both errors and the upgrade must be refused with TA-SCH-004's expected text
//! (`compilation failed`); on one that can (1.32), neither.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use testkit::controlplane::ControlPlane;

const RELEASE: &str = "kubeflow-trainer";
const NAMESPACE: &str = "kubeflow-system";

/// The corpus (`TRAINER_AUDIT_CORPUS`), whose charts the observation installs and upgrades to.
fn corpus() -> Result<PathBuf> {
    let dir = std::env::var_os("TRAINER_AUDIT_CORPUS")
        .map(PathBuf::from)
        .context("the observation of TA-SCH-004 installs the corpus charts: set TRAINER_AUDIT_CORPUS (e.g. ../shared/corpus)")?;
    if !dir.join("charts/kubeflow-trainer-2.3.0.tgz").is_file() {
        bail!("{} holds no charts/kubeflow-trainer-2.3.0.tgz", dir.display());
    }
    Ok(dir)
}

/// The debug `trainer-audit` binary, built when missing or stale (cargo decides).
fn trainer_audit(root: &Path) -> Result<PathBuf> {
    let status =
        Command::new(env!("CARGO")).args(["build", "-q", "-p", "trainer-audit", "--bin", "trainer-audit"]).current_dir(root).status()?;
    if !status.success() {
        bail!("cargo build -p trainer-audit failed");
    }
    Ok(root.join("target/debug/trainer-audit"))
}

/// What the server did, for the kube-versions report: lines to print, and what contradicts the
/// rules (empty when the rules hold).
pub struct Observed {
    pub lines: Vec<String>,
    pub wrong: Vec<String>,
}

/// On `cp` (kube-apiserver `version`, which `compiles_namespace_cel` or not): install 2.1.0,
/// `check --to 2.3.0` live, then the upgrade.
pub fn observe(cp: &ControlPlane, root: &Path, version: &str, compiles_namespace_cel: bool) -> Result<Observed> {
    let corpus = corpus()?;
    let chart = |v: &str| corpus.join(format!("charts/kubeflow-trainer-{v}.tgz")).display().to_string();
    let mut lines = Vec::new();
    let mut wrong = Vec::new();
    let kubeconfig = &cp.admin_kubeconfig;
    let install = cp.helm(kubeconfig, &["install", RELEASE, &chart("2.1.0"), "-n", NAMESPACE, "--create-namespace"]);
    if !install.status.success() {
        bail!("helm install 2.1.0 on {version}: {}", String::from_utf8_lossy(&install.stderr));
    }
    let audit = trainer_audit(root)?;
    let home = tempfile::tempdir()?;
    let out = Command::new(&audit)
        .args(["check", "--chart", &chart("2.3.0"), "--from-chart", &chart("2.1.0"), "--format", "json", "--kubeconfig"])
        .arg(kubeconfig)
        .env("HOME", home.path())
        .env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"))
        .output()?;
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).with_context(|| format!("check on {version}: {}", String::from_utf8_lossy(&out.stderr)))?;
    let errors: Vec<String> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{} {}", f["id"].as_str().unwrap_or(""), f["message"].as_str().unwrap_or("")))
        .collect();
    let has = |id: &str| errors.iter().any(|e| e.starts_with(&format!("{id} ")));
    lines.push(format!("check --to 2.3.0 (live, from 2.1.0): exit {:?}", out.status.code()));
    for e in errors.iter().filter(|e| e.starts_with("TA-SCH-004") || e.starts_with("TA-K8S-001")) {
        lines.push(format!("  error {}", e.chars().take(240).collect::<String>()));
    }
    for id in ["TA-SCH-004", "TA-K8S-001"] {
        if has(id) == compiles_namespace_cel {
            wrong.push(format!("{version}: check {} {id}", if has(id) { "reports" } else { "does not report" }));
        }
    }
    let upgrade = cp.helm(
        kubeconfig,
        &[
            "upgrade",
            RELEASE,
            &chart("2.3.0"),
            "-n",
            NAMESPACE,
            "--reset-then-reuse-values",
            "--take-ownership",
            "--force-conflicts",
            "--no-hooks",
        ],
    );
    let stderr = String::from_utf8_lossy(&upgrade.stderr);
    let said = stderr.find("compilation failed").map(|at| &stderr[at..]).unwrap_or(stderr.trim());
    lines.push(format!(
        "helm upgrade to 2.3.0: exit {:?}{}",
        upgrade.status.code(),
        if upgrade.status.success() {
            String::new()
        } else {
            format!(": {}", said.lines().next().unwrap_or("").chars().take(240).collect::<String>())
        }
    ));
    let refused_for_cel = !upgrade.status.success() && stderr.contains("compilation failed");
    if refused_for_cel == compiles_namespace_cel {
        wrong.push(format!(
            "{version}: the upgrade {}",
            if refused_for_cel { "is refused for its CEL" } else { "is not refused for its CEL" }
        ));
    }
    if compiles_namespace_cel && !upgrade.status.success() {
        wrong.push(format!("{version}: the upgrade failed: {}", stderr.trim()));
    }
    Ok(Observed { lines, wrong })
}
