//! `trainer-audit snapshot`: writes exactly what the audit reads from a live cluster as one
//! `List` (+ `ClusterInfo`), optionally with release values redacted.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::ClusterArgs;
use super::CliError;
use crate::cluster::release::redacted_record;
use crate::cluster::snapshot::render;
use crate::objects::str_at;
use chart_source::atomic_write::write_atomically;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit snapshot --context prod -o prod.yaml\n  trainer-audit snapshot --redact-values -o cluster.json"
)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Output file (`.json` writes JSON, anything else YAML; default: standard output as YAML)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace release values under secret-looking keys (password, token, secret, key, …) with "<redacted>"
    #[arg(long)]
    pub redact_values: bool,
}

pub fn run(args: SnapshotArgs) -> Result<ExitCode, CliError> {
    if let Some(n) = args.cluster.neighbours.first() {
        return Err(CliError::Usage(format!(
            "--neighbour {n}: a snapshot records what the cluster shows; declare a neighbour's version where the snapshot is checked (check/plan/runbook/status --snapshot FILE --neighbour {n})"
        )));
    }
    let mut state = args.cluster.state()?;
    if state.info.captured_at.is_none() && args.cluster.snapshot.is_none() {
        state.info.captured_at = Some(now_rfc3339());
    }
    if args.redact_values {
        for o in state.objects.iter_mut() {
            if str_at(o, &["metadata", "name"]).starts_with("sh.helm.release.v1.") {
                *o = redacted_record(o).map_err(|e| CliError::Cluster(format!("cannot redact: {e}")))?;
            }
        }
    }
    for w in &state.warnings {
        eprintln!("warning: {w}");
    }
    let json = args.output.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let text = render(&state, json).map_err(|e| CliError::Io(e.to_string()))?;
    match &args.output {
        Some(path) => {
            write_atomically(path, text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
            eprintln!("wrote {} ({} object{})", path.display(), state.objects.len(), if state.objects.len() == 1 { "" } else { "s" });
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// UTC now as RFC 3339 (seconds).
fn now_rfc3339() -> String {
    helm_render::funcs::dates::Time::now().format("2006-01-02T15:04:05Z07:00")
}
