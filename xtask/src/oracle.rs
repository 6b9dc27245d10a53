//! Running one of the Helm-engine scripts (helm-python-sdk) with JSON in and JSON out.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Writes `source` to a temporary script, feeds it `input` as JSON, parses its JSON output.
pub fn run_json(name: &str, source: &str, input: &serde_json::Value) -> Result<serde_json::Value> {
    let script = std::env::temp_dir().join(format!("trainer-audit-{name}-{}.py", std::process::id()));
    std::fs::write(&script, source)?;
    let mut child = Command::new("python3").arg(&script).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().context("run python3")?;
    child.stdin.take().expect("stdin").write_all(serde_json::to_string(input)?.as_bytes())?;
    let out = child.wait_with_output()?;
    let _ = std::fs::remove_file(&script);
    if !out.status.success() {
        bail!("the Helm oracle script {name} failed");
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}
