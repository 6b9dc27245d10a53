//! `cargo xtask lint`: the workspace's lints (`[workspace.lints]` in Cargo.toml) with every
//! warning an error, over every target (`cargo clippy --workspace --all-targets -- -D warnings`),
//! then cargo-deny's checks of the dependency graph against deny.toml: advisories, licenses, bans,
//! sources. cargo-deny is installed at a pinned version beside cargo's own caches (`cargo install
//! --locked` into `$CARGO_HOME/trainer-audit-tools/`, once per machine), as the other tools the
//! tests need are installed by xtask.
//!
//! The advisories check needs the RustSec advisory database, which cargo-deny fetches from GitHub.
//! Where that fetch fails (a machine that reaches crates.io only), the other three checks still
//! run and the advisories check is reported NOT CHECKED with the fetch's error: never a silent pass.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::measure::repo_root;

/// The cargo-deny release CI runs (its rust-version, 1.88, is below the toolchain's).
const CARGO_DENY: &str = "0.20.2";

pub fn run(args: &[String]) -> Result<()> {
    if let Some(other) = args.first() {
        bail!("lint takes no arguments (got {other})");
    }
    clippy()?;
    deny()
}

/// Clippy in a target directory of its own (`target/lint`): its check builds share nothing with
/// the test build, and `.ci/run` runs it beside `cargo xtask test`, whose cargo must not wait on
/// this one's lock of `target/`.
fn clippy() -> Result<()> {
    eprintln!("xtask: cargo clippy --workspace --all-targets -- -D warnings");
    let status = Command::new(env!("CARGO"))
        .args(["clippy", "--workspace", "--all-targets", "--target-dir"])
        .arg(repo_root().join("target/lint"))
        .args(["--", "-D", "warnings"])
        .current_dir(repo_root())
        .status()
        .context("cargo clippy")?;
    if !status.success() {
        bail!("clippy found warnings (every warning is an error here; see above)");
    }
    Ok(())
}

/// Where cargo-deny [`CARGO_DENY`] lives: under cargo's home (`$CARGO_HOME`, else `~/.cargo`),
/// a directory per version, so a fresh clone on a machine that built it once does not build it again
/// (like Go's build cache for the control plane), and emptying cargo's home empties it too.
fn tools_root() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| repo_root().join("target"));
    home.join("trainer-audit-tools").join(format!("cargo-deny-{CARGO_DENY}"))
}

/// cargo-deny's own release profile asks for fat LTO with one codegen unit, whose last step runs on
/// one core (docs/development.md has the figures); the install overrides it (cargo reads
/// `CARGO_PROFILE_RELEASE_*` over a package's own profile). Its checks take two seconds either way.
const INSTALL_PROFILE: [(&str, &str); 4] = [
    ("CARGO_PROFILE_RELEASE_LTO", "false"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1"),
    ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
];

/// `bin/cargo-deny` under [`tools_root`], installed when missing or another version.
fn cargo_deny() -> Result<PathBuf> {
    let root = tools_root();
    let bin = root.join("bin/cargo-deny");
    let version = Command::new(&bin).arg("--version").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if version.as_deref() == Some(&format!("cargo-deny {CARGO_DENY}")) {
        return Ok(bin);
    }
    eprintln!("xtask: installing cargo-deny {CARGO_DENY} into {} (cargo install --locked; a few minutes, once)", root.display());
    let status = Command::new(env!("CARGO"))
        .args(["install", "--locked", "--quiet", &format!("cargo-deny@{CARGO_DENY}"), "--root"])
        .arg(&root)
        .envs(INSTALL_PROFILE)
        .status()
        .context("cargo install cargo-deny")?;
    if !status.success() {
        bail!("cargo install cargo-deny@{CARGO_DENY} failed ({status})");
    }
    Ok(bin)
}

fn deny() -> Result<()> {
    let bin = cargo_deny()?;
    // `fetch db` only fetches the advisory database: its failure is the network's, not a finding.
    // Without it, the advisories check is left out (bans, licenses and sources need no database).
    let fetched = Command::new(&bin).args(["deny", "fetch", "db"]).current_dir(repo_root()).output().context("cargo deny fetch db")?;
    let mut checks = vec!["bans", "licenses", "sources"];
    let skipped = if fetched.status.success() {
        checks.insert(0, "advisories");
        None
    } else {
        let why = String::from_utf8_lossy(&fetched.stderr);
        let why = why.lines().find(|l| l.contains("ERROR")).or_else(|| why.lines().find(|l| !l.trim().is_empty()));
        let why = why.unwrap_or("no error text").trim().to_string();
        Some(why)
    };
    eprintln!("xtask: cargo deny --locked check {}", checks.join(" "));
    let status = Command::new(&bin)
        .args(["deny", "--locked", "check", "--hide-inclusion-graph"])
        .args(&checks)
        .current_dir(repo_root())
        .status()
        .context("cargo deny check")?;
    if !status.success() {
        bail!("cargo deny check {} failed (see above; deny.toml says why each exception stands)", checks.join(" "));
    }
    match skipped {
        None => println!("lint: clippy clean; cargo deny: advisories, bans, licenses, sources ok"),
        Some(why) => println!(
            "lint: clippy clean; cargo deny: bans, licenses, sources ok; advisories NOT CHECKED: the RustSec advisory \
             database (github.com/rustsec/advisory-db) could not be fetched here ({why})"
        ),
    }
    Ok(())
}
