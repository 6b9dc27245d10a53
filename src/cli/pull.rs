//! `trainer-audit pull`: one chart version to `<name>-<version>.tgz`, verified, via the cache.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::RegistryArgs;
use super::{oci_reference, print_json, runtime, CliError, Format};
use chart_source::cache::Cache;
use chart_source::pull::{save_chart, Puller};

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
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(serde::Serialize)]
struct PullReport<'a> {
    path: String,
    #[serde(flatten)]
    chart: &'a chart_source::pull::PulledChart,
}

pub fn run(args: PullArgs) -> Result<ExitCode, CliError> {
    let reference = oci_reference(args.reference.as_deref(), "pull")?;
    let puller = Puller {
        client_options: args.registry.client_options()?,
        cache: Cache::from_env(),
        offline: args.offline,
        progress: std::io::stderr().is_terminal() || std::env::var_os("TRAINER_AUDIT_PROGRESS").is_some(),
    };
    if args.output_dir.is_file() {
        return Err(CliError::Usage(format!(
            "--output-dir {} is a file, not a directory: name a directory, or write the archive to a file with -o FILE",
            args.output_dir.display()
        )));
    }
    let chart = runtime()?.block_on(puller.pull(&reference, args.version.as_deref()))?;
    let path = match &args.output {
        Some(file) => {
            chart_source::atomic_write::write_atomically(file, &chart.bytes).map_err(|e| CliError::Io(e.to_string()))?;
            file.clone()
        }
        None => save_chart(&args.output_dir, &chart)?,
    };
    match args.format {
        Format::Json => print_json(&PullReport { path: path.display().to_string(), chart: &chart })?,
        Format::Text => {
            println!("{}", path.display());
            println!("  chart:    {} {}", chart.name, chart.version);
            println!("  layer:    {}", chart.layer_digest);
            println!("  manifest: {}", chart.manifest_digest);
            println!("  from:     {}{}", chart.reference, if chart.cached { " (cache)" } else { "" });
        }
    }
    Ok(ExitCode::SUCCESS)
}
