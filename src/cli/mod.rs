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
mod next;
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

use clap::{Parser, Subcommand};

use crate::report::style::ColorChoice;
use chart_source::oci::RegistryError;
use chart_source::pull::PullError;
use chart_source::reference::{ChartRef, OciRef, ReferenceError};

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
    #[error(transparent)]
    Rules(#[from] crate::audit::rules::RuleError),
}

/// Runs the command `cli` holds; `matches` is the invocation as clap parsed it (the command
/// that comes next carries its inputs).
pub fn run(cli: Cli, matches: &clap::ArgMatches) -> Result<ExitCode, CliError> {
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
        Command::Check(args) => check::run(*args, paint(), next::after_check(matches)),
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

/// The repository trainer-audit talks about when the user names none.
pub const DEFAULT_REPOSITORY: &str = "oci://ghcr.io/kubeflow/charts/kubeflow-trainer";
/// Environment variable that replaces [`DEFAULT_REPOSITORY`].
pub const REPOSITORY_ENV: &str = "TRAINER_AUDIT_REPO";

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

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Io(format!("cannot start the async runtime: {e}")))
}

/// Prints a command's report through the one printer ([`crate::report::output::print`]) and
/// returns its exit code.
fn print(
    doc: &dyn crate::report::document::Document,
    choice: &crate::report::output::Choice,
    ctx: &crate::report::document::Context,
) -> Result<ExitCode, CliError> {
    Ok(ExitCode::from(crate::report::output::print(doc, choice, ctx)?))
}

/// The output choice of a command that prints one document in `format` (no `-o`, no `--quiet`).
fn document(
    command: crate::report::format::Command,
    format: crate::report::format::Format,
) -> Result<crate::report::output::Choice, CliError> {
    Ok(crate::report::output::Choice::new(crate::report::output::Flags::document(command, format))?)
}
