//! The `trainer-audit` binary: parse arguments, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use trainer_audit::cli::{run, Cli};

fn main() -> ExitCode {
    end_quietly_on_a_closed_stdout();
    // As a kubectl or Helm plugin, help says `kubectl trainer-audit …` and Helm's flags come back.
    let (host, args) = trainer_audit::invocation::arguments();
    let command = Cli::command().bin_name(host.program());
    let parsed =
        command.try_get_matches_from(std::iter::once(host.program().into()).chain(args)).and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            // clap: help/version exit 0, usage errors 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli, &matches) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A reader that stops early (`| head -1`) closes the pipe: the next write then ends the process
/// by SIGPIPE, quietly, as it ends `cat` or `grep`. Rust starts programs with SIGPIPE ignored, so
/// every write would fail with EPIPE instead and `print!` would panic.
fn end_quietly_on_a_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any thread starts; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
