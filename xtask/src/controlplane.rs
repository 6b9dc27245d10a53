//! `cargo xtask controlplane`: builds the tests' control plane — etcd, kube-apiserver,
//! kube-controller-manager, kubectl and the helm CLI, and the Trainer, JobSet and Kueue controllers
//! the rehearsals run — from the Go modules in `tests/controlplane/` once (with the Kueue chart its
//! module ships), and caches the binaries
//! under `target/controlplane/<key>/bin/`. The key hashes everything that decides the bytes (go.mod,
//! go.sum, the module's own Go files, the link flags, `go version`), so a changed pin rebuilds and
//! an unchanged one costs nothing. Go's own module and build caches are used as they are, so a
//! rebuild after a key change compiles only what changed.
//!
//! `target/controlplane/current` names the bin directory of the last successful build: the tests'
//! harness (`testkit::controlplane`) reads it when `TRAINER_AUDIT_CONTROLPLANE_BIN` is unset, so a
//! plain `cargo test` after one `cargo xtask controlplane` finds the binaries.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// Environment variable through which `cargo xtask test` hands the bin directory to the tests.
pub const BIN_ENV: &str = "TRAINER_AUDIT_CONTROLPLANE_BIN";

/// One binary: its name in the bin directory, the Go module it is built in (a directory under
/// `tests/controlplane/`, `""` for the control plane's own module) and its package.
struct Binary {
    name: &'static str,
    module: &'static str,
    package: &'static str,
}

