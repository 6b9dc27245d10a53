//! `trainer-audit rules` and `trainer-audit explain ID`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{print_json, CliError};
use crate::audit::rules::load;

#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum RulesFormat {
    Text,
    Json,
    /// A table: id, the severities each rule emits, kind, the commands that run it, title
    Markdown,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit rules\n  trainer-audit rules --rules my-rules --format json\n  trainer-audit rules --format markdown > rules.md"
)]
pub struct RulesArgs {
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
    pub format: RulesFormat,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit explain TA-HOOK-101\n  trainer-audit explain TA-CRD-002   # a retired id: says which rule it became"
)]
pub struct ExplainArgs {
    /// Rule id, e.g. TA-OWN-001
    pub id: String,
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

pub fn list(args: RulesArgs) -> Result<ExitCode, CliError> {
    let rules = load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
    match args.format {
        RulesFormat::Json => print_json(&rules)?,
        RulesFormat::Text => print!("{}", crate::report::rules::list(&rules)),
        RulesFormat::Markdown => print!("{}", crate::report::rules::markdown(&rules)),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn explain(args: ExplainArgs) -> Result<ExitCode, CliError> {
    let rules = load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
    let (entries, alias) = crate::audit::rules::resolve(&rules, &args.id);
    if entries.is_empty() {
        return Err(CliError::Usage(format!("no rule {} (see `trainer-audit rules`)", args.id)));
    }
    print!("{}", crate::report::rules::explain_all(&entries, alias.as_deref()));
    Ok(ExitCode::SUCCESS)
}
