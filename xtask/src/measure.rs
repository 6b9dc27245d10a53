//! Measuring whole processes for the benchmarks (`bench`, `bench_fleet`): where the workspace and
//! the corpus are, the release binary, wall time (median of runs), peak RSS, a scratch directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// `$TRAINER_AUDIT_CORPUS`, else `../shared/corpus` beside the workspace; refused without charts.
pub fn corpus() -> Result<PathBuf> {
    let dir = std::env::var_os("TRAINER_AUDIT_CORPUS").map(PathBuf::from).unwrap_or_else(|| repo_root().join("../shared/corpus"));
    if !dir.join("charts").is_dir() {
        bail!("no corpus at {} (set TRAINER_AUDIT_CORPUS)", dir.display());
    }
    Ok(dir)
}

/// The release binary, built first.
pub fn build_release() -> Result<PathBuf> {
    let status =
        Command::new(env!("CARGO")).args(["build", "--release", "--quiet", "--bin", "trainer-audit"]).current_dir(repo_root()).status()?;
    if !status.success() {
        bail!("release build failed");
    }
    Ok(repo_root().join("target/release/trainer-audit"))
}

/// Wall time of a command that must succeed (its output dropped).
pub fn time(mut cmd: Command) -> Result<Duration> {
    let start = Instant::now();
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

/// Like [`time`], but findings (exit 1) are a normal outcome; only exit 2 fails.
pub fn time_any_exit(mut cmd: Command) -> Result<Duration> {
    let start = Instant::now();
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let elapsed = start.elapsed();
    if out.status.code() == Some(2) {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

/// The median of the samples (the upper one of an even count).
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A scratch directory for this run, under the system's temporary directory.
pub fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("trainer-audit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Peak RSS (KiB) of a command, via GNU time when the machine has it.
pub fn peak_rss_kib(cmd: Command) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        return None;
    }
    let program = cmd.get_program().to_os_string();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_os_string()).collect();
    let envs: Vec<_> = cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k.to_os_string(), v.to_os_string()))).collect();
    let out = Command::new("/usr/bin/time").arg("-f").arg("%M").arg(program).args(args).envs(envs).stdout(Stdio::null()).output().ok()?;
    String::from_utf8_lossy(&out.stderr).lines().last()?.trim().parse().ok()
}
