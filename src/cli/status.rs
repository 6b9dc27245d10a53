//! `trainer-audit status`: what is installed, on one cluster or every cluster of a fleet, and how
//! the live objects fare under the installed CRDs (or, with `--to`/`--chart`, a target chart's;
//! one cluster only for now).

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::TargetArgs;
use super::fleet::{FleetArgs, Output};
use super::{print_report, CliError};
use crate::cluster::status::Validation;
use crate::fleet::audit::Job;
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
    let output = match (args.quiet, args.format, args.clusters.is_fleet()) {
        (true, _, _) => Some(Output::Quiet),
        (false, StatusFormat::Jsonl, _) | (false, StatusFormat::Json, true) => Some(Output::JsonLines),
        (false, StatusFormat::Text, true) => Some(Output::Text),
        (false, StatusFormat::Markdown, true) => {
            return Err(CliError::Usage("--format markdown shows one cluster; a fleet prints text, json or jsonl".into()))
        }
        (false, _, false) => None,
    };
    let single_quiet = args.quiet && args.fail_on.is_some() && !args.clusters.is_fleet();
    if let (Some(output), false) = (output, single_quiet) {
        if args.fail_on.is_some() {
            return Err(CliError::Usage(
                "status --fail-on gates one cluster (text, json, markdown or --quiet); for a fleet (or --format jsonl) gate with check"
                    .into(),
            ));
        }
        if args.target.given() {
            return Err(CliError::Usage(
                "status --to/--chart validates one cluster; with --quiet, --format jsonl or several clusters, drop --to/--chart".into(),
            ));
        }
        return super::fleet::run(Job::Status, &args.clusters, output, paint);
    }
    let state = args.clusters.single().state()?;
    let validation = if args.target.given() {
        let target = args.target.crds("status")?;
        Validation::of(&state, Some((&target.crds, format!("the CRDs of {}", target.chart))))
    } else {
        Validation::of(&state, None)
    };
    let status = crate::cluster::status::status_against(&state, validation);
    let report = crate::report::status::Gated { status: &status, fail_on: args.fail_on };
    match (args.format, args.fail_on) {
        _ if single_quiet => println!("{}: {}", super::doors::single_name(&args.clusters), report.line()),
        (StatusFormat::Text, None) => print!("{}", crate::report::status::text(&status)),
        (StatusFormat::Text, Some(level)) => print!("{}", crate::report::status::text_gated(&status, level)),
        (StatusFormat::Json | StatusFormat::Jsonl, _) => print_report(crate::report::json_schema::Report::Status, &report)?,
        (StatusFormat::Markdown, None) => print!("{}", crate::report::status::markdown(&status)),
        (StatusFormat::Markdown, Some(level)) => print!("{}", crate::report::status::markdown_gated(&status, level)),
    }
    let blocked = args
        .fail_on
        .is_some_and(|level| crate::report::status::decision(&status, level).verdict == crate::audit::verdict::Verdict::Blocked);
    // The process ends next: freeing a big cluster's objects one by one took a fifth of
    // `status` over 50,000 TrainJobs (docs/benchmarks.md), and the OS reclaims them at once.
    // A command that reads several clusters in one process must drop each state instead.
    std::mem::forget(state);
    Ok(if blocked { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
