//! `cargo xtask release [TARGET…]`: the release workflow's build step (`release/build.sh build`)
//! run here for the Linux targets this machine can build, after installing what each needs
//! (Debian's musl-tools for x86_64 musl, Debian's gcc-aarch64-linux-gnu as the arm64 C compiler
//! and linker, and the Rust targets). The archives land in target/release-dist; the build in
//! target/musl, the static builds' target directory (tests/container.rs and tests/doors.rs build
//! there too, so each reuses the others' dependencies). Darwin cannot be built on Linux (no Apple
//! SDK): the workflow builds it on a macOS runner.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Result};

use crate::setup;

const LINUX_TARGETS: [&str; 2] = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

pub fn run(args: &[String]) -> Result<()> {
    let targets: Vec<&str> = if args.is_empty() { LINUX_TARGETS.to_vec() } else { args.iter().map(String::as_str).collect() };
    for target in &targets {
        if !LINUX_TARGETS.contains(target) {
            bail!("{target}: only {} can be built here (darwin needs a macOS runner)", LINUX_TARGETS.join(" and "));
        }
    }
    let dist = root().join("target/release-dist");
    for target in targets {
        ensure_tools(target)?;
        let mut build = Command::new("bash");
        build.arg(root().join("release/build.sh")).args(["build", target]).arg(&dist);
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            build.env("CARGO_TARGET_DIR", root().join("target/musl"));
        }
        let status = build.status()?;
        if !status.success() {
            bail!("release/build.sh build {target} failed ({status})");
        }
    }
    Ok(())
}

/// The C compiler ring and psm need for `target` on this host, and the Rust target.
pub fn ensure_tools(target: &str) -> Result<()> {
    if target.starts_with(std::env::consts::ARCH) {
        setup::ensure_debian_package("musl-tools", "musl-gcc", "--version", "the static release build")?;
    } else if target.starts_with("aarch64-") {
        setup::ensure_debian_package("gcc-aarch64-linux-gnu", "aarch64-linux-gnu-gcc", "--version", "the arm64 release build")?;
    }
    setup::ensure_rust_target(target, "the release build")
}
