//! `trainer-audit plan`: the stepwise upgrade path with what to fix before each step, for one
//! cluster or every cluster of a fleet.

use std::process::ExitCode;

use clap::Args;

use super::args::UpgradeFlags;
use super::fleet::FleetArgs;
use super::CliError;
use crate::fleet::audit::Job;
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::output::{Choice, Flags};
use crate::report::style::Paint;

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
    #[arg(long, value_parser = Command::Plan.format_parser(), default_value = "text")]
    pub format: Format,
    /// Print only the verdict line (one per cluster)
    #[arg(long, short = 'q', conflicts_with = "format")]
    pub quiet: bool,
    /// Exit 1 when a step's finding is at or above this severity (default: never, a plan is not a
    /// gate; one cluster, not with --quiet or --format jsonl)
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<crate::audit::finding::Severity>,
}

pub fn run(args: PlanArgs, paint: Paint) -> Result<ExitCode, CliError> {
    let choice = Choice::new(Flags {
        command: Command::Plan,
        format: args.format,
        quiet: args.quiet,
        fail_on: args.fail_on,
        output: None,
        verbose: false,
        fleet: args.clusters.is_fleet(),
    })?;
    let request = args.upgrade.request()?;
    let ctx = Context { paint, fail_on: args.fail_on, rules: Some(request.rules.clone()), ..Context::default() };
    let job = Job::Plan { request, fail_on: args.fail_on };
    super::fleet::run(job, &args.clusters, &choice, ctx)
}
