//! `trainer-audit completions SHELL`: a completion script for the shell, generated from the
//! clap definitions (so it never falls behind the flags).

use std::process::ExitCode;

use clap::{Args, CommandFactory};

use super::{Cli, CliError};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit completions bash > ~/.local/share/bash-completion/completions/trainer-audit\n  trainer-audit completions zsh > ~/.zfunc/_trainer-audit"
)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: CompletionsArgs) -> Result<ExitCode, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "trainer-audit", &mut script);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script)
        .map_err(|e| CliError::Io(format!("cannot write the completion script to standard output: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
