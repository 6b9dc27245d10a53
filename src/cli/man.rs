//! `trainer-audit man [--output-dir DIR]`: man pages generated from the clap definitions — the main
//! page on standard output, or with `--output-dir` one page per command (`trainer-audit.1`,
//! `trainer-audit-check.1`, …) written into DIR, each whole or not at all.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory};

use super::{Cli, CliError};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  trainer-audit man | man -l -\n  trainer-audit man --output-dir /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Write every page into this existing directory instead of printing the main page
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Every page as (file name, roff), the main one first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    fn walk(cmd: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<(), std::io::Error> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), roff));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            walk(sub, pages)?;
        }
        Ok(())
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Built, subcommands get their display names (`trainer-audit-check`), which name the files.
    cmd.build();
    let mut pages = Vec::new();
    walk(cmd, &mut pages)?;
    Ok(pages)
}

pub fn run(args: ManArgs) -> Result<ExitCode, CliError> {
    let pages = pages().map_err(|e| CliError::Io(format!("cannot render the man pages: {e}")))?;
    match &args.output {
        None => {
            let main = pages.first().map(|(_, roff)| roff.as_slice()).unwrap_or_default();
            std::io::Write::write_all(&mut std::io::stdout().lock(), main)
                .map_err(|e| CliError::Io(format!("cannot write the man page to standard output: {e}")))?;
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(CliError::Usage(format!("man -o {}: not a directory (create it first)", dir.display())));
            }
            for (name, roff) in &pages {
                let path = dir.join(name);
                chart_source::atomic_write::write_atomically_readable(&path, roff).map_err(|e| CliError::Io(e.to_string()))?;
            }
            eprintln!("wrote {} man pages into {}", pages.len(), dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
