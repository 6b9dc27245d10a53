//! What a fleet run does with each cluster (`status`, `check` or `plan`, exactly as the
//! single-cluster command does it), the one summary row per cluster (installed version, method,
//! target, errors, warnings, verdict), and the fleet's exit code: the worst cluster's, where a
//! cluster that could not be read or audited counts as 2 and 2 outranks 1 (a gate that could not
//! be evaluated everywhere must not pass, and findings elsewhere do not make it pass either).

use std::rc::Rc;

use serde::Serialize;

use crate::audit::finding::{Finding, Severity};
use crate::cluster::status::{status, Status};
use crate::cluster::ClusterState;
use crate::engine::Method;
use crate::plan::Plan;
use crate::upgrade::check::CheckReport;
use crate::upgrade::store::ChartStore;
use crate::upgrade::{store_for, target, Request, Upgrade, UpgradeError};

/// The command run on every cluster.
pub enum Job {
    Status,
    Check { request: Request, fail_on: Severity },
    Plan { request: Request },
}

impl Job {
    pub fn name(&self) -> &'static str {
        match self {
            Job::Status => "status",
            Job::Check { .. } => "check",
            Job::Plan { .. } => "plan",
        }
    }
}

/// One cluster's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// `check`: nothing at or above `--fail-on`.
    Ready,
    /// `check`: findings at or above `--fail-on`.
    Blocked,
    /// `plan`: a route was found.
    Planned,
    /// `status`: Trainer is installed.
    Installed,
    /// `status`: no Trainer found.
    NotInstalled,
    /// The cluster could not be read or audited.
    Failed,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ready => "ready",
            Verdict::Blocked => "blocked",
            Verdict::Planned => "planned",
            Verdict::Installed => "installed",
            Verdict::NotInstalled => "not-installed",
            Verdict::Failed => "failed",
        }
    }

    /// The exit code a single-cluster run with this verdict has.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Blocked => 1,
            Verdict::Failed => 2,
            _ => 0,
        }
    }
}

/// A cluster's line in the fleet summary (and the head of its JSON Lines document).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub cluster: String,
    /// Installed Trainer chart version.
    pub installed: Option<String>,
    pub method: Option<Method>,
    pub target: Option<String>,
    /// Findings (`check`; every step's preconditions for `plan`) at error severity; for
    /// `status`, what `status --fail-on` counts as errors (`audit::verdict::Counts::of_status`).
    pub errors: usize,
    /// Findings at warning severity; for `status`, what `status --fail-on` counts as warnings.
    pub warnings: usize,
    pub verdict: Verdict,
    pub exit_code: u8,
    /// Why the cluster failed.
    pub failure: Option<String>,
}

impl Row {
    fn failed(cluster: &str, why: String) -> Row {
        Row {
            cluster: cluster.to_string(),
            installed: None,
            method: None,
            target: None,
            errors: 0,
            warnings: 0,
            verdict: Verdict::Failed,
            exit_code: 2,
            failure: Some(why),
        }
    }
}

/// A cluster's report, serialised exactly as the single-cluster command's JSON.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Report {
    Status(Box<Status>),
    Check(Box<CheckReport>),
    Plan { plan: Box<Plan>, notes: Vec<String> },
}

pub struct Outcome {
    pub row: Row,
    /// None when the cluster failed.
    pub report: Option<Report>,
}

/// Runs the job on each cluster in turn, with one chart store for the whole fleet.
pub struct Auditor {
    job: Job,
    store: Option<Rc<ChartStore>>,
}

impl Auditor {
    pub fn new(job: Job) -> Auditor {
        let store = match &job {
            Job::Status => None,
            Job::Check { request, .. } | Job::Plan { request } => Some(Rc::new(store_for(request))),
        };
        Auditor { job, store }
    }

    pub fn job(&self) -> &Job {
        &self.job
    }

    /// What every cluster shares, checked before any is read: the rule files load and the target
    /// resolves (the repository is reachable and has it). Its failure is the run's, not a
    /// cluster's. Returns the target version.
    pub fn prepare(&self) -> Result<Option<semver::Version>, UpgradeError> {
        let (Some(store), Job::Check { request, .. } | Job::Plan { request }) = (&self.store, &self.job) else { return Ok(None) };
        crate::audit::rules::load(request.rules.as_deref()).map_err(|e| UpgradeError::Usage(e.0))?;
        target::resolve(request, store).map(Some)
    }

    /// The outcome for one cluster, read or not.
    pub fn audit(&self, cluster: &str, state: Result<ClusterState, String>) -> Outcome {
        let state = match state {
            Ok(state) => state,
            Err(why) => return Outcome { row: Row::failed(cluster, why), report: None },
        };
        match self.run(cluster, state) {
            Ok(outcome) => outcome,
            Err(e) => Outcome { row: Row::failed(cluster, e.to_string()), report: None },
        }
    }

