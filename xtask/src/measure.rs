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

/// The release binary, built first, as a plain `cargo build --release -p trainer-audit` from a
/// shell builds it, so neither build undoes the other (each was ~15-20 minutes on the bench
/// machine): `-p`, since without it cargo resolves features over every workspace member
/// (xtask's and testkit's dependencies turn on more features of chrono, futures-util …); and
/// without the variables `cargo run` set for xtask itself ([`cargo_run_env`]), since build
/// scripts (ring's, rustix's) rerun when one of them changes, and all above them is rebuilt.
pub fn build_release() -> Result<PathBuf> {
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--release", "--quiet", "-p", "trainer-audit", "--bin", "trainer-audit"]).current_dir(repo_root());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(cargo_run_env) {
            build.env_remove(name);
        }
    }
    let status = build.status()?;
    if !status.success() {
        bail!("release build failed");
    }
    Ok(repo_root().join("target/release/trainer-audit"))
}

/// Whether `cargo run` sets this variable for the program it runs (the package's manifest and
/// metadata, its crate and binary names, `OUT_DIR`): none of them belongs to another build.
pub fn cargo_run_env(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || matches!(name, "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR" | "OUT_DIR")
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

/// The 1-minute load average, as text ("?" where /proc/loadavg is missing).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// One whole-process run, or the medians of several: wall time, and CPU time (user + system)
/// and peak RSS from GNU time when the machine has it.
pub struct Measured {
    pub wall: Duration,
    pub cpu: Option<Duration>,
    pub rss_kib: Option<u64>,
}

impl Measured {
    pub fn median(samples: Vec<Measured>) -> Measured {
        fn mid<T: Ord + Copy>(mut v: Vec<T>) -> Option<T> {
            v.sort();
            v.get(v.len() / 2).copied()
        }
        Measured {
            wall: mid(samples.iter().map(|s| s.wall).collect()).unwrap_or_default(),
            cpu: mid(samples.iter().filter_map(|s| s.cpu).collect()),
            rss_kib: mid(samples.iter().filter_map(|s| s.rss_kib).collect()),
        }
    }

    pub fn row(&self) -> String {
        let cpu = self.cpu.map(|c| format!("{:.2} s", c.as_secs_f64())).unwrap_or_else(|| "n/a".into());
        let rss = self.rss_kib.map(|k| format!("{:.0} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into());
        format!("{:>6.2} s  {cpu:>8}  {rss:>8}", self.wall.as_secs_f64())
    }
}

/// Runs `cmd` once (output discarded); an exit code outside `ok` fails the benchmark.
pub fn measure(cmd: Command, ok: &[i32]) -> Result<Measured> {
    let gnu_time = Path::new("/usr/bin/time");
    let report = std::env::temp_dir().join(format!("trainer-audit-bench-time-{}", std::process::id()));
    let mut run = if gnu_time.exists() {
        let mut c = Command::new(gnu_time);
        c.arg("-o").arg(&report).args(["-f", "%U %S %M"]).arg(cmd.get_program()).args(cmd.get_args());
        c.envs(cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
        c
    } else {
        cmd
    };
    let start = Instant::now();
    let out = run.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let wall = start.elapsed();
    if !out.status.code().is_some_and(|c| ok.contains(&c)) {
        bail!("{run:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    let fields: Vec<f64> = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| t.lines().last().map(|l| l.split_whitespace().filter_map(|f| f.parse().ok()).collect()))
        .unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    match fields[..] {
        [user, system, rss] => Ok(Measured { wall, cpu: Some(Duration::from_secs_f64(user + system)), rss_kib: Some(rss as u64) }),
        _ => Ok(Measured { wall, cpu: None, rss_kib: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables ring's and rustix's build scripts declare (`rerun-if-env-changed`) that
    /// `cargo run` sets go; the user's own cargo settings stay.
    #[test]
    fn the_release_build_drops_what_cargo_run_set() {
        for name in
            ["CARGO_MANIFEST_DIR", "CARGO_MANIFEST_LINKS", "CARGO_PKG_NAME", "CARGO_PKG_VERSION_MAJOR", "CARGO_PKG_VERSION_PRE", "OUT_DIR"]
        {
            assert!(cargo_run_env(name), "{name}");
        }
        for name in ["CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_PROFILE_RELEASE_DEBUG", "CARGO_CFG_TARGET_OS", "CARGO", "RUSTFLAGS"] {
            assert!(!cargo_run_env(name), "{name}");
        }
    }
}
