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
    Ok(ExitCode::SUCCESS)
}
