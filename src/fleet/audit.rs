//! What a run does with each cluster (`status`, `check` or `plan`; a single-cluster run is a
//! fleet of one), the one summary row per cluster (installed version, method, target, errors,
//! warnings, verdict, and the exit code the one fail decision gives it), and the run's exit code:
//! the worst cluster's, where a cluster that could not be read or audited counts as 2 and 2
//! outranks 1 (a gate that could not be evaluated everywhere must not pass, and findings
//! elsewhere do not make it pass either). [`Auditor::run`] reads the clusters (one on the calling
//! thread, a fleet with [`super::read::read_all`]) and hands each outcome on as it is audited.

use std::cell::OnceCell;
use std::rc::Rc;

use serde::Serialize;

use super::read::{read_all, read_member, Assumed};
use super::Member;
use crate::audit::finding::{Finding, Severity};
use crate::audit::verdict::{Counts, Decision};
use crate::cluster::source::Source;
use crate::cluster::status::{status_against, Status, Validation};
use crate::cluster::ClusterState;
use crate::engine::Method;
use crate::plan::Plan;
use crate::upgrade::check::{CheckReport, Inputs};
use crate::upgrade::crds::{chart_crds, ChartCrds};
use crate::upgrade::store::ChartStore;
use crate::upgrade::{store_for, target, Request, Upgrade, UpgradeError};

/// The command run on every cluster, with the level its exit code fails at (`check` always
/// gates; `plan` and `status` only with `--fail-on`).
pub enum Job {
    /// `target`: validate the live objects against this chart's CRDs instead of the installed.
    Status {
        target: Option<Request>,
        fail_on: Option<Severity>,
    },
    Check {
        request: Request,
        fail_on: Severity,
    },
    Plan {
        request: Request,
        fail_on: Option<Severity>,
    },
}

impl Job {
    pub fn name(&self) -> &'static str {
        match self {
            Job::Status { .. } => "status",
            Job::Check { .. } => "check",
            Job::Plan { .. } => "plan",
        }
    }
}

/// One cluster's verdict: `ready`/`blocked` (`check`, `plan`), `installed`/`not-installed`
/// (`status`), or `failed` (the cluster could not be read or audited).
pub use crate::audit::verdict::Verdict;

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

/// A cluster's report, serialised exactly as the single-cluster command's JSON (a plan's as
/// `{plan, notes}`, its verdict the row's).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Report {
    Status(Box<Status>),
    Check(Box<CheckReport>),
    Plan {
        plan: Box<Plan>,
        notes: Vec<String>,
        /// What the plan rests on (the single-cluster JSON carries it).
        #[serde(skip)]
        inputs: Box<Inputs>,
    },
}

/// When a cluster's objects were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadTime {
    /// The snapshot's capture time, as recorded (RFC 3339).
    Captured(String),
    /// A live read: now.
    Live,
    /// A snapshot that does not say, or a cluster that could not be read.
    Unknown,
}

pub struct Outcome {
    pub row: Row,
    /// None when the cluster failed.
    pub report: Option<Report>,
    pub read: ReadTime,
}

/// How a run reads its clusters.
pub struct Reading<'a> {
    pub members: &'a [Member],
    /// Reads at once in a fleet.
    pub concurrency: usize,
    /// What the user assumes the clusters do not tell (`--kube-version`, `--neighbour`).
    pub assumed: &'a Assumed,
    /// A fleet's output even for one member: what every cluster shares is checked before any is
    /// read ([`Auditor::prepare`]), and a cluster's failure is its row's. Otherwise the one
    /// cluster is read first, exactly as a single-cluster command always read it, with a live
    /// read's progress on a terminal.
    pub fleet: bool,
}

/// Runs the job on each cluster in turn, with one chart store for the whole fleet.
pub struct Auditor {
    job: Job,
    store: Option<Rc<ChartStore>>,
    /// `status --to/--chart`: the target's CRDs, resolved once for the run.
    target_crds: OnceCell<ChartCrds>,
    /// The process ends after this run: a cluster's objects are left to the OS, which reclaims
    /// them at once (freeing a big cluster's objects one by one took a fifth of `status` over
    /// 50,000 TrainJobs, docs/benchmarks.md). A fleet drops each state instead.
    leave_to_the_os: bool,
}

impl Auditor {
    pub fn new(job: Job) -> Auditor {
        let store = match &job {
            Job::Status { .. } => None,
            Job::Check { request, .. } | Job::Plan { request, .. } => Some(Rc::new(store_for(request))),
        };
        Auditor { job, store, target_crds: OnceCell::new(), leave_to_the_os: false }
    }

    pub fn job(&self) -> &Job {
        &self.job
    }

