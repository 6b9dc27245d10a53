//! `trainer-audit rules` and `trainer-audit explain ID`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{print_json, CliError, Format};
use crate::audit::rules::load;

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Rule id, e.g. TA-OWN-001
    pub id: String,
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

pub fn list(args: RulesArgs) -> Result<ExitCode, CliError> {
    let rules = load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
    match args.format {
        Format::Json => print_json(&rules)?,
        Format::Text => {
            for r in &rules {
                println!("{:<12} {:<8} {:<20} {}", r.id, r.severity.as_str(), r.kind, r.title);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn explain(args: ExplainArgs) -> Result<ExitCode, CliError> {
    let rules = load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
    let Some(r) = rules.iter().find(|r| r.id.eq_ignore_ascii_case(&args.id)) else {
        return Err(CliError::Usage(format!("no rule {} (see `trainer-audit rules`)", args.id)));
    };
    let kind = crate::audit::kinds::kind(&r.kind).map(|k| k.summary).unwrap_or("");
    let applies = match (&r.applies.from, &r.applies.to) {
        (None, None) => "every upgrade".to_string(),
        (f, t) => format!("from {} to {}", f.as_deref().unwrap_or("any"), t.as_deref().unwrap_or("any")),
    };
    print!(
        "{} — {}\n\nseverity: {}\nkind:     {} ({kind})\napplies:  {applies}\ndefined:  {}\n\nWhy: {}\n\nFix: {}\n\nSource: {}\n",
        r.id,
        r.title,
        r.severity.as_str(),
        r.kind,
        r.origin,
        r.why,
        r.fix,
        r.source
    );
    if !r.params.is_empty() {
        println!("\nParams: {}", serde_json::to_string(&r.params).unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}
