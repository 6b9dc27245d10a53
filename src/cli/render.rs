//! `trainer-audit render`: `helm template` output for a chart reference, with Helm's flags.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::{RegistryArgs, RenderTarget, ValuesArgs};
use super::CliError;
use crate::report::render::{show_only, write_dir, Parts};
use crate::upgrade::store::load_reference;
use helm_render::render::{render_chart, RenderOptions};
use kube_version::KubeVersion;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit render oci://ghcr.io/kubeflow/charts/kubeflow-trainer --version 2.3.0\n  trainer-audit render kubeflow-trainer-2.3.0.tgz --show-only templates/manager/deployment.yaml\n  trainer-audit render kubeflow-trainer-2.3.0.tgz --include-crds --output-dir rendered"
)]
pub struct RenderArgs {
    /// Chart: oci://host/path/name (with --version), a .tgz, or a chart directory
    #[arg(value_name = "CHART")]
    pub chart: String,
    /// Chart version or range, for oci:// references
    #[arg(long, value_name = "V|RANGE")]
    pub version: Option<String>,
    #[command(flatten)]
    pub values: ValuesArgs,
    /// The release the chart is rendered as (as `hooks` and `diff` render it: kubeflow-trainer in
    /// kubeflow-system; `helm template`'s defaults are `--release release-name -n default`)
    #[command(flatten)]
    pub target: RenderTarget,
    /// Render as an upgrade (.Release.IsUpgrade)
    #[arg(long)]
    pub is_upgrade: bool,
    /// Kubernetes version for .Capabilities (default v1.36.0, as Helm v4.2.3)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Extra API versions for .Capabilities.APIVersions (repeatable, comma-separated)
    #[arg(long = "api-versions", short = 'a', value_name = "VERSION", value_delimiter = ',')]
    pub api_versions: Vec<String>,
    /// Print the chart's crds/ files first
    #[arg(long)]
    pub include_crds: bool,
    /// Leave hooks out
    #[arg(long)]
    pub no_hooks: bool,
    /// Leave test hooks out
    #[arg(long)]
    pub skip_tests: bool,
    /// Only print documents from templates matching PATTERN (repeatable)
    #[arg(long, short = 's', value_name = "PATTERN")]
    pub show_only: Vec<String>,
    /// Write each template's documents under DIR instead of printing them
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: RenderArgs) -> Result<ExitCode, CliError> {
    let chart = load_reference(&args.chart, args.version.as_deref(), &args.registry.client_options()?)?;
    let kube_version = match &args.kube_version {
        Some(v) => {
            Some(KubeVersion::parse(v).map_err(|_| CliError::Usage(format!("invalid kube version {v:?}: expected MAJOR.MINOR[.PATCH]")))?)
        }
        None => None,
    };
    let mut options = RenderOptions {
        values: args.values.read()?.merged().clone(),
        kube_version,
        api_versions: args.api_versions.clone(),
        ..RenderOptions::default()
    };
    options.release.name = args.target.release.clone();
    options.release.namespace = args.target.namespace.clone();
    options.release.is_upgrade = args.is_upgrade;
    let rendered = render_chart(&chart, &options).map_err(|e| CliError::Render(e.0))?;
    for w in &rendered.warnings {
        eprintln!("{w}");
    }
    let parts = Parts { crds: args.include_crds, hooks: !args.no_hooks, tests: !args.skip_tests };
    if let Some(dir) = &args.output_dir {
        for path in write_dir(&rendered, dir, parts).map_err(|e| CliError::Usage(e.to_string()))? {
            println!("wrote {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let text = rendered.template_output(args.include_crds, args.no_hooks, args.skip_tests);
    let text =
        if args.show_only.is_empty() { text } else { show_only(&text, &args.show_only).map_err(|e| CliError::Usage(e.to_string()))? };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