    /// What every cluster shares, checked before any is read: the target resolves (the
    /// repository is reachable and has it; the rules were loaded with the request). Its failure
    /// is the run's, not a cluster's. Returns the target version.
    pub fn prepare(&self) -> Result<Option<semver::Version>, UpgradeError> {
        if let Job::Status { target: Some(request), .. } = &self.job {
            self.crds(request)?;
        }
        let (Some(store), Job::Check { request, .. } | Job::Plan { request, .. }) = (&self.store, &self.job) else { return Ok(None) };
        target::resolve(request, store).map(Some)
    }

    fn crds(&self, request: &Request) -> Result<&ChartCrds, UpgradeError> {
        if let Some(crds) = self.target_crds.get() {
            return Ok(crds);
        }
        let crds = chart_crds(request)?;
        Ok(self.target_crds.get_or_init(|| crds))
    }

    /// Reads every member and audits each, calling `each(index, outcome)` in the order the
    /// reads finish; returns the rows in input order. Fails only where the run fails (a fleet's
    /// shared inputs, [`Auditor::prepare`]).
    pub fn run(&mut self, reading: &Reading, mut each: impl FnMut(usize, Outcome)) -> Result<Vec<Row>, UpgradeError> {
        let members = reading.members;
        let mut rows: Vec<Option<Row>> = vec![None; members.len()];
        if reading.fleet {
            self.prepare()?;
            let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let (total, mut done) = (members.len(), 0);
            read_all(
                members,
                reading.concurrency,
                |member| read_member(member, reading.assumed, false),
                |index, state| {
                    let member = &members[index];
                    let outcome = self.audit_read(member, state);
                    done += 1;
                    if progress {
                        eprintln!("[{done}/{total}] {}: {}", member.name, outcome.row.verdict.as_str());
                    }
                    rows[index] = Some(outcome.row.clone());
                    each(index, outcome);
                },
            );
        } else {
            self.leave_to_the_os = members.len() == 1;
            for (index, member) in members.iter().enumerate() {
                let state = read_member(member, reading.assumed, std::io::IsTerminal::is_terminal(&std::io::stderr()));
                let outcome = self.audit_read(member, state);
                rows[index] = Some(outcome.row.clone());
                each(index, outcome);
            }
        }
        Ok(rows.into_iter().flatten().collect())
    }

    fn audit_read(&self, member: &Member, state: Result<ClusterState, String>) -> Outcome {
        let read = match (&state, &member.source) {
            (Ok(s), _) if s.info.captured_at.is_some() => ReadTime::Captured(s.info.captured_at.clone().unwrap_or_default()),
            (Ok(_), Source::Live { .. }) => ReadTime::Live,
            _ => ReadTime::Unknown,
        };
        Outcome { read, ..self.audit(&member.name, state) }
    }

    /// The outcome for one cluster, read or not.
    pub fn audit(&self, cluster: &str, state: Result<ClusterState, String>) -> Outcome {
        let state = match state {
            Ok(state) => state,
            Err(why) => return Outcome { row: Row::failed(cluster, why), report: None, read: ReadTime::Unknown },
        };
        match self.audit_state(cluster, state) {
            Ok(outcome) => outcome,
            Err(e) => Outcome { row: Row::failed(cluster, e.to_string()), report: None, read: ReadTime::Unknown },
        }
    }

    /// The state's objects are left to the OS when the process ends next.
    fn done_with<T>(&self, big: T) {
        if self.leave_to_the_os {
            std::mem::forget(big);
        }
    }

