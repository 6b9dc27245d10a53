//! `trainer-audit runbook`: the Markdown a person follows during the change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeArgs;
use super::CliError;

#[derive(Debug, Args)]
pub struct RunbookArgs {
    #[command(flatten)]
    pub upgrade: UpgradeArgs,
    /// Write the runbook here (default: standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Markdown, or one self-contained HTML page with the steps as a checklist
    #[arg(long, value_enum, default_value_t = RunbookFormat::Markdown)]
    pub format: RunbookFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RunbookFormat {
    Markdown,
    Html,
}

pub fn run(args: RunbookArgs) -> Result<ExitCode, CliError> {
    let (plan, notes) = args.upgrade.prepare()?.plan()?;
    let text = match args.format {
        RunbookFormat::Markdown => crate::report::runbook::markdown(&plan, &notes),
        RunbookFormat::Html => crate::report::html_runbook::page_for(&plan, &notes),
    };
    match &args.output {
        Some(path) => {
            crate::atomic_write::write_atomically(path, text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
