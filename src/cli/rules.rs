//! `trainer-audit rules` and `trainer-audit explain ID`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{document, print, CliError};
use crate::audit::rules::RuleSet;
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::rules::{Explained, RuleList};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit rules\n  trainer-audit rules --rules my-rules --format json\n  trainer-audit rules --format markdown > rules.md"
)]
pub struct RulesArgs {
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// Output format (markdown: a table of id, the severities each rule emits, kind, the commands
    /// that run it, title)
    #[arg(long, value_parser = Command::Rules.format_parser(), default_value = "text")]
    pub format: Format,
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
    let rules = RuleSet::load(args.rules.as_deref())?;
    print(&RuleList(rules), &document(Command::Rules, args.format)?, &Context::default())
}

pub fn explain(args: ExplainArgs) -> Result<ExitCode, CliError> {
    let rules = RuleSet::load(args.rules.as_deref())?;
    let (entries, alias) = crate::audit::rules::resolve(&rules, &args.id);
    if entries.is_empty() {
        return Err(CliError::Usage(format!("no rule {} (see `trainer-audit rules`)", args.id)));
    }
    print(&Explained { entries, alias }, &document(Command::Rules, Format::Text)?, &Context::default())
}
