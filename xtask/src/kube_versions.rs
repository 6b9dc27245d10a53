//! `cargo xtask kube-versions`: what each Kubernetes minor's API server says about the Trainer,
//! JobSet and Kueue CRDs and about the generated CEL corpus — the evidence behind trainer-audit's
//! CRD-write verdict at every version it claims (one-off, not in CI: each build costs CPU-minutes;
//! its recordings are replayed in CI by `tests/cel_cost.rs`).
//!
//! 1. `crdcel` (tests/controlplane/cmd/crdcel: apiextensions-apiserver's CRD validation in
//!    process) is built against every minor in [`MINORS`] (one generated Go module per version
//!    under `target/kube-versions/<v>/crdcel`, the toolchain the module's go.mod asks for), run on
//!    the CRDs, compared with trainer-audit's estimate rule by rule and write by write, and
//!    recorded (rule texts as digests) in `tests/data/kube-versions/crdcel-<v>.json`.
//! 2. kube-apiserver is built for every version in [`SERVERS`] (the control plane's 1.36.1 is
//!    reused), started with the control plane's etcd, and sent each CRD: a create, the same CRD
//!    again (`PUT`, an unchanged re-apply) and as a server-side apply (what Helm 4 sends), the CRD
//!    with its root description edited (a changed re-apply), and the CRD over the previous chart's
//!    (an upgrade). The answers are compared with trainer-audit's and recorded in
//!    `tests/data/kube-versions/server-<v>.json`.
//!
//! The CRDs: the generated corpus (testkit::celcorpus), every corpus chart's (needs
//! `TRAINER_AUDIT_CORPUS`; recorded), and, printed but not recorded, the Trainer v2.1.0/v2.2.1/v2.3.0
//! and JobSet v0.11.0/v0.12.0 manifests, Kueue v0.17.0's CRDs, and with `--trainer-git DIR` the
//! CRDs of that kubeflow/trainer clone's HEAD. The task also holds the Kubernetes minimums of
//! `rules/compat.yaml`: 1.31 refuses the 2.2.x/2.3.0 runtime CRDs and JobSet 0.11/0.12's, 1.32
//! and later accept them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use testkit::celdiff::{self, CrdReport, Report};

/// The minors `crdcel` is built for: the newest patch of each the Go module proxy serves.
const MINORS: &[&str] = &["v1.31.14", "v1.32.13", "v1.33.13", "v1.34.4", "v1.35.4", "v1.36.1", "v1.37.2", "v1.38.0-beta.0"];
/// The kube-apiservers the CRDs are sent to.
const SERVERS: &[&str] = &["v1.31.14", "v1.32.13", "v1.36.1", "v1.37.2", "v1.38.0-beta.0"];
/// CRDs from Go modules, observed and printed, not recorded.
const MODULE_CRDS: &[(&str, &str)] = &[
    ("github.com/kubeflow/trainer/v2@v2.1.0", "manifests/base/crds"),
    ("github.com/kubeflow/trainer/v2@v2.2.1", "manifests/base/crds"),
    ("github.com/kubeflow/trainer/v2@v2.3.0", "manifests/base/crds"),
    ("sigs.k8s.io/jobset@v0.11.0", "charts/jobset/crds"),
    ("sigs.k8s.io/jobset@v0.12.0", "charts/jobset/crds"),
    ("sigs.k8s.io/kueue@v0.17.0", "config/components/crd/bases"),
];

fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn work_dir(version: &str) -> PathBuf {
    root().join("target/kube-versions").join(version)
}

