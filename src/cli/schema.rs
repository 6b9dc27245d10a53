//! `trainer-audit schema REPORT`: print the JSON Schema (2020-12) of a JSON report, or with
//! `--list` the reports and their `schemaVersion`. Glue only: the schemas are
//! `crate::report::json_schema`.

use std::process::ExitCode;

use clap::Args;

use super::CliError;
use crate::report::json_schema::{Report, ALL};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  trainer-audit schema check > check.schema.json\n  trainer-audit schema --list")]
pub struct SchemaArgs {
    /// The report whose schema to print
    #[arg(value_enum, required_unless_present = "list")]
    pub report: Option<Report>,
    /// List the reports and the schemaVersion each carries
    #[arg(long, conflicts_with = "report")]
    pub list: bool,
}

pub fn run(args: SchemaArgs) -> Result<ExitCode, CliError> {
    match args.report {
        Some(report) => print!("{}", report.schema()),
        None => {
            for r in ALL {
                println!("{:<8} {}", r.name(), r.version().unwrap_or("- (a Kubernetes v1 List)"));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
