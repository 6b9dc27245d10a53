//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer (or
//! every cluster of a fleet) to a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeFlags;
use super::fleet::FleetArgs;
use super::CliError;
use crate::audit::finding::Severity;
use crate::fleet::audit::Job;
use crate::report::output::{Choice, Command, Flags, Format, SarifInputs};
use crate::report::style::Paint;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    /// One JSON document (JSON Lines for a fleet)
    Json,
    Sarif,
    Markdown,
    /// JSON Lines: one compact document per cluster, with the verdict (also for one cluster)
    Jsonl,
    /// GitHub workflow commands: each finding as an annotation on the run and pull request
    Github,
    /// One self-contained HTML page (one cluster or a fleet); with -o FILE
    Html,
    /// OpenMetrics / Prometheus text (one cluster or a fleet), for a textfile collector or a Pushgateway
    Openmetrics,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit check --to 2.3.0\n  trainer-audit check --snapshot cluster.yaml --to 2.3.0 -f values.yaml --format sarif\n  trainer-audit check --all-contexts --to 2.3.0 -q"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub clusters: FleetArgs,
    #[command(flatten)]
    pub upgrade: UpgradeFlags,
    /// Output format (a fleet prints text, json or jsonl)
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
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

/// The text detail the `--verbose` flag asks for.
pub fn detail(verbose: bool) -> crate::report::findings::Detail {
    if verbose {
        crate::report::findings::Detail::Verbose
    } else {
        crate::report::findings::Detail::Short
    }
}

pub fn run(args: CheckArgs, paint: Paint) -> Result<ExitCode, CliError> {
    let format = match args.format {
        CheckFormat::Text => Format::Text,
        CheckFormat::Json => Format::Json,
        CheckFormat::Sarif => Format::Sarif,
        CheckFormat::Markdown => Format::Markdown,
        CheckFormat::Jsonl => Format::Jsonl,
        CheckFormat::Github => Format::Github,
        CheckFormat::Html => Format::Html,
        CheckFormat::Openmetrics => Format::Openmetrics,
    };
    let choice = Choice::new(Flags {
        command: Command::Check,
        format,
        quiet: args.quiet,
        fail_on: Some(args.fail_on),
        output: args.output.clone(),
        verbose: args.verbose,
        fleet: args.clusters.is_fleet(),
    })?;
    let job = Job::Check { request: args.upgrade.request()?, fail_on: args.fail_on };
    let sarif = SarifInputs { values: args.upgrade.values.files.clone(), chart: args.upgrade.chart.as_ref().map(std::path::PathBuf::from) };
    super::fleet::run(job, &args.clusters, &choice, sarif, paint)
}