fn go(dir: &Path, toolchain: &str, args: &[&str]) -> Result<String> {
    let output = Command::new("go")
        .current_dir(dir)
        .args(args)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", toolchain)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running go {}", args.join(" ")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        bail!("go {} in {} failed:\n{}", args.join(" "), dir.display(), tail.join("\n"));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `go mod download -json MODULE@VERSION`, read.
fn download(spec: &str) -> Result<Value> {
    let out = go(&std::env::temp_dir(), "local", &["mod", "download", "-json", spec])?;
    serde_json::from_str(&out).with_context(|| format!("go mod download -json {spec}"))
}

fn parse_go(v: &str) -> Vec<u64> {
    v.trim_start_matches("go").split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The toolchain for a module whose go.mod says `go X.Y.Z`: this machine's Go when it is that
/// new, else that release (the go command fetches it as the module golang.org/toolchain).
fn toolchain(go_mod: &str) -> Result<String> {
    let wanted = go_mod.lines().find_map(|l| l.strip_prefix("go ")).map(str::trim).unwrap_or("1.0");
    let local = go(&std::env::temp_dir(), "local", &["env", "GOVERSION"])?;
    Ok(if parse_go(local.trim()) >= parse_go(wanted) { "local".to_string() } else { format!("go{wanted}") })
}

fn ldflags(version: &str) -> String {
    let minor = version.trim_start_matches("v1.").split('.').next().unwrap_or("0");
    let mut flags = vec!["-s".to_string(), "-w".to_string()];
    for pkg in ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"] {
        for (var, value) in [("gitVersion", version), ("gitMajor", "1"), ("gitMinor", minor), ("gitTreeState", "clean")] {
            flags.push(format!("-X {pkg}.{var}={value}"));
        }
    }
    flags.join(" ")
}

/// An existing binary that reports `want` on `--version`.
fn built(binary: &Path, want: &str) -> bool {
    binary.is_file() && Command::new(binary).arg("--version").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(want))
}

