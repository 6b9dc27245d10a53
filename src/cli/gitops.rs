//! `trainer-audit gitops DIR [--base DIR | --base-ref REV]`: the GitOps review of the Kubeflow
//! Trainer references a tree holds (with a base, of those the change adds or changes), or with
//! `--list` only the references and changes. Glue only: scanning, comparing and auditing are
//! `crate::gitops_review::run`, printing `crate::report::gitops`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::{ClusterArgs, RegistryArgs};
use super::{print, CliError};
use crate::audit::finding::Severity;
use crate::audit::rules::RuleSet;
use crate::gitops_review::{Base, ReviewError, ReviewOptions};
use crate::report::document::Context;
use crate::report::findings::Detail;
use crate::report::format::{Command, Format};
use crate::report::gitops::GitopsDocument;
use crate::report::output::{Choice, Flags};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit gitops . --base-ref origin/main --format markdown\n  trainer-audit gitops clusters/prod --snapshot prod.yaml --fail-on warning\n  trainer-audit gitops . --list"
)]
pub struct GitopsArgs {
    /// Root of a checkout of the GitOps repository (Flux, Argo CD or kustomize YAML)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Another checkout to compare against (the target branch of a pull request, say)
    #[arg(long, value_name = "DIR", conflicts_with = "base_ref")]
    pub base: Option<PathBuf>,
    /// Compare against DIR as it is at this git revision (needs git)
    #[arg(long, value_name = "REV")]
    pub base_ref: Option<String>,
    /// Only list the references (and, with a base, what changed); no chart is pulled
    #[arg(long)]
    pub list: bool,
    /// Output format (markdown: a pull-request comment, summary first, details folded; sarif,
    /// github: located at the GitOps files' lines)
    #[arg(long, value_parser = Command::Gitops.format_parser(), default_value = "text")]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity (with warning or info, also when a
    /// reference cannot be audited)
    #[arg(long, value_enum, default_value_t = Severity::Error)]
    pub fail_on: Severity,
    /// Take chart versions from this directory of chart archives or directories instead of
    /// pulling them from each reference's repository
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// Text: every finding with its evidence, chart file and sources; with --list, also the chart
    /// references that are not Kubeflow Trainer's
    #[arg(long, short)]
    pub verbose: bool,
    /// Print only the verdict line (the exit code still follows --fail-on)
    #[arg(long, short = 'q', conflicts_with_all = ["format", "list"])]
    pub quiet: bool,
    /// Add the cluster checks of `check` for this cluster (with --snapshot, --context or
    /// --kubeconfig; none is read otherwise)
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: GitopsArgs) -> Result<ExitCode, CliError> {
    if args.list && !matches!(args.format, Format::Text | Format::Json) {
        return Err(CliError::Usage("--list prints text or json: drop --format or --list".into()));
    }
    let base = match (&args.base, &args.base_ref) {
        (Some(dir), _) => Some(Base::Dir(dir.clone())),
        (None, Some(rev)) => Some(Base::Revision(rev.clone())),
        (None, None) => None,
    };
    let rules = RuleSet::load(args.rules.as_deref())?;
    let options = ReviewOptions {
        charts_dir: args.charts.clone(),
        registry: args.registry.client_options()?,
        rules: rules.clone(),
        cluster: None,
        fail_on: args.fail_on,
    };
    let wants_cluster = args.cluster.snapshot.is_some() || args.cluster.context.is_some() || args.cluster.kubeconfig.is_some();
    let cluster = || if wants_cluster { args.cluster.state().map(Some).map_err(|e| e.to_string()) } else { Ok(None) };
    let outcome = crate::gitops_review::run(&args.dir, base.as_ref(), args.list, cluster, options).map_err(|e| match e {
        ReviewError::Tree(e) => CliError::Usage(e.to_string()),
        other => CliError::Cluster(other.to_string()),
    })?;
    let choice = Choice::new(Flags {
        quiet: args.quiet,
        fail_on: Some(args.fail_on),
        verbose: args.verbose,
        ..Flags::document(Command::Gitops, args.format)
    })?;
    let ctx = Context { detail: Detail::of(args.verbose), fail_on: Some(args.fail_on), rules: Some(rules), ..Context::default() };
    let repo_prefix = crate::gitops_review::repo_prefix(&args.dir);
    print(&GitopsDocument { outcome: &outcome, root: &args.dir, repo_prefix }, &choice, &ctx)
}