    fn run(&self, cluster: &str, state: ClusterState) -> Result<Outcome, UpgradeError> {
        let row = |installed: Option<String>, method, target, (errors, warnings), verdict: Verdict| Row {
            cluster: cluster.to_string(),
            installed,
            method: Some(method),
            target,
            errors,
            warnings,
            verdict,
            exit_code: verdict.exit_code(),
            failure: None,
        };
        // The state moves into the upgrade (never copied: it is the big part of a cluster).
        let upgrade = |request: &Request, state: ClusterState| -> Result<Upgrade, UpgradeError> {
            let store = self.store.clone().unwrap_or_else(|| Rc::new(store_for(request)));
            Upgrade::prepare_in(request.clone(), state, store)
        };
        Ok(match &self.job {
            Job::Status => {
                let s = status(&state);
                let verdict = if s.version.is_some() { Verdict::Installed } else { Verdict::NotInstalled };
                // What `status --fail-on` gates on, counted the same.
                let c = crate::audit::verdict::Counts::of_status(&s);
                let counts = (c.error, c.warning);
                let row = row(s.version.as_ref().map(|v| v.version.clone()), s.install.method, None, counts, verdict);
                Outcome { row, report: Some(Report::Status(Box::new(s))) }
            }
            Job::Check { request, fail_on } => {
                let report = upgrade(request, state)?.check(*fail_on)?;
                let verdict = match report.decision.verdict {
                    crate::audit::verdict::Verdict::Blocked => Verdict::Blocked,
                    crate::audit::verdict::Verdict::Ready => Verdict::Ready,
                };
                let counts = counts(report.findings.iter());
                let row = row(Some(report.from.clone()), report.method, Some(report.to.clone()), counts, verdict);
                Outcome { row, report: Some(Report::Check(Box::new(report))) }
            }
            Job::Plan { request } => {
                let (plan, notes) = upgrade(request, state)?.plan()?;
                let counts = counts(plan.steps.iter().flat_map(|s| s.preconditions.iter()));
                // The same words as `check`; a plan is not a gate, so its exit code stays 0.
                let verdict = match plan.decision().verdict {
                    crate::audit::verdict::Verdict::Blocked => Verdict::Blocked,
                    crate::audit::verdict::Verdict::Ready => Verdict::Ready,
                };
                let row = Row { exit_code: 0, ..row(Some(plan.from.clone()), plan.method, Some(plan.to.clone()), counts, verdict) };
                Outcome { row, report: Some(Report::Plan { plan: Box::new(plan), notes }) }
            }
        })
    }
}

fn counts<'a>(findings: impl Iterator<Item = &'a Finding>) -> (usize, usize) {
    findings.fold((0, 0), |(e, w), f| match f.severity {
        Severity::Error => (e + 1, w),
        Severity::Warning => (e, w + 1),
        Severity::Info => (e, w),
    })
}

/// The fleet's exit code: the worst cluster's (0 for an empty fleet).
pub fn exit_code(rows: &[Row]) -> u8 {
    rows.iter().map(|r| r.exit_code).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_cluster_outranks_findings_and_findings_outrank_ready() {
        let row = |v: Verdict| Row { exit_code: v.exit_code(), ..Row::failed("c", String::new()) };
        assert_eq!(exit_code(&[]), 0);
        assert_eq!(exit_code(&[row(Verdict::Ready), row(Verdict::Installed), row(Verdict::Planned)]), 0);
        assert_eq!(exit_code(&[row(Verdict::Ready), row(Verdict::Blocked)]), 1);
        assert_eq!(exit_code(&[row(Verdict::Blocked), row(Verdict::Failed), row(Verdict::Ready)]), 2);
        assert_eq!(exit_code(&[row(Verdict::NotInstalled)]), 0);
    }

    #[test]
    fn a_cluster_that_cannot_be_read_is_that_clusters_failure() {
        let auditor = Auditor::new(Job::Status);
        assert_eq!(auditor.prepare().unwrap(), None);
        let failed = auditor.audit("east", Err("cannot reach the Kubernetes API server: connection refused".into()));
        assert_eq!(failed.row.verdict, Verdict::Failed);
        assert_eq!(failed.row.failure.as_deref(), Some("cannot reach the Kubernetes API server: connection refused"));
        assert!(failed.report.is_none());
        let read = auditor.audit("west", Ok(ClusterState::default()));
        assert_eq!((read.row.verdict, read.row.exit_code, read.row.cluster.as_str()), (Verdict::NotInstalled, 0, "west"));
    }

    #[test]
    fn check_without_an_installed_trainer_fails_that_cluster_only() {
        let chart = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules/charts/to").to_string();
        let request = Request { chart: Some(chart), ..Request::default() };
        let auditor = Auditor::new(Job::Check { request, fail_on: Severity::Error });
        assert_eq!(auditor.prepare().unwrap().map(|v| v.to_string()).as_deref(), Some("2.3.0"));
        let mut empty = ClusterState::default();
        let unknown = auditor.audit("unknown", Ok(empty.clone()));
        assert!(unknown.row.failure.unwrap().contains("--kube-version"), "an unknown Kubernetes version is asked for, not guessed");
        empty.info.server_version = Some("v1.33.1".into());
        let out = auditor.audit("empty", Ok(empty));
        assert_eq!(out.row.verdict, Verdict::Failed);
        assert!(out.row.failure.unwrap().contains("--from"), "the reason says what to do");
    }
}
