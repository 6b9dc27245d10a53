//! `trainer-audit plan`: the stepwise upgrade path with what to fix before each step, for one
//! cluster or every cluster of a fleet.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeFlags;
use super::fleet::{FleetArgs, Output};
use super::{print_report, CliError};
use crate::fleet::audit::Job;
use crate::report::json_schema::Report as SchemaReport;
use crate::report::style::Paint;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum PlanFormat {
    Text,
    /// One JSON document (JSON Lines for a fleet)
    Json,
    Markdown,
    /// SARIF 2.1.0: every step's findings (one cluster)
    Sarif,
    /// JSON Lines: one compact document per cluster, with the verdict (also for one cluster)
    Jsonl,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit plan --to 2.3.0\n  trainer-audit plan --snapshot cluster.yaml --to 2.4.0 --format markdown"
)]
pub struct PlanArgs {
    #[command(flatten)]
    pub clusters: FleetArgs,
    #[command(flatten)]
    pub upgrade: UpgradeFlags,
    /// Output format (a fleet prints text, json or jsonl)
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub format: PlanFormat,
    /// Print only the verdict line (one per cluster)
    #[arg(long, short = 'q', conflicts_with = "format")]
    pub quiet: bool,
    /// Exit 1 when a step's finding is at or above this severity (default: never, a plan is not a
    /// gate; one cluster, not with --quiet or --format jsonl)
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<crate::audit::finding::Severity>,
}

pub fn run(args: PlanArgs, paint: Paint) -> Result<ExitCode, CliError> {
    let output = match (args.quiet, args.format, args.clusters.is_fleet()) {
        (true, _, _) => Some(Output::Quiet),
        (false, PlanFormat::Jsonl, _) | (false, PlanFormat::Json, true) => Some(Output::JsonLines),
        (false, PlanFormat::Text, true) => Some(Output::Text),
        (false, PlanFormat::Markdown | PlanFormat::Sarif, true) => {
            return Err(CliError::Usage("--format markdown and sarif plan one cluster; a fleet prints text, json or jsonl".into()))
        }
        (false, _, false) => None,
    };
    if let Some(output) = output {
        if args.fail_on.is_some() {
            return Err(CliError::Usage(
                "plan --fail-on gates one cluster's text, json or markdown; for a fleet (or --quiet, --format jsonl) gate with check"
                    .into(),
            ));
        }
        return super::fleet::run(Job::Plan { request: args.upgrade.request()? }, &args.clusters, output, paint);
    }
    let upgrade = args.upgrade.prepare(&args.clusters.single())?;
    let (plan, notes) = upgrade.plan()?;
    let findings: Vec<_> = plan.steps.iter().flat_map(|s| s.preconditions.iter().cloned()).collect();
    match args.format {
        PlanFormat::Text => print!("{}", crate::report::plan::text(&plan, &notes)),
        PlanFormat::Json | PlanFormat::Jsonl => {
            print_report(SchemaReport::Plan, &crate::report::plan::json(&plan, &notes, &upgrade.inputs()))?
        }
        PlanFormat::Markdown => print!("{}", crate::report::plan::markdown(&plan, &notes)),
        PlanFormat::Sarif => super::print_json(&crate::report::sarif::sarif(&findings, &upgrade.rules))?,
    }
    crate::report::github::step_summary(|| crate::report::github::plan_summary(&plan));
    Ok(super::fails_at(&findings, args.fail_on))
}
