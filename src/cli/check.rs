//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer (or
//! every cluster of a fleet) to a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeFlags;
use super::doors::Door;
use super::fleet::{FleetArgs, Output};
use super::{print_json, print_report, CliError};
use crate::audit::finding::Severity;
use crate::fleet::audit::Job;
use crate::report::json_schema::Report as SchemaReport;
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
    let door = match args.format {
        CheckFormat::Html => Some(Door::Html),
        CheckFormat::Openmetrics => Some(Door::OpenMetrics),
        _ => None,
    };
    if args.output.is_some() && (door.is_none() || args.quiet) {
        return Err(CliError::Usage("-o/--output writes --format html or openmetrics; the other formats print to standard output".into()));
    }
    if let (Some(door), false, true) = (door, args.quiet, args.clusters.is_fleet()) {
        let job = Job::Check { request: args.upgrade.request()?, fail_on: args.fail_on };
        return super::doors::check_fleet(job, &args.clusters, door, args.fail_on, args.output.as_deref());
    }
    let output = match (args.quiet, args.format, args.clusters.is_fleet()) {
        (true, _, _) => Some(Output::Quiet),
        (false, CheckFormat::Jsonl, _) | (false, CheckFormat::Json, true) => Some(Output::JsonLines),
        (false, CheckFormat::Text, true) => Some(Output::Text),
        (false, CheckFormat::Sarif | CheckFormat::Markdown | CheckFormat::Github, true) => {
            return Err(CliError::Usage(
                "--format sarif, markdown and github report one cluster; a fleet prints text, json or jsonl (or html, openmetrics)".into(),
            ))
        }
        (false, _, false) | (false, CheckFormat::Html | CheckFormat::Openmetrics, true) => None,
    };
    if let Some(output) = output {
        let job = Job::Check { request: args.upgrade.request()?, fail_on: args.fail_on };
        return super::fleet::run(job, &args.clusters, output, paint);
    }
    let cluster = args.clusters.single();
    let upgrade = args.upgrade.prepare(&cluster)?;
    let report = upgrade.check(args.fail_on)?;
    match args.format {
        CheckFormat::Text => print!("{}", crate::report::check::text_painted(&report, paint, detail(args.verbose))),
        CheckFormat::Json | CheckFormat::Jsonl => print_report(SchemaReport::Check, &report)?,
        CheckFormat::Sarif => {
            let root = std::env::current_dir().map_err(|e| CliError::Io(format!("cannot read the current directory: {e}")))?;
            let chart = args.upgrade.chart.as_ref().map(std::path::PathBuf::from);
            let files = crate::report::sarif::locate::Files::new(root, cluster.snapshot.clone(), args.upgrade.values.files.clone(), chart);
            print_json(&crate::report::sarif::check_sarif(&report, &upgrade.rules, &files))?
        }
        CheckFormat::Markdown => print!("{}", crate::report::check::markdown(&report)),
        CheckFormat::Github => print!("{}", crate::report::github::check_commands(&report, args.fail_on)),
        CheckFormat::Html => {
            let page = crate::report::html::check_page(&super::doors::single_name(&args.clusters), &report, args.fail_on);
            super::doors::emit(args.output.as_deref(), &page)?
        }
        CheckFormat::Openmetrics => {
            let read_at = super::doors::single_read_at(&args.clusters, upgrade.state.info.captured_at.as_deref());
            let text = super::doors::check_metrics(&super::doors::single_name(&args.clusters), &report, args.fail_on, read_at);
            super::doors::emit(args.output.as_deref(), &text)?
        }
    }
    crate::report::github::step_summary(|| crate::report::github::check_summary(&report, args.fail_on));
    // The process ends next, and the OS reclaims the cluster's objects at once (as `status`
    // does; a fleet drops each cluster's instead).
    std::mem::forget(upgrade);
    Ok(ExitCode::from(report.decision.verdict.exit_code()))
}
