//! `cargo xtask screenshot [--docs]`: the HTML reports rendered by Debian's headless Chromium into
//! PNGs, so a person can look at them: a fleet's `check` (a blocked, a ready and an unreadable
//! cluster), one cluster's `check` and a `runbook`, made from the scenario snapshots and the
//! fixture charts into `target/screenshots/`. Installs `chromium` with apt when it is missing
//! (only this task needs it). `--docs` also copies the fleet's picture to `docs/check-fleet.png`.
//! Fails when a page cannot be made or a PNG is missing, not a PNG, or blank-sized.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}

fn trainer_audit(bin: &Path, args: &[&str], out: &Path) -> Result<()> {
    let output = Command::new(bin)
        .args(args)
        .arg("-o")
        .arg(out)
        .current_dir(root())
        .env("TRAINER_AUDIT_CACHE_DIR", root().join("target/screenshots/cache"))
        .output()?;
    // check exits 1 (blocked) or 2 (a cluster failed) by design; the page must be there.
    if !out.is_file() {
        bail!("trainer-audit {} wrote no page: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
    }
    Ok(())
}

fn chromium() -> Result<PathBuf> {
    let found = |p: &str| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success());
    for name in ["chromium", "chromium-browser"] {
        if found(name) {
            return Ok(PathBuf::from(name));
        }
    }
    crate::setup::ensure_debian_package("chromium", "chromium", "--version", "cargo xtask screenshot")?;
    if !found("chromium") {
        bail!("Debian's chromium is not installed and could not be (apt-get install chromium)");
    }
    Ok(PathBuf::from("chromium"))
}

pub fn run(args: &[String]) -> Result<()> {
    let docs = args.iter().any(|a| a == "--docs");
    if let Some(other) = args.iter().find(|a| *a != "--docs") {
        bail!("screenshot takes only --docs, not {other}");
    }
    let browser = chromium()?;
    let status = Command::new(env!("CARGO")).args(["build", "-q", "--bin", "trainer-audit"]).current_dir(root()).status()?;
    if !status.success() {
        bail!("cargo build failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    let bin = target.join("debug/trainer-audit");
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir)?;
    // Paths relative to the repository (the fleet names its clusters by them); the real charts
    // when TRAINER_AUDIT_CORPUS names the corpus, else the fixture charts.
    let s = |name: &str| format!("snapshots/{name}.yaml");
    let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS").filter(|v| !v.is_empty()).map(PathBuf::from);
    let chart = |version: &str, fixture: &str| match &corpus {
        Some(c) => c.join(format!("charts/kubeflow-trainer-{version}.tgz")).to_string_lossy().into_owned(),
        None => format!("tests/rules/charts/{fixture}"),
    };
    std::fs::write(dir.join("lab-east.yaml"), "this is not a snapshot: [\n")?;
    let unreadable = dir.strip_prefix(root()).unwrap_or(&dir).join("lab-east.yaml").to_string_lossy().into_owned();
    let (a, b, to, from) = (s("helm-2.2.1"), s("helm-2.3.0"), chart("2.3.0", "to"), chart("2.2.1", "from"));
    let pages: [(&str, Vec<&str>); 3] = [
        ("check-fleet", vec!["check", "--snapshot", &a, "--snapshot", &b, "--snapshot", &unreadable, "--chart", &to, "--format", "html"]),
        ("check", vec!["check", "--snapshot", &a, "--chart", &to, "--from-chart", &from, "--format", "html"]),
        ("runbook", vec!["runbook", "--snapshot", &a, "--chart", &to, "--from-chart", &from, "--format", "html"]),
    ];
    for (name, args) in pages {
        let html = dir.join(format!("{name}.html"));
        let png = dir.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&png);
        trainer_audit(&bin, &args, &html)?;
        let url = format!("file://{}", html.canonicalize()?.display());
        let out = Command::new(&browser)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--window-size=1280,1600"])
            .arg(format!("--user-data-dir={}", dir.join("chromium-profile").display()))
            .arg(format!("--screenshot={}", png.display()))
            .arg(&url)
            .output()
            .context("running chromium")?;
        let bytes = std::fs::read(&png)
            .with_context(|| format!("chromium wrote no {}: {}", png.display(), String::from_utf8_lossy(&out.stderr)))?;
        match png_size(&bytes) {
            Some((w, h)) if w >= 800 && h >= 600 && bytes.len() > 20_000 => {
                println!("{} ({w}×{h}, {} KiB)", png.display(), bytes.len() / 1024)
            }
            other => bail!("{} is not a picture of the page: {other:?}, {} bytes", png.display(), bytes.len()),
        }
    }
    if docs {
        let dest = root().join("docs/check-fleet.png");
        std::fs::copy(dir.join("check-fleet.png"), &dest)?;
        println!("copied to {}", dest.display());
    }
    Ok(())
}
