//! `trainer-audit status`: what is installed.

use std::process::ExitCode;

use clap::Args;

use super::args::ClusterArgs;
use super::{print_json, CliError, Format};

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: StatusArgs) -> Result<ExitCode, CliError> {
    let state = args.cluster.state()?;
    let status = crate::cluster::status::status(&state);
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