    fn audit_state(&self, cluster: &str, state: ClusterState) -> Result<Outcome, UpgradeError> {
        // The exit code is the one fail decision (`audit::verdict`) at the job's level.
        let row = |installed: Option<String>, method, target, (errors, warnings), verdict: Verdict, exit_code: u8| Row {
            cluster: cluster.to_string(),
            installed,
            method: Some(method),
            target,
            errors,
            warnings,
            verdict,
            exit_code,
            failure: None,
        };
        // The state moves into the upgrade (never copied: it is the big part of a cluster).
        let upgrade = |request: &Request, state: ClusterState| -> Result<Upgrade, UpgradeError> {
            let store = self.store.clone().unwrap_or_else(|| Rc::new(store_for(request)));
            Upgrade::prepare_in(request.clone(), state, store)
        };
        let read = ReadTime::Unknown;
        Ok(match &self.job {
            Job::Status { target, fail_on } => {
                let crds = match target {
                    Some(request) => Some(self.crds(request)?),
                    None => None,
                };
                let crds = crds.as_ref().map(|c| (c.crds.as_slice(), format!("the CRDs of {}", c.chart)));
                let s = status_against(&state, || Validation::of(&state, crds));
                self.done_with(state);
                let verdict = if s.version.is_some() { Verdict::Installed } else { Verdict::NotInstalled };
                // What `status --fail-on` gates on, counted the same.
                let c = Counts::of_status(&s);
                let exit_code = Decision::at(c, *fail_on, None, None).exit_code();
                let row =
                    row(s.version.as_ref().map(|v| v.version.clone()), s.install.method, None, (c.error, c.warning), verdict, exit_code);
                Outcome { row, report: Some(Report::Status(Box::new(s))), read }
            }
            Job::Check { request, fail_on } => {
                let upgrade = upgrade(request, state)?;
                let report = upgrade.check(*fail_on)?;
                self.done_with(upgrade);
                let counts = counts(report.findings.iter());
                let (verdict, exit_code) = (report.decision.verdict, report.decision.exit_code());
                let row = row(Some(report.from.clone()), report.method, Some(report.to.clone()), counts, verdict, exit_code);
                Outcome { row, report: Some(Report::Check(Box::new(report))), read }
            }
            Job::Plan { request, fail_on } => {
                let upgrade = upgrade(request, state)?;
                let (mut plan, notes) = upgrade.plan()?;
                plan.fail_on = *fail_on;
                let inputs = Box::new(upgrade.inputs());
                self.done_with(upgrade);
                let findings: Vec<Finding> = plan.steps.iter().flat_map(|s| s.preconditions.iter().cloned()).collect();
                // The same words as `check`; a plan is no gate unless `--fail-on` makes it one.
                let decision = plan.decision();
                let (verdict, exit_code) = (decision.verdict, decision.exit_code());
                let row = row(Some(plan.from.clone()), plan.method, Some(plan.to.clone()), counts(findings.iter()), verdict, exit_code);
                Outcome { row, report: Some(Report::Plan { plan: Box::new(plan), notes, inputs }), read }
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

/// The fleet's verdict: `failed` when a cluster failed, else `blocked` when one is, else
/// `ready`.
pub fn verdict(rows: &[Row]) -> Verdict {
    let any = |v: Verdict| rows.iter().any(|r| r.verdict == v);
    if any(Verdict::Failed) {
        Verdict::Failed
    } else if any(Verdict::Blocked) {
        Verdict::Blocked
    } else {
        Verdict::Ready
    }
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
        assert_eq!(exit_code(&[row(Verdict::Ready), row(Verdict::Installed)]), 0);
        assert_eq!(exit_code(&[row(Verdict::Ready), row(Verdict::Blocked)]), 1);
        assert_eq!(exit_code(&[row(Verdict::Blocked), row(Verdict::Failed), row(Verdict::Ready)]), 2);
        assert_eq!(exit_code(&[row(Verdict::NotInstalled)]), 0);
    }

    #[test]
    fn a_cluster_that_cannot_be_read_is_that_clusters_failure() {
        let auditor = Auditor::new(Job::Status { target: None, fail_on: None });
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
        empty.info.server_version = Some(kube_version::KubeVersion::parse("v1.33.1").unwrap());
        let out = auditor.audit("empty", Ok(empty));
        assert_eq!(out.row.verdict, Verdict::Failed);
        let why = out.row.failure.unwrap();
        assert!(why.starts_with("no Kubeflow Trainer install found: looked for"), "said once, where it looked: {why}");
        // With --from, a cluster without Trainer is still not `ready`.
        let root = env!("CARGO_MANIFEST_DIR");
        let request = Request { chart: Some(format!("{root}/tests/rules/charts/to")), from: Some("2.2.1".into()), ..Request::default() };
        let auditor = Auditor::new(Job::Check { request, fail_on: Severity::Error });
        let out = auditor.audit("empty", Ok(ClusterState::default()));
        assert!(out.row.failure.is_some_and(|w| w.starts_with("no Kubeflow Trainer install found")));
    }

    #[test]
    fn every_cluster_is_audited_with_the_rule_set_the_request_carries() {
        let root = env!("CARGO_MANIFEST_DIR");
        let only: Vec<crate::audit::rules::Rule> =
            crate::audit::rules::RuleSet::builtin().unwrap().iter().filter(|r| r.id == "TA-HOOK-101").cloned().collect();
        let request = Request {
            chart: Some(format!("{root}/tests/rules/charts/to")),
            from_chart: Some(format!("{root}/tests/rules/charts/from")),
            rules: only.into(),
            ..Request::default()
        };
        let auditor = Auditor::new(Job::Check { request, fail_on: Severity::Error });
        let source = Source::Snapshot { path: format!("{root}/tests/rules/TA-HOOK-101/cluster.yaml").into() };
        let state = read_member(&Member { name: "a".into(), source }, &crate::fleet::read::Assumed::default(), false).unwrap();
        for cluster in ["a", "b"] {
            let out = auditor.audit(cluster, Ok(state.clone()));
            let Some(Report::Check(report)) = out.report else { panic!("{cluster}: {:?}", out.row.failure) };
            let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
            assert!(!ids.is_empty() && ids.iter().all(|id| *id == "TA-HOOK-101"), "{cluster}: {ids:?}");
        }
    }
}
