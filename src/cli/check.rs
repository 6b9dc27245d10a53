//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer to
//! a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::upgrade_args::{Prepared, UpgradeArgs};
use super::{fails_at, print_json, CliError};
use crate::audit::engine::run as run_rules;
use crate::audit::finding::{Finding, Severity};
use crate::audit::input::CheckInput;
use crate::cluster::install::Method;

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

#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub release: String,
    pub namespace: String,
    pub method: Method,
    pub from: String,
    pub to: String,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
    pub findings: Vec<Finding>,
}

/// Findings for one hop `from` → `to` (charts: `from_chart`/`to_chart` local paths or pulled).
pub fn hop(
    args: &UpgradeArgs,
    prepared: &Prepared,
    from: &semver::Version,
    to: &semver::Version,
    from_chart: Option<&str>,
    to_chart: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<Vec<Finding>, CliError> {
    let installed = match args.inventory(prepared, from, from_chart) {
        Ok(inv) => Some(inv),
        Err(e) => {
            notes.push(format!("the installed chart {from} could not be rendered ({e}); checks that compare the two charts were skipped"));
            None
        }
    };
    let target = args.inventory(prepared, to, to_chart)?;
    let input = CheckInput {
        state: &prepared.state,
        release: prepared.release(),
        release_name: prepared.release_name.clone(),
        namespace: prepared.namespace.clone(),
        from: from.clone(),
        to: to.clone(),
        installed: installed.as_ref(),
        target: &target,
        user_values: prepared.user_values_json(),
        install: &prepared.install,
    };
    Ok(run_rules(&prepared.rules, &input))
}

pub fn report(args: &UpgradeArgs) -> Result<CheckReport, CliError> {
    let prepared = args.prepare()?;
    let to = args.target_version(&prepared)?;
    let mut notes = prepared.notes.clone();
    let findings = hop(args, &prepared, &prepared.from, &to, args.from_chart.as_deref(), args.chart.as_deref(), &mut notes)?;
    Ok(CheckReport {
        release: prepared.release_name.clone(),
        namespace: prepared.namespace.clone(),
        method: prepared.install.method,
        from: prepared.from.to_string(),
        to: to.to_string(),
        notes,
        warnings: prepared.state.warnings.clone(),
        findings,
    })
}

pub fn run(args: CheckArgs) -> Result<ExitCode, CliError> {
    let report = report(&args.upgrade)?;
    match args.format {
        CheckFormat::Text => print!("{}", crate::report::check::text(&report)),
        CheckFormat::Json => print_json(&report)?,
        CheckFormat::Sarif => {
            let rules = crate::audit::rules::load(args.upgrade.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
            print_json(&crate::report::sarif::sarif(&report.findings, &rules))?
        }
        CheckFormat::Markdown => print!("{}", crate::report::check::markdown(&report)),
    }
    Ok(fails_at(&report.findings, Some(args.fail_on)))
}
