//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer (or
//! every cluster of a fleet) to a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::Args;

use super::args::UpgradeFlags;
use super::fleet::FleetArgs;
use super::CliError;
use crate::audit::finding::Severity;
use crate::fleet::audit::Job;
use crate::report::document::{Context, Given, NextCommand};
use crate::report::findings::Detail;
use crate::report::format::{Command, Format};
use crate::report::output::{Choice, Flags};
use crate::report::style::Paint;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit check --to 2.3.0\n  trainer-audit check --snapshot cluster.yaml --to 2.3.0 -f values.yaml --format sarif\n  trainer-audit check --all-contexts --to 2.3.0 -q"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub clusters: FleetArgs,
    #[command(flatten)]
    pub upgrade: UpgradeFlags,
    /// Output format (a fleet prints text, json, jsonl, html or openmetrics)
    #[arg(long, value_parser = Command::Check.format_parser(), default_value = "text")]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity
    #[arg(long, value_enum, default_value_t = Severity::Error)]
    pub fail_on: Severity,
    /// Print only the verdict line (one per cluster)
    #[arg(long, short = 'q', conflicts_with = "format")]
    pub quiet: bool,
    /// Write the html or openmetrics output to this file (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Text: every finding with its evidence, the failures it predicts and its sources
    #[arg(long, short = 'v', conflicts_with = "quiet")]
    pub verbose: bool,
}

/// `next`: the command that comes after this check (the runbook with the same inputs).
pub fn run(args: CheckArgs, paint: Paint, next: Option<NextCommand>) -> Result<ExitCode, CliError> {
    let choice = Choice::new(Flags {
        command: Command::Check,
        format: args.format,
        quiet: args.quiet,
        fail_on: Some(args.fail_on),
        output: args.output.clone(),
        verbose: args.verbose,
        fleet: args.clusters.is_fleet(),
    })?;
    let request = args.upgrade.request()?;
    let ctx = Context {
        paint,
        detail: Detail::of(args.verbose),
        fail_on: Some(args.fail_on),
        rules: Some(request.rules.clone()),
        given: Given {
            values: args.upgrade.values.files.clone(),
            chart: args.upgrade.chart.as_ref().map(std::path::PathBuf::from),
            snapshot: None,
        },
        next,
        ..Context::default()
    };
    let job = Job::Check { request, fail_on: args.fail_on };
    super::fleet::run(job, &args.clusters, &choice, ctx)
}
