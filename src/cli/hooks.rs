//! `trainer-audit hooks`: the GitOps review of a chart's hooks and CRDs.

use std::process::ExitCode;

use clap::Args;

use super::args::{RegistryArgs, RenderTarget, ValuesArgs};
use super::{print, CliError};
use crate::audit::finding::Severity;
use crate::audit::hooks::review;
use crate::audit::rules::RuleSet;
use crate::engine::Engine;
use crate::report::document::Context;
use crate::report::findings::Detail;
use crate::report::format::{Command, Format};
use crate::report::output::{Choice, Flags};
use crate::upgrade::store::{inventory_of, load_reference};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit hooks oci://ghcr.io/kubeflow/charts/kubeflow-trainer --version 2.3.0\n  trainer-audit hooks trainer-2.3.0.tgz --engine argocd --argocd-version 3.2.1 --fail-on error\n  trainer-audit hooks kubeflow-trainer-2.3.0.tgz --engine flux --format sarif > hooks.sarif"
)]
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
    /// The engine that deploys the chart (helm, argocd, flux or kustomize); its semantics drive the findings
    #[arg(long, value_enum, default_value_t = Engine::Helm, value_name = "ENGINE")]
    pub engine: Engine,
    /// The old name of --engine (deprecated: helm is not a GitOps engine)
    #[arg(long, value_enum, hide = true, conflicts_with = "engine", value_name = "ENGINE")]
    pub gitops: Option<Engine>,
    /// Argo CD version, to say which hook phases it supports (e.g. 3.2.1)
    #[arg(long, value_name = "X.Y.Z")]
    pub argocd_version: Option<String>,
    #[arg(long, value_parser = Command::Hooks.format_parser(), default_value = "text")]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity (default: never)
    #[arg(long, value_enum)]
    pub fail_on: Option<Severity>,
    /// Print only the verdict line, in check's words (against --fail-on, or error when it is not
    /// given; the exit code still follows --fail-on)
    #[arg(long, short = 'q', conflicts_with_all = ["format", "verbose"])]
    pub quiet: bool,
    /// Text: every finding with its evidence, the failures it predicts and its sources
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: HooksArgs) -> Result<ExitCode, CliError> {
    let engine = match args.gitops {
        Some(engine) => {
            eprintln!("warning: --gitops is deprecated: use --engine {}", engine.as_str());
            engine
        }
        None => args.engine,
    };
    let argocd = crate::audit::hooks::argocd_version(engine, args.argocd_version.as_deref()).map_err(CliError::Usage)?;
    let chart = load_reference(&args.chart, args.version.as_deref(), &args.registry.client_options()?)?;
    let values = args.values.read()?;
    let inventory = inventory_of(&args.chart, &chart, values.merged(), &args.target.release, &args.target.namespace)?;
    let rules = RuleSet::load(args.rules.as_deref())?;
    let report = review(&rules, &inventory, engine, argocd.as_ref(), &args.target.release, &args.target.namespace);
    let choice = Choice::new(Flags {
        quiet: args.quiet,
        fail_on: args.fail_on,
        verbose: args.verbose,
        ..Flags::document(Command::Hooks, args.format)
    })?;
    let ctx = Context { detail: Detail::of(args.verbose), fail_on: args.fail_on, rules: Some(rules), ..Context::default() };
    print(&report, &choice, &ctx)
}
