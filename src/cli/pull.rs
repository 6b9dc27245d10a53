//! `trainer-audit pull`: one chart version to `<name>-<version>.tgz`, verified, via the cache.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::RegistryArgs;
use super::{document, oci_reference, print, runtime, CliError};
use crate::cache::{chart_cache, CACHE_DIR_ENV};
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::source::Pulled;
use chart_source::pull::{save_chart, PullError, Puller};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit pull --version 2.3.0\n  trainer-audit pull --version '~2.2' --output-dir charts\n  trainer-audit pull --version 2.3.0 -o trainer.tgz"
)]
pub struct PullArgs {
    /// Chart repository (oci://host/path/name[:tag][@digest]); default $TRAINER_AUDIT_REPO or the Kubeflow Trainer chart
    #[arg(value_name = "REF")]
    pub reference: Option<String>,
    /// Exact version or a range (~2.2, ^2, '>=2.2 <2.4'); default the latest release
    #[arg(long, value_name = "V|RANGE")]
    pub version: Option<String>,
    /// Directory to write <name>-<version>.tgz into (created if missing)
    #[arg(long = "output-dir", value_name = "DIR", default_value = ".")]
    pub output_dir: PathBuf,
    /// Write the archive to this file instead (its directory must exist; an existing file is replaced)
    #[arg(short = 'o', long = "output", value_name = "FILE", conflicts_with = "output_dir")]
    pub output: Option<PathBuf>,
    /// Use only the local cache; no network
    #[arg(long)]
    pub offline: bool,
    #[arg(long, value_parser = Command::Pull.format_parser(), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: PullArgs) -> Result<ExitCode, CliError> {
    let reference = oci_reference(args.reference.as_deref(), "pull")?;
    let puller = Puller {
        client_options: args.registry.client_options()?,
        cache: chart_cache(),
        offline: args.offline,
        progress: std::io::stderr().is_terminal() || std::env::var_os("TRAINER_AUDIT_PROGRESS").is_some(),
    };
    if args.output_dir.is_file() {
        return Err(CliError::Usage(format!(
            "--output-dir {} is a file, not a directory: name a directory, or write the archive to a file with -o FILE",
            args.output_dir.display()
        )));
    }
    let chart = runtime()?.block_on(puller.pull(&reference, args.version.as_deref())).map_err(|e| match e {
        PullError::NoCache => CliError::Usage(format!("{e}: set {CACHE_DIR_ENV} or HOME")),
        e => CliError::Pull(e),
    })?;
    let path = match &args.output {
        Some(file) => {
            chart_source::atomic_write::write_atomically(file, &chart.bytes).map_err(|e| CliError::Io(e.to_string()))?;
            file.clone()
        }
        None => save_chart(&args.output_dir, &chart)?,
    };
    print(&Pulled { path: path.display().to_string(), chart: &chart }, &document(Command::Pull, args.format)?, &Context::default())
}
