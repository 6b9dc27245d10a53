//! `cargo xtask kube-apis`: writes `rules/kube-apis.yaml`, the API versions Kubernetes stops
//! serving and in which release, as k8s.io/api states them: every type's generated
//! `APILifecycleRemoved` (`zz_generated.prerelease-lifecycle.go`, from the
//! `k8s:prerelease-lifecycle-gen` tags) and its `APILifecycleReplacement`, read from the newest
//! k8s.io/api the Go module proxy serves. `check --to-kube` reads it (TA-K8S-003) as pluto reads
//! its versions file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// The k8s.io/api version read, and the Kubernetes tag its files are cited at.
const API: (&str, &str) = ("v0.38.0-beta.0", "v1.38.0-beta.0");

/// The `go` line of the module's go.mod (k8s.io/api v0.38 needs Go 1.27): the toolchain to
/// extract it with, fetched by the go command when this machine's is older.
pub(crate) const TOOLCHAIN: &str = "go1.27.0";

fn module_dir() -> Result<PathBuf> {
    let out = Command::new("go")
        .args(["mod", "download", "-json", &format!("k8s.io/api@{}", API.0)])
        .env("GOTOOLCHAIN", format!("{TOOLCHAIN}+auto"))
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        bail!("go mod download k8s.io/api@{}: {}", API.0, String::from_utf8_lossy(&out.stderr));
    }
    let info: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok(PathBuf::from(info["Dir"].as_str().context("no Dir")?))
}

struct Removed {
    api: String,
    kind: String,
    removed: (u32, u32),
    replacement: Option<String>,
    file: String,
    lines: (usize, usize),
    quote: String,
}

fn read_package(root: &Path, group_dir: &str, version: &str) -> Result<Vec<Removed>> {
    let dir = root.join(group_dir).join(version);
    let lifecycle = dir.join("zz_generated.prerelease-lifecycle.go");
    if !lifecycle.is_file() {
        return Ok(Vec::new());
    }
    let register = std::fs::read_to_string(dir.join("register.go")).unwrap_or_default();
    let group = register
        .lines()
        .find_map(|l| l.trim().strip_prefix("const GroupName = ").map(|g| g.trim_matches('"').to_string()))
        .with_context(|| format!("{} declares no GroupName", dir.display()))?;
    let api = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    let text = std::fs::read_to_string(&lifecycle)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("func (in *") else { continue };
        let Some((kind, tail)) = rest.split_once(") ") else { continue };
        if !tail.starts_with("APILifecycleRemoved()") || kind.ends_with("List") {
            continue;
        }
        let ret = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
        let Some((major, minor)) = ret.strip_prefix("return ").and_then(|r| r.split_once(", ")) else { continue };
        let removed = (major.trim().parse()?, minor.trim().parse()?);
        let replacement = lines.iter().enumerate().find_map(|(j, l)| {
            let r = l.strip_prefix(&format!("func (in *{kind}) APILifecycleReplacement()"))?;
            let _ = r;
            let body = lines.get(j + 1)?.trim();
            let field = |name: &str| body.split(&format!("{name}: \"")).nth(1).and_then(|s| s.split('"').next()).map(str::to_string);
            let (g, v, k) = (field("Group")?, field("Version")?, field("Kind")?);
            Some(if g.is_empty() { format!("{v} {k}") } else { format!("{g}/{v} {k}") })
        });
        out.push(Removed {
            api: api.clone(),
            kind: kind.to_string(),
            removed,
            replacement,
            file: format!("staging/src/k8s.io/api/{group_dir}/{version}/zz_generated.prerelease-lifecycle.go"),
            lines: (i + 1, i + 2),
            quote: format!("func (in *{kind}) APILifecycleRemoved() (major, minor int) {{ {ret}"),
        });
    }
    Ok(out)
}

fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `cargo xtask kube-apis`.
pub fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("cargo xtask kube-apis takes no arguments");
    }
    let root = module_dir()?;
    let mut all = Vec::new();
    let mut groups: Vec<PathBuf> = std::fs::read_dir(&root)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    groups.sort();
    for g in groups {
        let group_dir = g.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        let mut versions: Vec<PathBuf> = std::fs::read_dir(&g)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
        versions.sort();
        for v in versions {
            let version = v.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
            all.extend(read_package(&root, &group_dir, &version)?);
        }
    }
    all.sort_by(|a, b| (a.removed, &a.api, &a.kind).cmp(&(b.removed, &b.api, &b.kind)));
    let mut out = String::new();
    writeln!(out, "# Generated by `cargo xtask kube-apis` (do not edit): the API versions Kubernetes stops serving,")?;
    writeln!(out, "# per kind, as k8s.io/api {} states them in each type's generated APILifecycleRemoved (and", API.0)?;
    writeln!(out, "# APILifecycleReplacement). `check --to-kube` (TA-K8S-003) reads it.")?;
    writeln!(out, "api_module: k8s.io/api {}", API.0)?;
    writeln!(out, "removed:")?;
    for r in &all {
        writeln!(out, "  - api: {}", r.api)?;
        writeln!(out, "    kind: {}", r.kind)?;
        writeln!(out, "    removed: \"{}.{}\"", r.removed.0, r.removed.1)?;
        if let Some(rep) = &r.replacement {
            writeln!(out, "    replacement: {}", yaml_string(rep))?;
        }
        let cite = format!("{}#L{}-L{}", r.file, r.lines.0, r.lines.1);
        writeln!(out, "    source: kubernetes/kubernetes@{} {cite}", API.1)?;
        writeln!(out, "    quotes:")?;
        writeln!(out, "      {}: {}", yaml_string(&cite), yaml_string(&r.quote))?;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rules/kube-apis.yaml");
    std::fs::write(&path, out)?;
    println!("wrote {} ({} kinds)", path.display(), all.len());
    Ok(())
}
