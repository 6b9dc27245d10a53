//! `trainer-audit plan`: the stepwise upgrade path with what to fix before each step, for one
//! cluster or every cluster of a fleet.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeFlags;
use super::fleet::FleetArgs;
use super::CliError;
use crate::fleet::audit::Job;
use crate::report::output::{Choice, Command, Flags, Format, SarifInputs};
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
    let format = match args.format {
        PlanFormat::Text => Format::Text,
        PlanFormat::Json => Format::Json,
        PlanFormat::Markdown => Format::Markdown,
        PlanFormat::Sarif => Format::Sarif,
        PlanFormat::Jsonl => Format::Jsonl,
    };
    let choice = Choice::new(Flags {
        command: Command::Plan,
        format,
        quiet: args.quiet,
        fail_on: args.fail_on,
        output: None,
        verbose: false,
        fleet: args.clusters.is_fleet(),
    })?;
    let job = Job::Plan { request: args.upgrade.request()?, fail_on: args.fail_on };
    super::fleet::run(job, &args.clusters, &choice, SarifInputs::default(), paint)
}
