//! `cargo xtask kube-minimum`: the evidence for the Kubernetes minimums in `rules/compat.yaml`
//! (one-off, not in CI: two kube-apiserver builds cost 10+ CPU-minutes). Builds kube-apiserver
//! v1.31.14 and v1.32.13 from `k8s.io/kubernetes` (one generated Go module per version under
//! `target/kube-minimum/`, staging modules pointed at the matching `v0.X.Y` tags), starts each
//! with the control plane's etcd (`testkit::controlplane`) and creates the CRDs of Trainer v2.1.0,
//! v2.2.1, v2.3.0 (`manifests/base/crds`, the same CRDs the charts ship) and JobSet v0.11.0 and
//! v0.12.0 (`charts/jobset/crds`) from the Go module cache. Prints which server accepts which CRD
//! and fails when that differs from what the compat table rests on: v1.31.14 refuses the 2.2.1
//! and 2.3.0 runtime CRDs and both JobSet CRDs (their CEL reads `metadata.namespace`), accepts
//! 2.1.0's; v1.32.13 accepts all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// (kube-apiserver version, whether it must accept the CEL on `metadata.namespace`).
const SERVERS: [(&str, bool); 2] = [("v1.31.14", false), ("v1.32.13", true)];

/// (module@version, file in it, whether the CRD uses CEL on a template's `metadata.namespace`).
const CRDS: &[(&str, &str, bool)] = &[
    ("github.com/kubeflow/trainer/v2@v2.1.0", "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml", false),
    ("github.com/kubeflow/trainer/v2@v2.1.0", "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml", false),
    ("github.com/kubeflow/trainer/v2@v2.1.0", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml", false),
    ("github.com/kubeflow/trainer/v2@v2.2.1", "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml", true),
    ("github.com/kubeflow/trainer/v2@v2.2.1", "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml", true),
    ("github.com/kubeflow/trainer/v2@v2.2.1", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml", false),
    ("github.com/kubeflow/trainer/v2@v2.3.0", "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml", true),
    ("github.com/kubeflow/trainer/v2@v2.3.0", "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml", true),
    ("github.com/kubeflow/trainer/v2@v2.3.0", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml", false),
    ("sigs.k8s.io/jobset@v0.11.0", "charts/jobset/crds/jobset.x-k8s.io_jobsets.yaml", true),
    ("sigs.k8s.io/jobset@v0.12.0", "charts/jobset/crds/jobset.x-k8s.io_jobsets.yaml", true),
];

fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn run_go(dir: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new("go").current_dir(dir).args(args).env("GOFLAGS", "-mod=mod").stdin(Stdio::null()).output()?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        bail!("go {} in {} failed:\n{}", args.join(" "), dir.display(), tail.join("\n"));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The module directory of `module@version` in the Go module cache (downloaded when missing).
fn module_dir(spec: &str) -> Result<PathBuf> {
    let out = run_go(&std::env::temp_dir(), &["mod", "download", "-json", spec])?;
    let info: serde_json::Value = serde_json::from_str(&out).context("go mod download -json output")?;
    Ok(PathBuf::from(info["Dir"].as_str().with_context(|| format!("go mod download {spec}: no Dir ({info})"))?))
}

/// A Go module that builds kube-apiserver at `version`: k8s.io/kubernetes requires its staging
/// modules at v0.0.0 and replaces them with local paths, so each is pointed at its `v0.X.Y` tag.
fn go_mod(version: &str) -> Result<String> {
    let kubernetes = run_go(&std::env::temp_dir(), &["mod", "download", "-json", &format!("k8s.io/kubernetes@{version}")])?;
    let info: serde_json::Value = serde_json::from_str(&kubernetes)?;
    let upstream = std::fs::read_to_string(info["GoMod"].as_str().context("no GoMod")?)?;
    let staging_version = format!("v0.{}", version.trim_start_matches("v1."));
    let mut replaces = String::new();
    for line in upstream.lines() {
        if let Some((module, "./staging")) = line.trim().split_once(" => ").map(|(m, p)| (m, p.split("/src/").next().unwrap_or(p))) {
            replaces.push_str(&format!("\t{module} => {module} {staging_version}\n"));
        }
    }
    if replaces.is_empty() {
        bail!("k8s.io/kubernetes@{version}'s go.mod replaces no staging module");
    }
    Ok(format!(
        "module trainer-audit.test/kube-minimum\n\ngo 1.26.0\n\ntool k8s.io/kubernetes/cmd/kube-apiserver\n\nrequire k8s.io/kubernetes {version}\n\nreplace (\n{replaces})\n"
    ))
}

/// Builds (or reuses) kube-apiserver at `version`; returns the binary.
fn build(version: &str) -> Result<PathBuf> {
    let dir = root().join("target/kube-minimum").join(version);
    let binary = dir.join("kube-apiserver");
    if binary.is_file() {
        let out = Command::new(&binary).arg("--version").output()?;
        if String::from_utf8_lossy(&out.stdout).contains(&format!("Kubernetes {version}")) {
            eprintln!("xtask: kube-apiserver {version} already built ({})", binary.display());
            return Ok(binary);
        }
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("go.mod"), go_mod(version)?)?;
    run_go(&dir, &["mod", "tidy"])?;
    let minor = version.trim_start_matches("v1.").split('.').next().unwrap_or("0");
    let mut flags = vec!["-s".to_string(), "-w".to_string()];
    for pkg in ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"] {
        for (var, value) in [("gitVersion", version), ("gitMajor", "1"), ("gitMinor", minor), ("gitTreeState", "clean")] {
            flags.push(format!("-X {pkg}.{var}={value}"));
        }
    }
    eprintln!("xtask: building kube-apiserver {version} (several CPU-minutes)");
    let started = std::time::Instant::now();
    let out = binary.to_string_lossy().into_owned();
    run_go(&dir, &["build", "-trimpath", "-ldflags", &flags.join(" "), "-o", &out, "k8s.io/kubernetes/cmd/kube-apiserver"])?;
    eprintln!("xtask: built kube-apiserver {version} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(binary)
}

/// A bin directory with the control plane's etcd, kubectl and helm and this kube-apiserver.
fn bin_dir(version: &str, apiserver: &Path, shared: &Path) -> Result<PathBuf> {
    let dir = root().join("target/kube-minimum").join(version).join("bin");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    for name in ["etcd", "kubectl", "helm"] {
        std::os::unix::fs::symlink(shared.join(name), dir.join(name))?;
    }
    std::os::unix::fs::symlink(apiserver, dir.join("kube-apiserver"))?;
    Ok(dir)
}

/// `cargo xtask kube-minimum [VERSION…]` (by default both servers).
pub fn run(args: &[String]) -> Result<()> {
    if let Some(unknown) = args.iter().find(|a| !SERVERS.iter().any(|(v, _)| v == a)) {
        bail!("cargo xtask kube-minimum: {unknown} is not one of {:?}", SERVERS.map(|(v, _)| v));
    }
    let mut files = Vec::new();
    for (spec, file, namespace_cel) in CRDS {
        files.push((format!("{spec} {file}"), module_dir(spec)?.join(file), *namespace_cel));
    }
    // The control plane's etcd, kubectl and helm: a complete one named by the environment (as
    // `cargo xtask test` accepts), else built or reused under target/controlplane.
    let shared = match std::env::var_os(super::controlplane::BIN_ENV).map(PathBuf::from).filter(|b| b.join(".complete").is_file()) {
        Some(bin) => bin,
        None => super::controlplane::ensure(false)?,
    };
    let mut wrong = Vec::new();
    for (version, accepts_namespace_cel) in SERVERS.into_iter().filter(|(v, _)| args.is_empty() || args.iter().any(|a| a == v)) {
        let apiserver = build(version)?;
        let bin = bin_dir(version, &apiserver, &shared)?;
        std::env::set_var(super::controlplane::BIN_ENV, &bin);
        let cp = testkit::controlplane::ControlPlane::start().map_err(|e| anyhow::anyhow!("starting kube-apiserver {version}: {e}"))?;
        println!("kube-apiserver {version}:");
        for (name, path, namespace_cel) in &files {
            let path = path.to_string_lossy();
            let out = cp.kubectl(&cp.admin_kubeconfig, &["create", "-f", &path, "-o", "name"], None);
            let accepted = out.status.success();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = match stderr.find("compilation failed") {
                Some(at) => &stderr[at..],
                None => stderr.trim(),
            };
            let why: String = why.lines().next().unwrap_or("").chars().take(160).collect();
            println!(
                "  {} {name}{}",
                if accepted { "accepts" } else { "refuses" },
                if accepted { String::new() } else { format!(": {why}") }
            );
            let expected = accepts_namespace_cel || !namespace_cel;
            if accepted != expected {
                wrong.push(format!(
                    "{version} {} {name}, expected it to {}",
                    if accepted { "accepts" } else { "refuses" },
                    if expected { "accept" } else { "refuse" }
                ));
            }
            if !accepted && !stderr.contains("undefined field 'namespace'") {
                wrong.push(format!("{version} refuses {name} for another reason than CEL on metadata.namespace: {why}"));
            }
            if accepted {
                let _ = cp.kubectl(&cp.admin_kubeconfig, &["delete", "-f", &path, "--wait=true"], None);
            }
        }
        // TA-SCH-004 and TA-K8S-001 where they apply: check live, then the upgrade itself.
        let observed = super::kube_minimum_check::observe(&cp, &root(), version, accepts_namespace_cel)?;
        observed.lines.iter().for_each(|l| println!("  {l}"));
        wrong.extend(observed.wrong);
        drop(cp);
    }
    if !wrong.is_empty() {
        bail!("the Kubernetes minimums in rules/compat.yaml do not hold:\n  {}", wrong.join("\n  "));
    }
    println!("kube-minimum: as rules/compat.yaml says (Trainer 2.2.x/2.3.0 and JobSet 0.11/0.12 need Kubernetes 1.32)");
    Ok(())
}
