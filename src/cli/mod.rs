//! The command line: clap types, one small module per subcommand (glue only), and the mapping
//! of outcomes to exit codes (0 clean, 1 findings at or above `--fail-on`, 2 the run failed).

mod args;
mod check;
mod completions;
mod diff;
mod fleet;
mod gitops;
mod hooks;
mod man;
mod migrate;
mod plan;
mod pull;
mod rbac;
mod render;
mod rules;
mod runbook;
mod schema;
mod snapshot;
mod status;
mod versions;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::report::style::ColorChoice;
use chart_source::oci::RegistryError;
use chart_source::pull::PullError;
use chart_source::reference::{ChartRef, OciRef, ReferenceError, DEFAULT_REPOSITORY, REPOSITORY_ENV};

#[derive(Debug, Parser)]
#[command(
    name = "trainer-audit",
    version,
    about = "Pre-upgrade readiness audits for Kubeflow Trainer Helm installs",
    long_about = "Pre-upgrade readiness audits for Kubeflow Trainer Helm installs.\n\n\
Exit codes: 0 clean, 1 findings at or above --fail-on, 2 the run itself failed (bad input, unreachable registry or cluster).",
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour in text output: auto (a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the chart versions a repository holds, newest first
    Versions(versions::VersionsArgs),
    /// Download one chart version as <name>-<version>.tgz, verified by digest
    Pull(pull::PullArgs),
    /// Render a chart exactly as `helm template` (Helm v4.2.3) prints it
    Render(Box<render::RenderArgs>),
    /// Review a chart's hooks and CRDs for Helm, Argo CD, Flux or kustomize
    Hooks(Box<hooks::HooksArgs>),
    /// Compare two chart versions: CRDs, schemas, runtimes, values, RBAC, images, hooks
    Diff(Box<diff::DiffArgs>),
    /// Show what is installed: method, version, Helm release, CRDs, runtimes, TrainJobs
    Status(Box<status::StatusArgs>),
    /// Save what the audit reads from a cluster as one List (read-only)
    Snapshot(Box<snapshot::SnapshotArgs>),
    /// Print the least-privilege ClusterRole and binding trainer-audit needs
    Rbac(rbac::RbacArgs),
    /// Pre-upgrade readiness gate: findings for upgrading this cluster's Trainer to --to
    Check(Box<check::CheckArgs>),
    /// The stepwise upgrade path (2.0/2.1/2.2 go through the latest 2.3.x first)
    Plan(Box<plan::PlanArgs>),
    /// A Markdown runbook for the change, with this cluster's names filled in
    Runbook(Box<runbook::RunbookArgs>),
    /// List the rules
    Rules(rules::RulesArgs),
    /// Explain one rule
    Explain(rules::ExplainArgs),
    /// Convert objects the target Trainer API would reject or strip (2.1 → 2.2+, or --legacy PyTorchJobs)
    Migrate(Box<migrate::MigrateArgs>),
    /// Audit the Kubeflow Trainer references of a GitOps tree (with a base: what a change adds or changes)
    Gitops(Box<gitops::GitopsArgs>),
    /// Print the JSON Schema (2020-12) of a JSON report
    Schema(schema::SchemaArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write one per command with --output-dir DIR
    Man(man::ManArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Why a run failed; always exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Pull(#[from] PullError),
    #[error("{0}")]
    Usage(String),
    /// A render failure, worded as Helm words it.
    #[error("{0}")]
    Render(String),
    #[error("{0}")]
    Io(String),
    /// The cluster could not be read.
    #[error("{0}")]
    Cluster(String),
    #[error(transparent)]
    Upgrade(#[from] crate::upgrade::UpgradeError),
    #[error(transparent)]
    Values(#[from] crate::upgrade::values::ValuesError),
    #[error(transparent)]
    Output(#[from] crate::report::output::OutputError),
}

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    let paint = || cli.color.paint_stdout();
    match cli.command {
        Command::Versions(args) => versions::run(args),
        Command::Pull(args) => pull::run(args),
        Command::Render(args) => render::run(*args),
        Command::Hooks(args) => hooks::run(*args),
        Command::Diff(args) => diff::run(*args),
        Command::Status(args) => status::run(*args, paint()),
        Command::Snapshot(args) => snapshot::run(*args),
        Command::Rbac(args) => rbac::run(args),
        Command::Check(args) => check::run(*args, paint()),
        Command::Plan(args) => plan::run(*args, paint()),
        Command::Runbook(args) => runbook::run(*args),
        Command::Rules(args) => rules::list(args),
        Command::Explain(args) => rules::explain(args),
        Command::Migrate(args) => migrate::run(*args),
        Command::Gitops(args) => gitops::run(*args),
        Command::Schema(args) => schema::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    }
}

/// The repository argument, `$TRAINER_AUDIT_REPO`, or the published Trainer repository; it must
/// be an OCI reference.
fn oci_reference(input: Option<&str>, command: &str) -> Result<OciRef, CliError> {
    let from_env = std::env::var(REPOSITORY_ENV).ok().filter(|s| !s.is_empty());
    let text = input.map(str::to_string).or(from_env).unwrap_or_else(|| DEFAULT_REPOSITORY.to_string());
    match ChartRef::parse(&text)? {
        ChartRef::Oci(reference) => Ok(reference),
        _ => Err(CliError::Usage(format!("{command} needs an oci:// repository, and '{text}' is a local path"))),
    }
}

/// Exit 1 when any finding is at or above `fail_on`, else 0 (`audit::verdict::fails`).
fn fails_at(findings: &[crate::audit::finding::Finding], fail_on: Option<crate::audit::finding::Severity>) -> ExitCode {
    ExitCode::from(u8::from(crate::audit::verdict::fails(findings, fail_on)))
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Io(format!("cannot start the async runtime: {e}")))
}

/// A JSON report with its `schemaVersion` first (`trainer-audit schema REPORT` describes it).
fn print_report(report: crate::report::json_schema::Report, value: &impl serde::Serialize) -> Result<(), CliError> {
    print_json(&crate::report::json_schema::stamped(report, value).map_err(|e| CliError::Io(e.to_string()))?)
}

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Io(e.to_string()))?;
    println!("{text}");
    Ok(())
}
