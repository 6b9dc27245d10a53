//! `trainer-audit status`: what is installed, on one cluster or every cluster of a fleet, and how
//! the live objects fare under the installed CRDs (or, with `--to`/`--chart`, a target chart's).

use std::process::ExitCode;

use clap::Args;

use super::args::TargetArgs;
use super::fleet::FleetArgs;
use super::CliError;
use crate::fleet::audit::Job;
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::output::{Choice, Flags};
use crate::report::style::Paint;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit status\n  trainer-audit status --snapshot cluster.yaml --to 2.3.0 --fail-on error\n  trainer-audit status --all-contexts -q"
)]
pub struct StatusArgs {
    #[command(flatten)]
    pub clusters: FleetArgs,
    /// Validate the live objects against this target chart's CRDs (--to V or --chart PATH)
    /// instead of the installed ones
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output format (a fleet prints text, json or jsonl)
    #[arg(long, value_parser = Command::Status.format_parser(), default_value = "text")]
    pub format: Format,
    /// Print only the verdict line (one per cluster)
    #[arg(long, short = 'q', conflicts_with = "format")]
    pub quiet: bool,
    /// Exit 1 when the status holds something at or above this severity (errors: a Helm release
    /// unreadable or stuck, objects the CRDs reject; warnings: what could not be read, objects
    /// that lose fields on their next write) and open with the verdict; default: never, status is
    /// not a gate (one cluster)
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<crate::audit::finding::Severity>,
}

pub fn run(args: StatusArgs, paint: Paint) -> Result<ExitCode, CliError> {
    let choice = Choice::new(Flags {
        command: Command::Status,
        format: args.format,
        quiet: args.quiet,
        fail_on: args.fail_on,
        output: None,
        verbose: false,
        fleet: args.clusters.is_fleet(),
    })?;
    let target = if args.target.given() { Some(args.target.request("status")?) } else { None };
    let job = Job::Status { target, fail_on: args.fail_on };
    let ctx = Context { paint, fail_on: args.fail_on, ..Context::default() };
    super::fleet::run(job, &args.clusters, &choice, ctx)
}
