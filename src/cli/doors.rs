//! Glue for the formats other tools read (issue 23): the HTML page and the OpenMetrics text of
//! `check` for one cluster or a fleet, written to `-o FILE` or standard output. Rendering is
//! `crate::report::{html, openmetrics}`; the step summary of a GitHub Actions job is
//! `crate::report::github::step_summary`.

use std::path::Path;
use std::process::ExitCode;

use super::args::assumed_kube_version;
use super::fleet::FleetArgs;
use super::CliError;
use crate::audit::finding::Severity;
use crate::cluster::source::Source;
use crate::fleet::audit::{exit_code, Auditor, Job, Report, Row};
use crate::fleet::read::{read_all, read_member};
use crate::report::html::FleetCluster;
use crate::report::openmetrics::{self, unix_seconds};
use crate::upgrade::check::CheckReport;

/// Writes `text` to `output` (atomically, readable by all: a page to serve, a file a collector
/// reads) or standard output.
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output {
        Some(path) => {
            crate::atomic_write::write_atomically_readable(path, text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// The name a single cluster goes by on a page or in metrics: its snapshot file, its context,
/// or `current-context`.
pub fn single_name(args: &FleetArgs) -> String {
    if let Some(path) = args.snapshot.first() {
        return path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
    }
    args.context.first().cloned().unwrap_or_else(|| "current-context".into())
}

/// A serde-named method (`argo-cd`) for a label.
fn method_name(method: crate::engine::Method) -> String {
    serde_json::to_value(method).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Now, in Unix seconds.
fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// One cluster's outcome, kept for a page or the metrics.
struct Audited {
    row: Row,
    report: Option<CheckReport>,
    read_at: Option<i64>,
}

/// Reads and checks every cluster of the fleet, in input order.
fn audit_fleet(job: Job, args: &FleetArgs) -> Result<Vec<Audited>, CliError> {
    let members = args.selection().members().map_err(|e| CliError::Usage(e.to_string()))?;
    let kube_version = args.kube_version.as_deref().map(assumed_kube_version).transpose()?;
    let auditor = Auditor::new(job);
    auditor.prepare()?;
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = members.len();
    let mut out: Vec<Option<Audited>> = (0..total).map(|_| None).collect();
    let mut done = 0;
    read_all(
        &members,
        usize::from(args.concurrency),
        |member| read_member(member, kube_version.as_deref()),
        |index, state| {
            let member = &members[index];
            let read_at = match (&state, &member.source) {
                (Ok(s), _) if s.info.captured_at.is_some() => s.info.captured_at.as_deref().and_then(unix_seconds),
                (Ok(_), Source::Live { .. }) => Some(now()),
                _ => None,
            };
            let outcome = auditor.audit(&member.name, state);
            done += 1;
            if progress {
                eprintln!("[{done}/{total}] {}: {}", member.name, outcome.row.verdict.as_str());
            }
            let report = match outcome.report {
                Some(Report::Check(r)) => Some(*r),
                _ => None,
            };
            out[index] = Some(Audited { row: outcome.row, report, read_at });
        },
    );
    Ok(out.into_iter().flatten().collect())
}

/// What a check writes in a format of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    Html,
    OpenMetrics,
}

/// `check --format html|openmetrics` over a fleet.
pub fn check_fleet(job: Job, args: &FleetArgs, door: Door, fail_on: Severity, output: Option<&Path>) -> Result<ExitCode, CliError> {
    let audited = audit_fleet(job, args)?;
    let text = match door {
        Door::Html => {
            let clusters: Vec<FleetCluster> = audited
                .iter()
                .map(|a| FleetCluster {
                    cluster: &a.row.cluster,
                    verdict: a.row.verdict.as_str(),
                    report: a.report.as_ref(),
                    failure: a.row.failure.as_deref(),
                })
                .collect();
            crate::report::html::fleet_page(&clusters, fail_on)
        }
        Door::OpenMetrics => {
            let methods: Vec<Option<String>> = audited.iter().map(|a| a.row.method.map(method_name)).collect();
            let clusters: Vec<openmetrics::Cluster> = audited
                .iter()
                .zip(&methods)
                .map(|(a, method)| openmetrics::Cluster {
                    cluster: &a.row.cluster,
                    verdict: a.row.verdict.as_str(),
                    exit_code: a.row.exit_code,
                    installed: a.row.installed.as_deref(),
                    target: a.row.target.as_deref(),
                    method: method.as_deref(),
                    findings: a.report.as_ref().map(|r| r.findings.as_slice()),
                    read_at: a.read_at,
                })
                .collect();
            openmetrics::render(&clusters, fail_on)
        }
    };
    emit(output, &text)?;
    let rows: Vec<Row> = audited.into_iter().map(|a| a.row).collect();
    crate::report::github::step_summary(|| crate::report::github::fleet_summary("check", &rows));
    Ok(ExitCode::from(exit_code(&rows)))
}

/// `check --format openmetrics` for one cluster (its report already made).
pub fn check_metrics(name: &str, r: &CheckReport, fail_on: Severity, read_at: Option<i64>) -> String {
    let verdict = r.decision.verdict.as_str();
    let method = method_name(r.method);
    let cluster = openmetrics::Cluster {
        cluster: name,
        verdict,
        exit_code: u8::from(verdict == "blocked"),
        installed: Some(&r.from),
        target: Some(&r.to),
        method: Some(&method),
        findings: Some(&r.findings),
        read_at,
    };
    openmetrics::render(&[cluster], fail_on)
}

/// When one cluster was read: its snapshot's capture time, or now for a live read.
pub fn single_read_at(args: &FleetArgs, captured_at: Option<&str>) -> Option<i64> {
    match captured_at {
        Some(t) => unix_seconds(t),
        None if args.snapshot.is_empty() => Some(now()),
        None => None,
    }
}
