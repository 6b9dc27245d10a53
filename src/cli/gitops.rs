//! `trainer-audit gitops DIR [--base DIR | --base-ref REV]`: the GitOps review of the Kubeflow
//! Trainer references a tree holds (with a base, of those the change adds or changes), or with
//! `--list` only the references and changes. Glue only: reading is `crate::gitops`, auditing
//! `crate::gitops_review`, rendering `crate::report::gitops*`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::{ClusterArgs, RegistryArgs};
use super::{print_json, print_report, CliError};
use crate::audit::finding::Severity;
use crate::gitops::{self, compare, GitopsError};
use crate::gitops_review::{review, ReviewError, ReviewOptions};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum GitopsFormat {
    Text,
    Json,
    /// A pull-request comment: summary table first, details folded
    Markdown,
    /// SARIF 2.1.0 for code scanning, located at the GitOps files' lines
    Sarif,
    /// GitLab Code Quality report
    Codequality,
    /// GitHub workflow commands: each finding as an annotation at its file and line
    Github,
}

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
    #[arg(long, value_enum, default_value_t = GitopsFormat::Text)]
    pub format: GitopsFormat,
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
    if args.list && !matches!(args.format, GitopsFormat::Text | GitopsFormat::Json) {
        return Err(CliError::Usage("--list prints text or json: drop --format or --list".into()));
    }
    let head = gitops::scan_dir(&args.dir).map_err(error)?;
    let base = match (&args.base, &args.base_ref) {
        (Some(dir), _) => Some(gitops::scan_dir(dir).map_err(error)?),
        (None, Some(rev)) => Some(gitops::scan_git(&args.dir, rev).map_err(error)?),
        (None, None) => None,
    };
    let comparison = base.as_ref().map(|b| compare::compare(b, &head));
    if args.list {
        return list(&args, &head, comparison.as_ref());
    }
    gitops::require_trainer_references(&args.dir, &head, base.as_ref()).map_err(error)?;
    let wants_cluster = args.cluster.snapshot.is_some() || args.cluster.context.is_some() || args.cluster.kubeconfig.is_some();
    let options = ReviewOptions {
        charts_dir: args.charts.clone(),
        registry: args.registry.client_options()?,
        rules: args.rules.clone(),
        cluster: if wants_cluster { Some(args.cluster.state()?) } else { None },
        fail_on: args.fail_on,
    };
    let pair = base.as_ref().zip(comparison.as_ref());
    let result = review(&head, pair, &options).map_err(|e| match e {
        ReviewError::Rules(m) => CliError::Usage(m),
        other => CliError::Cluster(other.to_string()),
    })?;
    match args.format {
        _ if args.quiet => println!("{}", result.decision().line()),
        GitopsFormat::Text => print!("{}", crate::report::gitops::text_detailed(&result, super::check::detail(args.verbose))),
        GitopsFormat::Markdown => print!("{}", crate::report::gitops::markdown(&result)),
        GitopsFormat::Json => print_report(
            crate::report::json_schema::Report::Gitops,
            &crate::report::gitops::json(&result).map_err(|e| CliError::Io(e.to_string()))?,
        )?,
        GitopsFormat::Sarif => {
            let mut rules = crate::audit::rules::load(args.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
            // An id the review pack shares with the upgrade rules is described in the review's
            // words (the engine-aware ones).
            rules.sort_by_key(|r| r.scope != crate::audit::rules::Scope::Review);
            print_json(&crate::report::gitops_sarif::sarif(&result, &rules, &args.dir))?
        }
        GitopsFormat::Codequality => print_json(&crate::report::gitops_sarif::codequality(&result))?,
        GitopsFormat::Github => print!("{}", crate::report::github::gitops_commands(&result, &args.dir)),
    }
    crate::report::github::step_summary(|| crate::report::github::gitops_summary(&result));
    Ok(if result.fails() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn list(args: &GitopsArgs, head: &gitops::Scan, comparison: Option<&compare::Comparison>) -> Result<ExitCode, CliError> {
    match args.format {
        GitopsFormat::Json => print_json(&serde_json::json!({ "scan": head, "comparison": comparison }))?,
        _ => {
            let mut out = gitops::text::scan(head, args.verbose);
            if let Some(c) = comparison {
                out.push('\n');
                out.push_str(&gitops::text::comparison(c));
            }
            print!("{out}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn error(e: GitopsError) -> CliError {
    match e {
        GitopsError::Input(m) | GitopsError::TooLarge(m) | GitopsError::Git(m) => CliError::Usage(m),
    }
}
