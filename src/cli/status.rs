//! `trainer-audit status`: what is installed, and how the live objects fare under the installed
//! CRDs (or, with `--to`/`--chart`, a target chart's).

use std::process::ExitCode;

use clap::Args;

use super::args::{ClusterArgs, TargetArgs};
use super::{print_json, CliError, Format};
use crate::cluster::status::Validation;

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Validate the live objects against this target chart's CRDs (--to V or --chart PATH)
    /// instead of the installed ones
    #[command(flatten)]
    pub target: TargetArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: StatusArgs) -> Result<ExitCode, CliError> {
    let state = args.cluster.state()?;
    let validation = if args.target.given() {
        let target = args.target.crds("status")?;
        Validation::of(&state, Some((&target.crds, format!("the CRDs of {}", target.chart))))
    } else {
        Validation::of(&state, None)
    };
    let status = crate::cluster::status::status_against(&state, validation);
    match args.format {
        Format::Text => print!("{}", crate::report::status::text(&status)),
        Format::Json => print_json(&status)?,
    }
    // The process ends next: freeing a big cluster's objects one by one took a fifth of
    // `status` over 50,000 TrainJobs (docs/benchmarks.md), and the OS reclaims them at once.
    // A command that reads several clusters in one process must drop each state instead.
    std::mem::forget(state);
    Ok(ExitCode::SUCCESS)
}
