//! `trainer-audit check`: the readiness gate — findings for upgrading this cluster's Trainer (or
//! every cluster of a fleet) to a target version; exit 1 when any is at or above `--fail-on`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeFlags;
use super::fleet::{FleetArgs, Output};
use super::{fails_at, print_json, CliError};
use crate::audit::finding::Severity;
use crate::fleet::audit::Job;
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
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  trainer-audit check --to 2.3.0\n  trainer-audit check --snapshot cluster.yaml --to 2.3.0 -f values.yaml --format sarif\n  trainer-audit check --all-contexts --to 2.3.0 -q")]
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
    let output = match (args.quiet, args.format, args.clusters.is_fleet()) {
        (true, _, _) => Some(Output::Quiet),
        (false, CheckFormat::Jsonl, _) | (false, CheckFormat::Json, true) => Some(Output::JsonLines),
        (false, CheckFormat::Text, true) => Some(Output::Text),
        (false, CheckFormat::Sarif | CheckFormat::Markdown, true) => {
            return Err(CliError::Usage("--format sarif and markdown report one cluster; a fleet prints text, json or jsonl".into()))
        }
        (false, _, false) => None,
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
        CheckFormat::Json | CheckFormat::Jsonl => print_json(&report)?,
        CheckFormat::Sarif => {
            let root = std::env::current_dir().map_err(|e| CliError::Io(format!("cannot read the current directory: {e}")))?;
            let chart = args.upgrade.chart.as_ref().map(std::path::PathBuf::from);
            let files = crate::report::sarif::locate::Files::new(root, cluster.snapshot.clone(), args.upgrade.values.files.clone(), chart);
            print_json(&crate::report::sarif::check_sarif(&report, &upgrade.rules, &files))?
        }
        CheckFormat::Markdown => print!("{}", crate::report::check::markdown(&report)),
    }
    // The process ends next, and the OS reclaims the cluster's objects at once (as `status`
    // does; a fleet drops each cluster's instead).
    std::mem::forget(upgrade);
    Ok(fails_at(&report.findings, Some(args.fail_on)))
}
