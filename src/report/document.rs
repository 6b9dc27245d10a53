//! What every command's report is to the printer ([`Document`]): how it renders in each format
//! its command offers, the decision its exit code follows, its `--quiet` line, what a GitHub
//! job appends to its step summary and what goes to standard error beside it; the print-time
//! choices a renderer reads ([`Context`]); and the one error of printing ([`OutputError`]).
//! The printer (`report::output`) does the rest once for every command: where the text goes,
//! the file's mode, the step summary, the exit code.

use std::path::PathBuf;

use super::findings::Detail;
use super::format::{Command, Format};
use super::json_schema::{stamped, Report as SchemaReport};
use super::style::Paint;
use crate::audit::finding::Severity;
use crate::audit::rules::RuleSet;
use crate::audit::verdict::Decision;
use crate::cluster::source::Source;

/// A command's report, as the printer prints it.
pub trait Document {
    /// The report in `format`, one its command offers.
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError>;

    /// The decision the exit code follows (None: the command decides nothing and exits 0).
    fn decision(&self, _ctx: &Context) -> Option<Decision> {
        None
    }

    /// The one line `--quiet` prints: the decision's.
    fn quiet_line(&self, ctx: &Context) -> Option<String> {
        self.decision(ctx).map(|d| d.line())
    }

    /// What a GitHub Actions job appends to its step summary (None: nothing).
    fn step_summary(&self, _ctx: &Context) -> Option<String> {
        None
    }

    /// What goes to standard error beside the report in `format` (an account of what was done).
    fn account(&self, _format: Format, _ctx: &Context) -> Option<String> {
        None
    }

    /// Whether a file written with `-o` holds what only its owner should read (cluster objects,
    /// release values: `migrate`'s List; `snapshot` writes 0600 too): written 0600; else 0644, a
    /// report others read, serve or collect (pages, metrics, runbooks).
    fn private(&self) -> bool {
        false
    }
}

/// The files the user gave a run: where SARIF results and annotations are placed.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// `-f/--values` files.
    pub values: Vec<PathBuf>,
    /// A local target chart (`--chart`).
    pub chart: Option<PathBuf>,
    /// The snapshot the one cluster was read from.
    pub snapshot: Option<PathBuf>,
}

/// How the printer was asked to print: what renderers read besides the report.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub paint: Paint,
    /// Text: the short answer or every finding in full (`--verbose`).
    pub detail: Detail,
    /// `--fail-on` as given (None: the command's default).
    pub fail_on: Option<Severity>,
    /// The rules the run audited with (SARIF describes those that fired; None: a command that
    /// runs none).
    pub rules: Option<RuleSet>,
    pub given: Given,
    /// The name the one cluster goes by on a page and in metrics, and when it was read (Unix
    /// seconds).
    pub cluster: Option<String>,
    pub read_at: Option<i64>,
    /// Where the one cluster was read from (its flags go into the next command).
    pub source: Option<Source>,
    /// The command that comes next (`check` → the runbook), with the run's inputs.
    pub next: Option<NextCommand>,
}

/// The command that comes after this one, with every input the user gave it but the cluster
/// selection (each cluster's own is added): `trainer-audit runbook … -o runbook.md` after `check`.
#[derive(Debug, Clone, Default)]
pub struct NextCommand {
    /// The program and subcommand (`trainer-audit runbook`, `kubectl trainer-audit runbook`).
    pub program: Vec<String>,
    /// The inputs, flag by flag, unquoted.
    pub inputs: Vec<String>,
    /// What goes after the cluster's flags (`-o runbook.md`).
    pub tail: Vec<String>,
}

impl NextCommand {
    /// The command for the cluster read from `source`, every word quoted for a shell.
    pub fn for_cluster(&self, source: Option<&Source>) -> String {
        let mut words: Vec<String> = self.program.clone();
        words.extend(self.inputs.iter().cloned());
        match source {
            Some(Source::Snapshot { path }) => words.extend(["--snapshot".to_string(), path.display().to_string()]),
            Some(Source::Live { kubeconfig, context }) => {
                if let Some(k) = kubeconfig {
                    words.extend(["--kubeconfig".to_string(), k.display().to_string()]);
                }
                if let Some(c) = context {
                    words.extend(["--context".to_string(), c.clone()]);
                }
            }
            None => {}
        }
        words.extend(self.tail.iter().cloned());
        crate::shell::join(words.iter().map(String::as_str))
    }
}

impl Context {
    /// The run's rules (none for a command that runs none).
    pub fn rules(&self) -> &[crate::audit::rules::Rule] {
        self.rules.as_deref().unwrap_or(&[])
    }

    /// The command that comes next for the one cluster, ready to copy.
    pub fn next_command(&self) -> Option<String> {
        self.next.as_ref().map(|n| n.for_cluster(self.source.as_ref()))
    }

    /// The one cluster's name (`current-context` when none was recorded).
    pub fn cluster_name(&self) -> &str {
        self.cluster.as_deref().unwrap_or("current-context")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The flags ask for an output that does not exist; exit 2 before anything is read.
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Write(String),
    /// The one cluster of a single-cluster run could not be read or audited: the run's failure.
    #[error("{0}")]
    Cluster(String),
    /// `render --show-only` names a template the chart does not have.
    #[error("could not find template {0} in chart")]
    NoTemplate(String),
    /// `render --output-dir`: a template path that leaves the directory.
    #[error("refusing to write outside {dir}: {path}")]
    Outside { dir: String, path: String },
}

/// A format the command does not offer (its `--format` parser refuses it first).
pub fn unoffered(command: Command, format: Format) -> OutputError {
    OutputError::Usage(format!("{} does not print --format {}", command.name(), format.name()))
}

/// `value` as indented JSON, ending in a newline.
pub fn pretty(value: &(impl serde::Serialize + ?Sized)) -> Result<String, OutputError> {
    serde_json::to_string_pretty(value).map(|t| t + "\n").map_err(|e| OutputError::Write(e.to_string()))
}

/// A JSON report with its `schemaVersion` first.
pub fn json_report(report: SchemaReport, value: &impl serde::Serialize) -> Result<String, OutputError> {
    pretty(&stamped(report, value).map_err(|e| OutputError::Write(e.to_string()))?)
}
