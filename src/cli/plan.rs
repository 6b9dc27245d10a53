//! `trainer-audit plan`: the stepwise upgrade path with what to fix before each step.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::check::hop;
use super::upgrade_args::UpgradeArgs;
use super::{print_json, CliError};
use crate::plan::{path, step, Plan, StepContext};

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

pub fn build(args: &UpgradeArgs) -> Result<(Plan, Vec<String>), CliError> {
    let prepared = args.prepare()?;
    let to = args.target_version(&prepared)?;
    let stops = path(&prepared.rules, &prepared.from, &to, &prepared.available).map_err(CliError::Usage)?;
    let repository = prepared.repository.as_ref().map(|r| r.to_string()).or(args.chart.clone()).unwrap_or_default();
    let flags = args.values_flags();
    let ctx = StepContext {
        release: &prepared.release_name,
        namespace: &prepared.namespace,
        method: prepared.install.method,
        repository: &repository,
        values_flags: &flags,
    };
    let mut notes = prepared.notes.clone();
    let mut steps = Vec::new();
    let mut current = prepared.from.clone();
    for (i, stop) in stops.iter().enumerate() {
        let from_chart = if i == 0 { args.from_chart.as_deref() } else { None };
        let to_chart = if stop == &to { args.chart.as_deref() } else { None };
        let findings = hop(args, &prepared, &current, stop, from_chart, to_chart, &mut notes)?;
        steps.push(step(&ctx, i + 1, &current, stop, findings));
        current = stop.clone();
    }
    if steps.len() > 1 {
        notes
            .push("steps after the first are checked against the cluster as it is now: run `trainer-audit check` again before each".into());
    }
    let plan = Plan {
        release: prepared.release_name.clone(),
        namespace: prepared.namespace.clone(),
        method: prepared.install.method,
        from: prepared.from.to_string(),
        to: to.to_string(),
        repository,
        steps,
    };
    Ok((plan, notes))
}

pub fn run(args: PlanArgs) -> Result<ExitCode, CliError> {
    let (plan, notes) = build(&args.upgrade)?;
    match args.format {
        PlanFormat::Text => print!("{}", crate::report::plan::text(&plan, &notes)),
        PlanFormat::Json => print_json(&serde_json::json!({"plan": plan, "notes": notes}))?,
        PlanFormat::Markdown => print!("{}", crate::report::plan::markdown(&plan, &notes)),
    }
    Ok(ExitCode::SUCCESS)
}
