//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer to
//! a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeArgs;
use super::{fails_at, print_json, CliError};
use crate::audit::finding::Severity;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
    Sarif,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub upgrade: UpgradeArgs,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Exit 1 when a finding is at or above this severity
    #[arg(long, value_enum, default_value_t = Severity::Error)]
    pub fail_on: Severity,
}

pub fn run(args: CheckArgs) -> Result<ExitCode, CliError> {
    let upgrade = args.upgrade.prepare()?;
    let report = upgrade.check()?;
    match args.format {
        CheckFormat::Text => print!("{}", crate::report::check::text(&report)),
        CheckFormat::Json => print_json(&report)?,
        CheckFormat::Sarif => print_json(&crate::report::sarif::sarif(&report.findings, &upgrade.rules))?,
        CheckFormat::Markdown => print!("{}", crate::report::check::markdown(&report)),
    }
    Ok(fails_at(&report.findings, Some(args.fail_on)))
}
