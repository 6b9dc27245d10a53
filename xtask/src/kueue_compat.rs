//! `cargo xtask kueue-compat [--git DIR]`: writes `rules/kueue-builds.yaml`, the Trainer API each
//! Kueue release is built against, read from the `github.com/kubeflow/trainer/v2` requirement in
//! every Kueue release tag's `go.mod` (v0.14.0, the first with the TrainJob integration, on).
//!
//! The releases are the Go module proxy's list (`go list -m -versions sigs.k8s.io/kueue`) and, with
//! `--git DIR` (a clone of kubernetes-sigs/kueue), that clone's `v*` tags. Each go.mod is read
//! through the proxy (`go list -m -json sigs.k8s.io/kueue@V`: only the .info and .mod files, not the
//! source zip, and from the module cache when it is there); a release the proxy does not serve is
//! read from the clone's tag (`git show V:go.mod`) and marked so. A release neither can read fails
//! the task: the table must not silently miss one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

pub const FILE: &str = "rules/kueue-builds.yaml";
const MODULE: &str = "sigs.k8s.io/kueue";
const TRAINER: &str = "github.com/kubeflow/trainer/v2";
/// The first Kueue release with a TrainJob integration.
const FIRST: (u64, u64, u64) = (0, 14, 0);

struct Release {
    version: String,
    trainer: String,
    line: usize,
    read: &'static str,
}

fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// `vX.Y.Z` without a pre-release, as numbers.
fn release(tag: &str) -> Option<(u64, u64, u64)> {
    let mut parts = tag.strip_prefix('v')?.split('.');
    let v = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    parts.next().is_none().then_some(v)
}

fn go(args: &[&str]) -> Result<std::process::Output> {
    let dir = std::env::temp_dir();
    Command::new("go")
        .args(args)
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running go {} (is Go installed?)", args.join(" ")))
}

/// The Trainer requirement of a go.mod text: (version, 1-based line).
fn trainer_requirement(gomod: &str) -> Option<(String, usize)> {
    gomod.lines().enumerate().find_map(|(i, line)| {
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let (module, version) = if first == "require" { (words.next()?, words.next()?) } else { (first, words.next()?) };
        (module == TRAINER).then(|| (version.to_string(), i + 1))
    })
}

fn from_proxy(version: &str) -> Result<String> {
    let output = go(&["list", "-m", "-json", &format!("{MODULE}@{version}")])?;
    if !output.status.success() {
        bail!("{}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let info: serde_json::Value = serde_json::from_slice(&output.stdout).context("go list -m -json output")?;
    let path = info["GoMod"].as_str().context("go list -m -json printed no GoMod")?;
    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
}

fn from_git(dir: &Path, version: &str) -> Result<String> {
    let output = Command::new("git").arg("-C").arg(dir).args(["show", &format!("refs/tags/{version}:go.mod")]).output()?;
    if !output.status.success() {
        bail!("git show {version}:go.mod in {}: {}", dir.display(), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn git_tags(dir: &Path) -> Result<Vec<String>> {
    let output = Command::new("git").arg("-C").arg(dir).args(["tag", "--list", "v*"]).output()?;
    if !output.status.success() {
        bail!("git tag in {}: {}", dir.display(), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect())
}

/// `cargo xtask kueue-compat [--git DIR]`.
pub fn run(args: &[String]) -> Result<()> {
    let git = match args {
        [] => None,
        [flag, dir] if flag == "--git" => Some(PathBuf::from(dir)),
        other => bail!("cargo xtask kueue-compat: unexpected arguments {other:?} (only --git DIR, a clone of kubernetes-sigs/kueue)"),
    };
    let listed = go(&["list", "-m", "-versions", MODULE])?;
    if !listed.status.success() {
        bail!("go list -m -versions {MODULE}: {}", String::from_utf8_lossy(&listed.stderr).trim());
    }
    let mut tags: BTreeMap<(u64, u64, u64), String> = BTreeMap::new();
    let proxy_list = String::from_utf8_lossy(&listed.stdout).split_whitespace().skip(1).map(str::to_string).collect::<Vec<_>>();
    let git_list = match &git {
        Some(dir) => git_tags(dir)?,
        None => Vec::new(),
    };
    for tag in proxy_list.iter().chain(&git_list) {
        if let Some(v) = release(tag).filter(|v| *v >= FIRST) {
            tags.insert(v, tag.clone());
        }
    }
    let mut releases = Vec::new();
    let mut failures = Vec::new();
    for tag in tags.values() {
        let read = match from_proxy(tag) {
            Ok(text) => Ok((text, "proxy")),
            Err(proxy) => match &git {
                Some(dir) => from_git(dir, tag).map(|t| (t, "git tag")).map_err(|e| format!("proxy: {proxy}; {e}")),
                None => Err(format!("proxy: {proxy} (pass --git DIR, a clone of kubernetes-sigs/kueue, to read its tag)")),
            },
        };
        match read {
            Ok((text, read)) => match trainer_requirement(&text) {
                Some((trainer, line)) => releases.push(Release { version: tag.clone(), trainer, line, read }),
                None => failures.push(format!("{tag}: go.mod requires no {TRAINER}")),
            },
            Err(e) => failures.push(format!("{tag}: {e}")),
        }
    }
    if !failures.is_empty() {
        bail!("cannot read the go.mod of every Kueue release:\n  {}", failures.join("\n  "));
    }
    if releases.is_empty() {
        bail!("no Kueue release from v0.14.0 on was found (proxy list: {proxy_list:?})");
    }
    let command =
        if git.is_some() { "cargo xtask kueue-compat --git <clone of kubernetes-sigs/kueue>" } else { "cargo xtask kueue-compat" };
    let text = render(&releases, &today(), command);
    let path = root().join(FILE);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    let by_git = releases.iter().filter(|r| r.read == "git tag").count();
    println!(
        "{FILE}: {} Kueue releases ({} read through the Go module proxy, {by_git} from git tags)",
        releases.len(),
        releases.len() - by_git
    );
    Ok(())
}

fn render(releases: &[Release], date: &str, command: &str) -> String {
    let mut out = format!(
        "# GENERATED by `{command}` on {date}; do not edit, rerun it.\n\
         # The Trainer API (github.com/kubeflow/trainer/v2) each Kueue release from v0.14.0 on is built\n\
         # against: the requirement in the go.mod of its tag. `read`: through the Go module proxy\n\
         # (sigs.k8s.io/kueue@VERSION), or from the git tag where the proxy did not serve it.\n\
         # rules/compat.yaml (kueue) says which TrainJob field each Trainer API has Kueue write.\n\
         generated: \"{date}\"\ncommand: \"{command}\"\nreleases:\n"
    );
    for r in releases {
        out.push_str(&format!(
            "  - {{kueue: {}, trainer: {}, read: {}, source: \"kubernetes-sigs/kueue@{} go.mod#L{}\"}}\n",
            r.version, r.trainer, r.read, r.version, r.line
        ));
    }
    out
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
