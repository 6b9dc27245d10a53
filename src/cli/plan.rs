//! `trainer-audit plan`: the stepwise upgrade path with what to fix before each step.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeArgs;
use super::{print_json, CliError};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum PlanFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub upgrade: UpgradeArgs,
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub format: PlanFormat,
}

pub fn run(args: PlanArgs) -> Result<ExitCode, CliError> {
    let (plan, notes) = args.upgrade.prepare()?.plan()?;
    match args.format {
        PlanFormat::Text => print!("{}", crate::report::plan::text(&plan, &notes)),
        PlanFormat::Json => print_json(&serde_json::json!({"plan": plan, "notes": notes}))?,
        PlanFormat::Markdown => print!("{}", crate::report::plan::markdown(&plan, &notes)),
    }
    Ok(ExitCode::SUCCESS)
}
