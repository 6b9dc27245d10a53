//! `trainer-audit hooks`: the GitOps review of a chart's hooks and CRDs.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::{RegistryArgs, RenderTarget, ValuesArgs};
use super::{fails_at, print_json, CliError};
use crate::audit::finding::Severity;
use crate::audit::gitops::Engine;
use crate::audit::hooks::review;
use crate::upgrade::store::{inventory_of, load_reference};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum HooksFormat {
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Args)]
pub struct HooksArgs {
    /// Chart: oci://host/path/name (with --version), a .tgz, or a chart directory
    #[arg(value_name = "CHART")]
    pub chart: String,
    /// Chart version or range, for oci:// references
    #[arg(long, value_name = "V|RANGE")]
    pub version: Option<String>,
    #[command(flatten)]
    pub values: ValuesArgs,
    #[command(flatten)]
    pub target: RenderTarget,
    /// The engine that deploys the chart; its semantics drive the findings
    #[arg(long, value_enum, default_value_t = Engine::Helm)]
    pub gitops: Engine,
    /// Argo CD version, to say which hook phases it supports (e.g. 3.2.1)
    #[arg(long, value_name = "X.Y.Z")]
    pub argocd_version: Option<String>,
    #[arg(long, value_enum, default_value_t = HooksFormat::Text)]
    pub format: HooksFormat,
    /// Exit 1 when a finding is at or above this severity (default: never)
    #[arg(long, value_enum)]
    pub fail_on: Option<Severity>,
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: HooksArgs) -> Result<ExitCode, CliError> {
    let argocd = crate::audit::hooks::argocd_version(args.gitops, args.argocd_version.as_deref()).map_err(CliError::Usage)?;
    let chart = load_reference(&args.chart, args.version.as_deref(), &args.registry.client_options()?)?;
    let values = args.values.read()?;
    let inventory = inventory_of(&args.chart, &chart, values.merged(), &args.target.release, &args.target.namespace)?;
    let rules = crate::audit::rules::load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
    let report = review(&rules, &inventory, args.gitops, argocd.as_ref(), &args.target.release, &args.target.namespace);
    match args.format {
        HooksFormat::Text => print!("{}", crate::report::hooks::text(&report)),
        HooksFormat::Json => print_json(&report)?,
        HooksFormat::Sarif => print_json(&crate::report::sarif::sarif(&report.findings, &rules))?,
    }
    Ok(fails_at(&report.findings, args.fail_on))
}