/// The binaries. `go build` without `-ldflags -X` leaves kube-apiserver at `v0.0.0-master` and
/// Helm at `v4.2`, which breaks every version comparison (ours and a chart's `kubeVersion`), hence
/// the flags below for the control plane's module. kube-controller-manager comes from the same
/// `k8s.io/kubernetes` module as kube-apiserver, so it shares nearly all compiled packages with it
/// (one module build per Kubernetes minor). The Trainer controller manager is built in a module
/// of its own per version (its `k8s.io/*` and controller-runtime pins must not move the control
/// plane's), with plain `-s -w`; so is the JobSet controller at each version a chart pins (0.12.0
/// in Trainer 2.3.0's chart, 0.11.0 in 2.2.1's, 0.10.1 in 2.1.0's). Only the versions a scenario
/// runs are built: Trainer 2.1.0 (its chart's JobSet 0.10.1 with it) and Kueue 0.17.0 for the
/// neighbour scenario beside Kueue (Kueue's manager is `cmd/kueue`; its image
/// `registry.k8s.io/kueue/kueue:v0.17.0` maps to `kueue-v0.17.0`), Trainer 2.2.0 for the Helm and
/// kustomize 2.2.0 starting points, Trainer 2.0.0 with its chart's JobSet 0.8.2 for the 2.0.0 one.
const BINARIES: [Binary; 15] = [
    Binary { name: "etcd", module: "", package: "./cmd/etcd" },
    Binary { name: "kube-apiserver", module: "", package: "k8s.io/kubernetes/cmd/kube-apiserver" },
    Binary { name: "kube-controller-manager", module: "", package: "k8s.io/kubernetes/cmd/kube-controller-manager" },
    Binary { name: "kubectl", module: "", package: "k8s.io/kubernetes/cmd/kubectl" },
    Binary { name: "helm", module: "", package: "helm.sh/helm/v4/cmd/helm" },
    Binary {
        name: "trainer-controller-manager-v2.3.0",
        module: "trainer-v2.3.0",
        package: "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    },
    Binary {
        name: "trainer-controller-manager-v2.2.1",
        module: "trainer-v2.2.1",
        package: "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    },
    // JobSet's manager is its module's root package (`main.go`). The charts' JobSet image tag is
    // `main`, so the stand-in names the binary by the chart's `app.kubernetes.io/version` label:
    // `jobset-v<version>` (see testkit::standin's controller part).
    Binary { name: "jobset-v0.12.0", module: "jobset-v0.12.0", package: "sigs.k8s.io/jobset" },
    Binary { name: "jobset-v0.11.0", module: "jobset-v0.11.0", package: "sigs.k8s.io/jobset" },
    Binary {
        name: "trainer-controller-manager-v2.1.0",
        module: "trainer-v2.1.0",
        package: "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    },
    Binary { name: "jobset-v0.10.1", module: "jobset-v0.10.1", package: "sigs.k8s.io/jobset" },
    Binary { name: "kueue-v0.17.0", module: "kueue-v0.17.0", package: "sigs.k8s.io/kueue/cmd/kueue" },
    Binary {
        name: "trainer-controller-manager-v2.2.0",
        module: "trainer-v2.2.0",
        package: "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    },
    Binary {
        name: "trainer-controller-manager-v2.0.0",
        module: "trainer-v2.0.0",
        package: "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    },
    Binary { name: "jobset-v0.8.2", module: "jobset-v0.8.2", package: "sigs.k8s.io/jobset" },
];

/// Charts a module ships at its tag that the rehearsals install as they are (the Kueue chart is
/// published from `charts/kueue` of the tag, see `hack/helm-chart-package.sh`): copied from the
/// module's directory in Go's module cache to `bin/charts/<name>`. (module dir under
/// `tests/controlplane/`, Go module path, directory in the module, name under `bin/charts/`.)
const CHARTS: [(&str, &str, &str, &str); 1] = [("kueue-v0.17.0", "sigs.k8s.io/kueue", "charts/kueue", "kueue-v0.17.0")];

const KUBE_VERSION: (&str, &str, &str) = ("v1.36.1", "1", "36");
const HELM_VERSION: &str = "v4.2.3";

fn ldflags() -> String {
    let (git, major, minor) = KUBE_VERSION;
    let mut flags = vec!["-s".to_string(), "-w".to_string()];
    for pkg in ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"] {
        for (var, value) in [("gitVersion", git), ("gitMajor", major), ("gitMinor", minor), ("gitTreeState", "clean")] {
            flags.push(format!("-X {pkg}.{var}={value}"));
        }
    }
    flags.push(format!("-X helm.sh/helm/v4/internal/version.version={HELM_VERSION}"));
    flags.join(" ")
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"))
}

fn module_dir() -> PathBuf {
    workspace_root().join("tests/controlplane")
}

/// `cargo xtask controlplane [--force]`.
pub fn run(args: &[String]) -> Result<()> {
    let force = match args {
        [] => false,
        [flag] if flag == "--force" => true,
        other => bail!("cargo xtask controlplane: unexpected arguments {other:?} (only --force)"),
    };
    let bin = ensure(force)?;
    println!("{}", bin.display());
    Ok(())
}

/// Whether a Go toolchain is on PATH (the tests then skip the control-plane cases outside CI).
pub fn go_available() -> bool {
    Command::new("go").arg("version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Builds (or reuses) the binaries and returns their directory.
pub fn ensure(force: bool) -> Result<PathBuf> {
    let mut build = Build::prepare(force)?;
    build.base()?;
    build.finish()
}

/// How many of [`BINARIES`] every control-plane test needs (testkit's `bin_dir`): etcd,
/// kube-apiserver, kube-controller-manager, kubectl, helm and Trainer 2.3.0's manager. The rest are
/// the controllers the stand-in runs as Pods, which `cargo xtask test` builds while the first tests
/// run.
const BASE: usize = 6;

/// The marker a build under way leaves in its bin directory, holding the builder's process id:
/// testkit's `wait_for_build` waits on it for a controller binary not yet built.
const BUILDING: &str = ".building";

/// One build of the bin directory of the current key, in two stages: [`Build::base`], then
/// [`Build::finish`]. Each binary is written under a temporary name and renamed into place, so a
/// reader of the directory (a test started between the stages) sees a binary whole or not at all;
/// `.complete` is written last. An interrupted build resumes: the key hashes every input, so a
/// binary already in the directory is the one this build would write.
pub struct Build {
    module: PathBuf,
    flags: String,
    go_version: String,
    key: String,
    root: PathBuf,
    bin: PathBuf,
    force: bool,
    /// Set when the directory was complete already, or once [`Build::finish`] made it so.
    done: bool,
    started: Instant,
    timings: Vec<String>,
}

impl Build {
    /// Computes the key; unless the directory is complete already, marks it as being built.
    pub fn prepare(force: bool) -> Result<Build> {
        let module = module_dir();
        let go_version = go_output(&module, &["version"]).context(
            "the control plane is built with Go, and `go version` failed: install Go (tests/controlplane/go.mod names the version)",
        )?;
        let flags = ldflags();
        let key = cache_key(&module, &flags, &go_version)?;
        let root = target_dir().join("controlplane");
        let bin = root.join(&key).join("bin");
        let complete = !force
            && bin.join(".complete").is_file()
            && BINARIES.iter().all(|b| bin.join(b.name).is_file())
            && CHARTS.iter().all(|(_, _, _, name)| bin.join("charts").join(name).join("Chart.yaml").is_file());
        if complete {
            eprintln!("xtask: control plane binaries up to date ({})", bin.display());
        } else {
            std::fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
            let _ = std::fs::remove_file(bin.join(".complete"));
            std::fs::write(bin.join(BUILDING), format!("{}\n", std::process::id())).context("marking the control plane build")?;
        }
        Ok(Build { module, flags, go_version, key, root, bin, force, done: complete, started: Instant::now(), timings: Vec::new() })
    }

    /// The bin directory (complete only after [`Build::finish`]).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The binaries every control-plane test needs, checked for their pinned versions.
    pub fn base(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        for binary in &BINARIES[..BASE] {
            self.build(binary)?;
        }
        check_versions(&self.bin)
    }

    /// The controllers and the charts; then the directory is complete and recorded as current.
    pub fn finish(mut self) -> Result<PathBuf> {
        if !self.done {
            for binary in &BINARIES[BASE..] {
                self.build(binary)?;
            }
            for (subdir, path, chart, name) in CHARTS {
                let dir = go_output(&self.module.join(subdir), &["list", "-m", "-f", "{{.Dir}}", path])?;
                let into = self.bin.join("charts").join(name);
                let _ = std::fs::remove_dir_all(&into);
                copy_tree(&Path::new(dir.trim()).join(chart), &into)
                    .with_context(|| format!("copying {chart} of {path} into the bin directory"))?;
            }
            // Each binary's build time, kept beside them (docs/rehearsals.md "Build cost").
            std::fs::write(self.bin.join(".timings"), format!("{}\n", self.timings.join("\n")))?;
            std::fs::write(self.bin.join(".complete"), format!("{}\n{}\n{}", self.key, self.flags, self.go_version.trim()))?;
            let _ = std::fs::remove_file(self.bin.join(BUILDING));
            self.done = true;
            eprintln!("xtask: control plane built in {:.1} s ({})", self.started.elapsed().as_secs_f64(), self.bin.display());
        }
        record_current(&self.root, &self.bin)?;
        Ok(self.bin.clone())
    }

    /// `go build` of one binary, unless it is built already. At the tests' own priority: the
    /// controllers, not the tests beside them, are what the rehearsals wait for.
    fn build(&mut self, Binary { name, module: subdir, package }: &Binary) -> Result<()> {
        let target = self.bin.join(name);
        if !self.force && target.is_file() {
            return Ok(());
        }
        let step = Instant::now();
        let (dir, flags) = if subdir.is_empty() { (self.module.clone(), self.flags.as_str()) } else { (self.module.join(subdir), "-s -w") };
        eprintln!("xtask: building {name} ({package}) with {}", self.go_version.trim());
        let partial = self.bin.join(format!(".{name}.partial"));
        let output = Command::new("go")
            .current_dir(&dir)
            .args(["build", "-trimpath", "-ldflags", flags, "-o"])
            .arg(&partial)
            .arg(package)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running `go build` for {name}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
            bail!("building {name} from {package} in {} failed ({}):\n{}", dir.display(), output.status, tail.join("\n"));
        }
        std::fs::rename(&partial, &target).with_context(|| format!("moving {} to {}", partial.display(), target.display()))?;
        let line = format!("built {name} in {:.1} s", step.elapsed().as_secs_f64());
        eprintln!("xtask: {line}");
        self.timings.push(line);
        Ok(())
    }
}

impl Drop for Build {
    /// A build that stops short (an error, a panic) takes its marker away, so no test waits on it.
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(self.bin.join(BUILDING));
        }
    }
}

fn record_current(root: &Path, bin: &Path) -> Result<()> {
    let absolute = std::fs::canonicalize(bin).with_context(|| format!("resolving {}", bin.display()))?;
    std::fs::write(root.join("current"), format!("{}\n", absolute.display())).context("writing target/controlplane/current")?;
    Ok(())
}

/// The binaries must report the pinned versions: a missing `-X` (a renamed variable upstream)
/// would otherwise surface much later as a confusing version mismatch inside a test.
fn check_versions(bin: &Path) -> Result<()> {
    let (git, _, _) = KUBE_VERSION;
    let checks: [(&str, &[&str], String); 5] = [
        ("kube-apiserver", &["--version"], format!("Kubernetes {git}")),
        ("kube-controller-manager", &["--version"], format!("Kubernetes {git}")),
        ("kubectl", &["version", "--client"], format!("Client Version: {git}")),
        ("helm", &["version", "--template", "{{.Version}}"], HELM_VERSION.to_string()),
        ("etcd", &["--version"], "etcd Version: 3.".to_string()),
    ];
    for (name, args, expected) in checks {
        let output = Command::new(bin.join(name)).args(args).output().with_context(|| format!("running the built {name}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || !text.contains(&expected) {
            bail!(
                "the built {name} reports {:?}, expected it to contain {expected:?} (check the -X flags in xtask/src/controlplane.rs)",
                text.trim()
            );
        }
    }
    Ok(())
}

fn go_output(module: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new("go").current_dir(module).args(args).stdin(Stdio::null()).output()?;
    if !output.status.success() {
        bail!("`go {}` failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Hash of the inputs that decide the binaries' bytes: go.mod, go.sum, every file of the module
/// and of the modules under it (the Trainer controller's), the link flags and the toolchain.
fn cache_key(module: &Path, flags: &str, go_version: &str) -> Result<String> {
    let mut files = Vec::new();
    collect_files(module, module, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for rel in &files {
        let bytes = std::fs::read(module.join(rel)).with_context(|| format!("reading {}", module.join(rel).display()))?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hasher.update(flags.as_bytes());
    hasher.update([0]);
    hasher.update(go_version.trim().as_bytes());
    Ok(hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// Copies a directory tree (files made writable: the module cache's are read-only).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::write(&target, std::fs::read(entry.path())?)?;
        }
    }
    Ok(())
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
            out.push(rel);
        }
    }
    Ok(())
}
