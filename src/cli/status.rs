//! `trainer-audit status`: what is installed, on one cluster or every cluster of a fleet, and how
//! the live objects fare under the installed CRDs (or, with `--to`/`--chart`, a target chart's).

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::TargetArgs;
use super::fleet::FleetArgs;
use super::CliError;
use crate::fleet::audit::Job;
use crate::report::output::{Choice, Command, Flags, Format, SarifInputs};
use crate::report::style::Paint;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum StatusFormat {
    Text,
    /// One JSON document (JSON Lines for a fleet)
    Json,
    /// JSON Lines: one compact document per cluster, with the verdict (also for one cluster)
    Jsonl,
    /// The text under a heading, for a job summary or a pull request (one cluster)
    Markdown,
}

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
    #[arg(long, value_enum, default_value_t = StatusFormat::Text)]
    pub format: StatusFormat,
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
    let format = match args.format {
        StatusFormat::Text => Format::Text,
        StatusFormat::Json => Format::Json,
        StatusFormat::Jsonl => Format::Jsonl,
        StatusFormat::Markdown => Format::Markdown,
    };
    let choice = Choice::new(Flags {
        command: Command::Status,
        format,
        quiet: args.quiet,
        fail_on: args.fail_on,
        output: None,
        verbose: false,
        fleet: args.clusters.is_fleet(),
    })?;
    let target = if args.target.given() { Some(args.target.request("status")?) } else { None };
    let job = Job::Status { target, fail_on: args.fail_on };
    super::fleet::run(job, &args.clusters, &choice, SarifInputs::default(), paint)
}
