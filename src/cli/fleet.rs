//! The cluster flags of `status`, `check` and `plan` (one cluster or a fleet), and the glue that
//! runs a fleet: members from the flags, a bounded concurrent read, each cluster audited as it
//! arrives, output in input order (summary first for text; JSON Lines and `--quiet` verdict lines
//! streamed), and the worst cluster's exit code.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::{assumed_kube_version, ClusterArgs};
use super::CliError;
use crate::fleet::audit::{exit_code, Auditor, Job, Row};
use crate::fleet::members::Selection;
use crate::fleet::read::{read_all, read_member};
use crate::fleet::spool::Spool;
use crate::report::fleet::{json_line, section, summary, verdict_line};
use crate::report::style::Paint;

#[derive(Debug, Args, Clone, Default)]
pub struct FleetArgs {
    /// Snapshot file, or a directory of them (repeatable; several make a fleet)
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["context", "kubeconfig", "all_contexts"])]
    pub snapshot: Vec<PathBuf>,
    /// Kubeconfig context (repeatable; default: the current context; in a pod, the in-cluster config)
    #[arg(long, value_name = "NAME")]
    pub context: Vec<String>,
    /// Every context of the kubeconfig, as a fleet
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
    /// Kubeconfig file, or a directory of them: a fleet, one cluster per file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE|DIR")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubernetes version to assume when a snapshot does not record one (e.g. 1.33)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Clusters read at once in a fleet; memory grows with it (about one cluster's objects each)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
}

impl FleetArgs {
    pub(super) fn selection(&self) -> Selection {
        Selection {
            snapshots: self.snapshot.clone(),
            contexts: self.context.clone(),
            all_contexts: self.all_contexts,
            kubeconfig: self.kubeconfig.clone(),
        }
    }

    /// True when the flags may name several clusters (the output is a fleet's).
    pub fn is_fleet(&self) -> bool {
        self.selection().is_fleet()
    }

    /// The one cluster of a run that is not a fleet's.
    pub fn single(&self) -> ClusterArgs {
        ClusterArgs {
            snapshot: self.snapshot.first().cloned(),
            context: self.context.first().cloned(),
            kubeconfig: self.kubeconfig.clone(),
            kube_version: self.kube_version.clone(),
        }
    }
}

/// How a fleet run prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The summary table, then each cluster's text report.
    Text,
    /// One JSON document per cluster and line, streamed in input order.
    JsonLines,
    /// One verdict line per cluster, streamed in input order.
    Quiet,
}

/// Runs `job` on every cluster the flags name.
pub fn run(job: Job, args: &FleetArgs, output: Output, paint: Paint) -> Result<ExitCode, CliError> {
    let members = args.selection().members().map_err(|e| CliError::Usage(e.to_string()))?;
    let kube_version = args.kube_version.as_deref().map(assumed_kube_version).transpose()?;
    let command = job.name();
    let auditor = Auditor::new(job);
    // What every cluster shares (rules, the target in the repository) fails the run, not a cluster.
    auditor.prepare()?;
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = members.len();
    let mut rows: Vec<Option<Row>> = vec![None; total];
    let mut spool = Spool::new(total);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write_error: Option<String> = None;
    let mut done = 0;
    read_all(
        &members,
        usize::from(args.concurrency),
        |member| read_member(member, kube_version.as_deref()),
        |index, state| {
            let member = &members[index];
            let outcome = auditor.audit(&member.name, state);
            done += 1;
            if progress {
                eprintln!("[{done}/{total}] {}: {}", member.name, outcome.row.verdict.as_str());
            }
            let text = match output {
                Output::Text => Ok(section(&outcome.row, outcome.report.as_ref(), paint)),
                Output::JsonLines => json_line(command, &member.source, &outcome.row, outcome.report.as_ref()).map_err(|e| e.to_string()),
                Output::Quiet => Ok(verdict_line(&outcome.row, paint)),
            };
            if write_error.is_none() {
                let written = text.and_then(|text| {
                    spool.put(index, text.as_bytes()).map_err(|e| e.to_string())?;
                    // Text waits for the summary; the line formats stream.
                    if output != Output::Text {
                        spool.flush_ready(&mut out).map_err(|e| e.to_string())?;
                    }
                    Ok(())
                });
                write_error = written.err();
            }
            rows[index] = Some(outcome.row);
        },
    );
    let rows: Vec<Row> = rows.into_iter().flatten().collect();
    let written = match write_error {
        Some(e) => Err(e),
        None => {
            let head = if output == Output::Text { summary(command, &rows, paint) } else { String::new() };
            out.write_all(head.as_bytes()).and_then(|_| spool.finish(&mut out)).map_err(|e| e.to_string())
        }
    };
    written.map_err(|e| CliError::Io(format!("cannot write the fleet's report to standard output: {e}")))?;
    if command != "status" {
        crate::report::github::step_summary(|| crate::report::github::fleet_summary(command, &rows));
    }
    Ok(ExitCode::from(exit_code(&rows)))
}