/// Builds (or reuses) `crdcel` against apiextensions-apiserver at `version`'s staging tag.
fn build_crdcel(version: &str) -> Result<PathBuf> {
    let dir = work_dir(version).join("crdcel");
    let binary = dir.join("crdcel");
    if built(&binary, &format!("crdcel Kubernetes {version}")) {
        return Ok(binary);
    }
    std::fs::create_dir_all(&dir)?;
    let staging = format!("v0.{}", version.trim_start_matches("v1."));
    let info = download(&format!("k8s.io/apiextensions-apiserver@{staging}"))?;
    let upstream = std::fs::read_to_string(info["GoMod"].as_str().context("no GoMod")?)?;
    let tc = toolchain(&upstream)?;
    let go_line = upstream.lines().find(|l| l.starts_with("go ")).unwrap_or("go 1.26.0");
    std::fs::copy(root().join("tests/controlplane/cmd/crdcel/main.go"), dir.join("main.go"))?;
    let modules = ["k8s.io/apiextensions-apiserver", "k8s.io/apiserver", "k8s.io/apimachinery", "k8s.io/component-base"];
    let require: String = modules.iter().map(|m| format!("\t{m} {staging}\n")).collect();
    std::fs::write(dir.join("go.mod"), format!("module trainer-audit.test/crdcel\n\n{go_line}\n\nrequire (\n{require})\n"))?;
    go(&dir, &tc, &["mod", "tidy"])?;
    // Before 1.34 the base environment took the strict-cost switch the CRD validation passes
    // as `true`.
    let apiserver = go(&dir, &tc, &["list", "-m", "-f", "{{.Dir}}", "k8s.io/apiserver"])?;
    let base = std::fs::read_to_string(Path::new(apiserver.trim()).join("pkg/cel/environment/base.go"))?;
    if base.contains("strictCost bool) *EnvSet") {
        let main = std::fs::read_to_string(dir.join("main.go"))?;
        let call = "environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())";
        std::fs::write(
            dir.join("main.go"),
            main.replace(call, "environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)"),
        )?;
    }
    eprintln!("xtask: building crdcel against Kubernetes {version} ({tc})");
    let started = std::time::Instant::now();
    let out = binary.to_string_lossy().into_owned();
    go(&dir, &tc, &["build", "-trimpath", "-ldflags", &ldflags(version), "-o", &out, "."])?;
    eprintln!("xtask: built crdcel {version} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(binary)
}

/// Builds (or reuses) kube-apiserver at `version` from k8s.io/kubernetes (its staging modules
/// pointed at the matching `v0.X.Y` tags).
fn build_apiserver(version: &str) -> Result<PathBuf> {
    let dir = work_dir(version);
    let binary = dir.join("kube-apiserver");
    if built(&binary, &format!("Kubernetes {version}")) {
        return Ok(binary);
    }
    std::fs::create_dir_all(&dir)?;
    let info = download(&format!("k8s.io/kubernetes@{version}"))?;
    let upstream = std::fs::read_to_string(info["GoMod"].as_str().context("no GoMod")?)?;
    let tc = toolchain(&upstream)?;
    let staging = format!("v0.{}", version.trim_start_matches("v1."));
    let replaces: String = upstream
        .lines()
        .filter_map(|l| {
            l.trim().split_once(" => ").filter(|(_, p)| p.starts_with("./staging")).map(|(m, _)| format!("\t{m} => {m} {staging}\n"))
        })
        .collect();
    if replaces.is_empty() {
        bail!("k8s.io/kubernetes@{version}'s go.mod replaces no staging module");
    }
    let go_line = upstream.lines().find(|l| l.starts_with("go ")).unwrap_or("go 1.26.0");
    std::fs::write(
        dir.join("go.mod"),
        format!(
            "module trainer-audit.test/kube-versions\n\n{go_line}\n\ntool k8s.io/kubernetes/cmd/kube-apiserver\n\nrequire k8s.io/kubernetes {version}\n\nreplace (\n{replaces})\n"
        ),
    )?;
    go(&dir, &tc, &["mod", "tidy"])?;
    eprintln!("xtask: building kube-apiserver {version} ({tc}; several CPU-minutes)");
    let started = std::time::Instant::now();
    let out = binary.to_string_lossy().into_owned();
    go(&dir, &tc, &["build", "-trimpath", "-ldflags", &ldflags(version), "-o", &out, "k8s.io/kubernetes/cmd/kube-apiserver"])?;
    eprintln!("xtask: built kube-apiserver {version} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(binary)
}

/// Every CRD: the recorded ones (generated, corpus) and the observed-only ones, by name.
struct Inputs {
    recorded: Vec<(String, Value)>,
    observed: Vec<(String, Value)>,
}

fn yaml_crds(text: &str) -> Vec<Value> {
    text.split("\n---")
        .filter_map(|doc| serde_saphyr::from_str::<Value>(doc).ok())
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .collect()
}

fn inputs(trainer_git: Option<&Path>) -> Result<Inputs> {
    let mut recorded = celdiff::generated();
    match std::env::var_os("TRAINER_AUDIT_CORPUS") {
        Some(c) => recorded.extend(celdiff::corpus_crds(Path::new(&c)).map_err(anyhow::Error::msg)?),
        None => bail!("TRAINER_AUDIT_CORPUS is unset: the corpus charts' CRDs are part of the recording"),
    }
    let mut observed = Vec::new();
    for (spec, sub) in MODULE_CRDS {
        let dir = PathBuf::from(download(spec)?["Dir"].as_str().context("no Dir")?).join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files.iter().filter(|f| f.extension().is_some_and(|x| x == "yaml")) {
            for crd in yaml_crds(&std::fs::read_to_string(f)?) {
                let name = crd["metadata"]["name"].as_str().unwrap_or("crd").to_string();
                observed.push((format!("modules/{spec}/{name}.json"), crd));
            }
        }
    }
    if let Some(git) = trainer_git {
        let head = String::from_utf8_lossy(&Command::new("git").arg("--git-dir").arg(git).args(["rev-parse", "HEAD"]).output()?.stdout)
            .trim()
            .to_string();
        let list =
            Command::new("git").arg("--git-dir").arg(git).args(["ls-tree", "--name-only", "HEAD", "manifests/base/crds/"]).output()?;
        for file in String::from_utf8_lossy(&list.stdout).lines().filter(|f| f.ends_with(".yaml") && !f.ends_with("kustomization.yaml")) {
            let text = Command::new("git").arg("--git-dir").arg(git).args(["show", &format!("HEAD:{file}")]).output()?;
            for crd in yaml_crds(&String::from_utf8_lossy(&text.stdout)) {
                let name = crd["metadata"]["name"].as_str().unwrap_or("crd").to_string();
                observed.push((format!("trainer-git/{}/{name}.json", &head[..head.len().min(12)]), crd));
            }
        }
    }
    Ok(Inputs { recorded, observed })
}

fn crdcel_report(binary: &Path, crds: &[(String, Value)]) -> Result<Report> {
    let dir = tempfile::tempdir()?;
    for (name, crd) in crds {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().context("a parent")?)?;
        std::fs::write(&path, serde_json::to_vec(crd)?)?;
    }
    let out = Command::new(binary).current_dir(dir.path()).args(crds.iter().map(|(n, _)| n)).output()?;
    if !out.status.success() {
        bail!("{} failed: {}", binary.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// The field errors of a refused write, as `field: detail` (`field.Error.Error()`). Only an
/// `Invalid` (422) answer is the server's verdict on the CRD; any other refusal (a conflict, a
/// timeout, a missing object) is the harness's fault and stops the run.
fn refusal(what: &str, name: &str, reply: &testkit::controlplane::http::Reply) -> Result<Vec<String>> {
    if reply.status < 300 {
        return Ok(Vec::new());
    }
    if reply.status != 422 {
        bail!("{what} of CRD {name}: status {} ({})", reply.status, reply.body["message"].as_str().unwrap_or(""));
    }
    let causes = reply.body.pointer("/details/causes").and_then(Value::as_array).cloned().unwrap_or_default();
    if causes.is_empty() {
        return Ok(vec![format!("status 422: {}", reply.body["message"].as_str().unwrap_or(""))]);
    }
    Ok(causes.iter().map(|c| format!("{}: {}", c["field"].as_str().unwrap_or(""), c["message"].as_str().unwrap_or(""))).collect())
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The CRD as sent: metadata down to its name and status dropped, and its group made unique to
/// this write (`k<n>.<group>`), so no write waits for an earlier one's deletion (the CEL rules,
/// their costs and the server's paths do not depend on the group).
fn fresh(crd: &Value, n: usize) -> Value {
    let mut c = crd.clone();
    c.as_object_mut().map(|m| m.remove("status"));
    let group = format!("k{n}.{}", crd["spec"]["group"].as_str().unwrap_or("example.com"));
    let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or("things").to_string();
    c["spec"]["group"] = Value::String(group.clone());
    c["metadata"] = serde_json::json!({ "name": format!("{plural}.{group}") });
    c
}

fn name_of(crd: &Value) -> String {
    crd["metadata"]["name"].as_str().unwrap_or("").to_string()
}

/// `PUT` of `crd` over the stored object of its name, read again when the API server's own
/// controllers updated it in between (its status: a 409 Conflict).
fn put(api: &testkit::controlplane::http::Api, crd: &Value) -> Result<testkit::controlplane::http::Reply> {
    let path = format!("{CRDS}/{}", name_of(crd));
    for _ in 0..10 {
        let stored = api.request("GET", &path, None).map_err(anyhow::Error::msg)?;
        let mut body = crd.clone();
        body["metadata"]["resourceVersion"] = stored.body["metadata"]["resourceVersion"].clone();
        let reply = api.request("PUT", &path, Some(&body)).map_err(anyhow::Error::msg)?;
        if reply.status != 409 {
            return Ok(reply);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bail!("PUT of CRD {}: still conflicting after 10 tries", name_of(crd))
}

/// Sends every CRD to one server: create, unchanged re-apply (PUT and server-side apply), changed
/// re-apply, and the upgrade from the previous file of the same CRD name. A refused create stores
/// nothing, so its re-applies are not attempted (`not_stored`).
fn observe(cp: &testkit::controlplane::ControlPlane, version: &str, crds: &[(String, Value)]) -> Result<Report> {
    let api = cp.api().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut report = Report { kubernetes: version.to_string(), compatibility: String::new(), crds: Vec::new() };
    let mut previous: BTreeMap<String, (String, Value)> = BTreeMap::new();
    let mut n = 0;
    let drop_crd = |name: &str| api.request("DELETE", &format!("{CRDS}/{name}"), None).map(|_| ()).map_err(anyhow::Error::msg);
    for (file, crd) in crds {
        let name = name_of(crd);
        let mut r = CrdReport {
            file: file.clone(),
            name: name.clone(),
            versions: Vec::new(),
            create: Vec::new(),
            reapply_unchanged: Vec::new(),
            reapply_changed: Vec::new(),
            upgrade_from: None,
            upgrade: None,
            reapply_server_side: None,
            not_stored: false,
        };
        if let Some((old_file, old)) = previous.get(&name) {
            n += 1;
            let (old, new) = (fresh(old, n), fresh(crd, n));
            let created = api.request("POST", CRDS, Some(&old)).map_err(anyhow::Error::msg)?;
            if created.status < 300 {
                r.upgrade_from = Some(old_file.clone());
                r.upgrade = Some(refusal("upgrade", &name, &put(&api, &new)?)?);
                drop_crd(&name_of(&new))?;
            }
        }
        n += 1;
        let sent = fresh(crd, n);
        let created = api.request("POST", CRDS, Some(&sent)).map_err(anyhow::Error::msg)?;
        r.create = refusal("create", &name, &created)?;
        if created.status < 300 {
            r.reapply_unchanged = refusal("unchanged re-apply", &name, &put(&api, &sent)?)?;
            let ssa = api.server_side_apply(&format!("{CRDS}/{}", name_of(&sent)), &sent, "helm").map_err(anyhow::Error::msg)?;
            r.reapply_server_side = Some(refusal("server-side apply", &name, &ssa)?);
            r.reapply_changed = refusal("changed re-apply", &name, &put(&api, &celdiff::changed(&sent))?)?;
            drop_crd(&name_of(&sent))?;
        } else {
            r.not_stored = true;
        }
        previous.insert(name, (file.clone(), crd.clone()));
        report.crds.push(r);
    }
    Ok(report)
}

/// A bin directory with the control plane's binaries and this kube-apiserver.
fn bin_dir(version: &str, apiserver: &Path, shared: &Path) -> Result<PathBuf> {
    let dir = work_dir(version).join("bin");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    for entry in std::fs::read_dir(shared)? {
        let entry = entry?;
        if entry.file_name() != "kube-apiserver" {
            std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name()))?;
        }
    }
    std::os::unix::fs::symlink(apiserver, dir.join("kube-apiserver"))?;
    Ok(dir)
}

fn short(messages: &[String]) -> String {
    match messages {
        [] => "accepted".into(),
        [one] => format!("refused: {}", celdiff::normalise(one).1),
        many => format!("refused ({} errors): {}", many.len(), celdiff::normalise(&many[0]).1),
    }
}

fn record(path: &Path, report: &Report, recorded: &BTreeMap<String, Value>) -> Result<()> {
    let mut kept = report.clone();
    kept.crds.retain(|c| recorded.contains_key(&c.file));
    let text = serde_json::to_string_pretty(&celdiff::redacted(kept))? + "\n";
    std::fs::create_dir_all(path.parent().context("a parent")?)?;
    std::fs::write(path, text)?;
    Ok(())
}

/// The Kubernetes minimums of rules/compat.yaml, held against one version's verdict on the
/// corpus charts' CRDs: the runtime CRDs of Trainer 2.2 and later and the JobSet CRD they bundle
/// read a template's `metadata.namespace` in CEL, which servers before 1.32 cannot compile; every
/// other corpus CRD is created from 1.31 on.
fn minimums(version: &str, report: &Report) -> Vec<String> {
    let Ok(kube) = kube_version::KubeVersion::parse(version) else { return vec![format!("{version} is not a version")] };
    let mut wrong = Vec::new();
    for crd in report.crds.iter().filter(|c| c.file.starts_with("corpus/")) {
        let chart = crd.file.split('/').nth(1).unwrap_or("").trim_start_matches("kubeflow-trainer-");
        let Ok(chart) = semver::Version::parse(chart) else { continue };
        let namespace_cel = chart >= semver::Version::new(2, 2, 0)
            && ["trainingruntimes.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io"]
                .contains(&crd.name.as_str());
        let refused = !crd.create.is_empty();
        let expected = namespace_cel && !kube.at_least(1, 32);
        if refused != expected {
            wrong.push(format!(
                "{version} {} {}, rules/compat.yaml says it {}",
                if refused { "refuses" } else { "accepts" },
                crd.file,
                if expected { "refuses it" } else { "accepts it" }
            ));
        }
    }
    wrong
}

/// `cargo xtask kube-versions [--only VERSION]… [--no-servers] [--no-crdcel] [--no-helm] [--charts-only] [--trainer-git DIR]`.
pub fn run(args: &[String]) -> Result<()> {
    let mut only = Vec::new();
    let mut servers = true;
    let mut crdcel = true;
    let mut helm = true;
    let mut charts_only = false;
    let mut trainer_git = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => only.push(it.next().context("--only VERSION")?.clone()),
            "--no-servers" => servers = false,
            "--no-crdcel" => crdcel = false,
            // Without the Helm 2.1.0 → 2.3.0 upgrade on each server (TA-SCH-004, TA-K8S-001).
            "--no-helm" => helm = false,
            // The charts' and modules' CRDs only (the generated corpus is hundreds of writes).
            "--charts-only" => charts_only = true,
            "--trainer-git" => trainer_git = Some(PathBuf::from(it.next().context("--trainer-git DIR")?)),
            other => bail!("cargo xtask kube-versions: unexpected argument {other:?}"),
        }
    }
    let wanted = |v: &&&str| only.is_empty() || only.iter().any(|o| o == **v);
    let mut inputs = inputs(trainer_git.as_deref())?;
    if charts_only {
        inputs.recorded.retain(|(f, _)| !f.starts_with("generated/"));
    }
    let recorded: BTreeMap<String, Value> = inputs.recorded.iter().cloned().collect();
    let all: Vec<(String, Value)> = inputs.recorded.iter().chain(&inputs.observed).cloned().collect();
    let files: BTreeMap<String, Value> = all.iter().cloned().collect();
    let data = root().join("tests/data/kube-versions");
    let mut wrong = Vec::new();
    let mut table: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for version in MINORS.iter().filter(wanted).filter(|_| crdcel) {
        let report = crdcel_report(&build_crdcel(version)?, &all)?;
        let c = celdiff::compare(&report, &files);
        println!("crdcel {version} (compatibility version {}): {}", report.compatibility, c.summary());
        wrong.extend(c.disagreements.iter().map(|d| format!("crdcel {version}: {d}")));
        record(&data.join(format!("crdcel-{version}.json")), &report, &recorded)?;
        for crd in report.crds.iter().filter(|c| !c.file.starts_with("generated/")) {
            table.entry(crd.file.clone()).or_default().insert(format!("crdcel {version}"), short(&crd.create));
        }
        wrong.extend(minimums(version, &report));
    }
    if servers {
        let shared = match std::env::var_os(super::controlplane::BIN_ENV).map(PathBuf::from).filter(|b| b.join(".complete").is_file()) {
            Some(bin) => bin,
            None => super::controlplane::ensure(false)?,
        };
        for version in SERVERS.iter().filter(wanted) {
            let apiserver = if *version == "v1.36.1" { shared.join("kube-apiserver") } else { build_apiserver(version)? };
            let bin = bin_dir(version, &apiserver, &shared)?;
            std::env::set_var(super::controlplane::BIN_ENV, &bin);
            // From 1.37 the endpoint reconciler refuses the control plane's loopback address
            // ("may not be in the loopback range"); nothing here needs the `kubernetes` Service.
            let minor: u64 = version.trim_start_matches("v1.").split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
            if minor >= 37 {
                std::env::set_var("TRAINER_AUDIT_APISERVER_EXTRA_ARGS", "--endpoint-reconciler-type=none");
            } else {
                std::env::remove_var("TRAINER_AUDIT_APISERVER_EXTRA_ARGS");
            }
            let cp = testkit::controlplane::ControlPlane::start().map_err(|e| anyhow::anyhow!("starting kube-apiserver {version}: {e}"))?;
            let report = observe(&cp, version, &all)?;
            let c = celdiff::compare(&report, &files);
            println!("kube-apiserver {version}: {}", c.summary());
            for d in c.disagreements.iter().take(40) {
                println!("  {d}");
            }
            wrong.extend(c.disagreements.iter().map(|d| format!("kube-apiserver {version}: {d}")));
            record(&data.join(format!("server-{version}.json")), &report, &recorded)?;
            for crd in report.crds.iter().filter(|c| !c.file.starts_with("generated/")) {
                let reapplies = if crd.not_stored {
                    "nothing stored to re-apply".to_string()
                } else {
                    format!(
                        "re-apply {}; server-side {}; changed {}",
                        short(&crd.reapply_unchanged),
                        crd.reapply_server_side.as_deref().map_or("-".into(), short),
                        short(&crd.reapply_changed)
                    )
                };
                let upgrade = crd.upgrade.as_deref().map_or(String::new(), |u| format!("; upgrade {}", short(u)));
                let cell = format!("{}; {reapplies}{upgrade}", short(&crd.create));
                table.entry(crd.file.clone()).or_default().insert(format!("kube-apiserver {version}"), cell);
            }
            // TA-SCH-004 and TA-K8S-001 where they apply: Helm installs 2.1.0, check --to 2.3.0
            // runs live, then the upgrade itself.
            if helm {
                println!("kube-apiserver {version}, Helm 2.1.0 → 2.3.0:");
                match super::kube_minimum_check::observe(&cp, &root(), version, minor >= 32) {
                    Ok(observed) => {
                        observed.lines.iter().for_each(|l| println!("  {l}"));
                        wrong.extend(observed.wrong);
                    }
                    Err(e) => wrong.push(format!("kube-apiserver {version}: the Helm upgrade observation failed: {e:#}")),
                }
            }
            drop(cp);
        }
    }
    println!("\nper CRD (corpus charts, modules{}):", if trainer_git.is_some() { ", the trainer clone" } else { "" });
    for (file, cells) in &table {
        println!("{file}");
        for (at, what) in cells {
            println!("  {at}: {what}");
        }
    }
    if !wrong.is_empty() {
        bail!("{} disagreements with trainer-audit's verdict:\n  {}", wrong.len(), wrong.join("\n  "));
    }
    Ok(())
}
