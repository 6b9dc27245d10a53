//! Whole-process benchmarks, each against its peer measured in the same run and reported as a
//! ratio. `pull`: a cold pull of the corpus 2.3.0 chart from a local registry (fresh cache each
//! run) against `curl` fetching the same manifest and chart blob in one process (the floor).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::setup;

pub fn run(args: &[String]) -> Result<()> {
    let (target, rest) = args.split_first().map(|(t, r)| (t.as_str(), r)).unwrap_or(("", &[]));
    let runs = match rest {
        [flag, n] if flag == "--runs" => n.parse().context("--runs takes a number")?,
        [] => 21,
        _ => bail!("usage: cargo xtask bench pull [--runs N]"),
    };
    match target {
        "pull" => pull(runs),
        _ => bail!("usage: cargo xtask bench pull [--runs N]"),
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn corpus() -> Result<PathBuf> {
    let dir = std::env::var_os("TRAINER_AUDIT_CORPUS").map(PathBuf::from).unwrap_or_else(|| repo_root().join("../shared/corpus"));
    if !dir.join("charts").is_dir() {
        bail!("no corpus at {} (set TRAINER_AUDIT_CORPUS)", dir.display());
    }
    Ok(dir)
}

fn build_release() -> Result<PathBuf> {
    let status =
        Command::new(env!("CARGO")).args(["build", "--release", "--quiet", "--bin", "trainer-audit"]).current_dir(repo_root()).status()?;
    if !status.success() {
        bail!("release build failed");
    }
    Ok(repo_root().join("target/release/trainer-audit"))
}

struct CorpusRegistry {
    tool: PathBuf,
    port: u16,
}

impl Drop for CorpusRegistry {
    fn drop(&mut self) {
        let _ = Command::new(&self.tool).args(["stop", &self.port.to_string()]).output();
    }
}

fn start_registry(corpus: &Path) -> Result<CorpusRegistry> {
    setup::ensure_docker_registry()?;
    setup::ensure_helm_oracle()?;
    let tool = corpus.join("../tools/corpus-registry");
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let out = Command::new(&tool).args(["start", &port.to_string()]).output()?;
    if !out.status.success() {
        bail!("corpus-registry start failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(CorpusRegistry { tool, port })
}

fn time(mut cmd: Command) -> Result<Duration> {
    let start = Instant::now();
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn pull(runs: usize) -> Result<()> {
    let corpus = corpus()?;
    let binary = build_release()?;
    let registry = start_registry(&corpus)?;
    let host = format!("127.0.0.1:{}", registry.port);
    let repo = format!("oci://{host}/kubeflow/charts/kubeflow-trainer");
    let scratch = tempfile_dir()?;

    // Learn the blob digest once, the way a user would.
    let out = Command::new(&binary)
        .args(["pull", &repo, "--version", "2.3.0", "--plain-http", "--format", "json", "-o"])
        .arg(scratch.join("probe"))
        .env("TRAINER_AUDIT_CACHE_DIR", scratch.join("probe-cache"))
        .output()?;
    if !out.status.success() {
        bail!("probe pull failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8(out.stdout)?;
    let layer = json_field(&text, "layer_digest").context("layer digest in pull output")?;

    let mut ours = Vec::new();
    let mut floor = Vec::new();
    for i in 0..runs {
        let cache = scratch.join(format!("cache-{i}"));
        let mut cmd = Command::new(&binary);
        cmd.args(["pull", &repo, "--version", "2.3.0", "--plain-http", "-o"])
            .arg(scratch.join(format!("out-{i}")))
            .env("TRAINER_AUDIT_CACHE_DIR", &cache);
        ours.push(time(cmd)?);
        let mut curl = Command::new("curl");
        curl.args(["-sf", "-H", "Accept: application/vnd.oci.image.manifest.v1+json"])
            .arg(format!("http://{host}/v2/kubeflow/charts/kubeflow-trainer/manifests/2.3.0"))
            .args(["-o", "/dev/null"])
            .arg(format!("http://{host}/v2/kubeflow/charts/kubeflow-trainer/blobs/{layer}"))
            .arg("-o")
            .arg(scratch.join(format!("curl-{i}.tgz")));
        floor.push(time(curl)?);
    }
    let (ours, floor) = (median(ours), median(floor));
    let ratio = ours.as_secs_f64() / floor.as_secs_f64();
    println!("bench pull: cold pull of kubeflow-trainer 2.3.0 from a local registry, median of {runs} runs");
    println!("  trainer-audit pull   {:>8.1} ms", ours.as_secs_f64() * 1e3);
    println!("  curl manifest+blob   {:>8.1} ms  (floor)", floor.as_secs_f64() * 1e3);
    println!("  ratio                {ratio:>8.2}x  (target <= 2x: {})", if ratio <= 2.0 { "met" } else { "NOT met" });
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("trainer-audit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Enough JSON reading for one string field of our own pull report.
fn json_field(text: &str, field: &str) -> Option<String> {
    let start = text.find(&format!("\"{field}\": \""))? + field.len() + 5;
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_string())
}
