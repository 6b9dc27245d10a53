//! The `trainer-audit` binary: parse arguments, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use trainer_audit::cli::{run, Cli};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap: help/version exit 0, usage errors 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
