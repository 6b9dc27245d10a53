//! `trainer-audit runbook`: the Markdown a person follows during the change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::UpgradeArgs;
use super::CliError;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  trainer-audit runbook --to 2.3.0 -o runbook.md\n  trainer-audit runbook --snapshot cluster.yaml --chart trainer-2.3.0.tgz -o runbook.md")]
pub struct RunbookArgs {
    #[command(flatten)]
    pub upgrade: UpgradeArgs,
    /// Write the runbook here (default: standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: RunbookArgs) -> Result<ExitCode, CliError> {
    let (plan, notes) = args.upgrade.prepare()?.plan()?;
    let text = crate::report::runbook::markdown(&plan, &notes);
    match &args.output {
        Some(path) => {
            crate::atomic_write::write_atomically(path, text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
