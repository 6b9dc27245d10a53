//! The explorer's judge: what trainer-audit said about a state against what must hold.
//! - Invariants of any run ([`exits`]): exit 0, 1 or 2 only, no panic, no hang; the verdict and
//!   the exit code agree; a fleet's answer for a cluster is the single run's.
//! - Never `ready` while an input the verdict depends on is unknown ([`inputs`]).
//! - Every object a printed command names exists in the rendered target or the state ([`names`]).
//! - What the output says fits the state: unknown values named, the running image named, no text
//!   of another case ([`texts`]).
//! - Oracles: what Helm, the API server and the controllers do when the upgrade runs in this
//!   state, each written from upstream source and cited there: the revision Helm starts from and
//!   when it refuses ([`revision`]), ownership checks on what it creates, the deletions it makes
//!   ([`loss`]), the admission of what it creates — ResourceQuota, LimitRange, Pod Security
//!   ([`admission`]) — the runtime snapshots the 2.3 controller then writes, the API server's
//!   version ([`kube`]), and Kueue's TrainJob integration ([`kueue`]).
//!
//! An oracle's failure under a `ready` verdict is a disagreement; under `blocked`, it is one when
//! no error finding names what fails (a plan that fixes every finding would still fail there).

pub mod admission;
pub mod exits;
pub mod inputs;
pub mod kube;
pub mod kueue;
pub mod loss;
pub mod names;
pub mod revision;
pub mod situation;
pub mod texts;

use serde_json::Value as Json;

use super::build::Built;
use super::charts::Charts;
use super::process::Ran;
use super::state::State;
pub use situation::Situation;

/// Whose area a class of disagreement is (issue 29's sections, or `other`).
pub type Area = &'static str;

/// One disagreement between trainer-audit and what must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// A short class name (`ready-while-helm-refuses`, `missed-quota`, `exit-code`, …).
    pub class: String,
    pub area: Area,
    pub expected: String,
    pub actual: String,
}

/// What an oracle predicts fails when the upgrade runs.
#[derive(Debug, Clone)]
pub struct Failure {
    pub class: &'static str,
    pub area: Area,
    /// What happens, with the source it follows.
    pub what: String,
    /// Texts of which one must appear in an error finding (subject, title or message) for the
    /// failure to count as named.
    pub named_by: Vec<String>,
}

/// What the runs said about one state.
#[derive(Debug, Default)]
pub struct Observed {
    /// The fleet `check --format jsonl` line of this cluster.
    pub check: Option<Json>,
    /// The fleet `plan --format jsonl` line of this cluster.
    pub plan: Option<Json>,
    /// Processes that did not end as a run must (panic, signal, hang, exit outside 0/1/2).
    pub broken: Vec<Ran>,
    /// The single `check --format json` (sampled states).
    pub single_check: Option<Ran>,
    /// `runbook` (sampled states).
    pub runbook: Option<Ran>,
}

/// Every disagreement for one state.
pub fn judge(state: &State, built: &Built, charts: &Charts, observed: &Observed) -> Vec<Disagreement> {
    let mut out = exits::check(observed);
    let Some(check) = &observed.check else { return out };
    let verdict = check["verdict"].as_str().unwrap_or_default();
    let situation = match Situation::new(state, built, charts, observed) {
        Ok(s) => s,
        Err(e) => {
            out.push(Disagreement {
                class: "explorer-error".into(),
                area: "other",
                expected: "the oracle's render of the target".into(),
                actual: e,
            });
            return out;
        }
    };
    out.extend(inputs::check(&situation, check));
    out.extend(names::check(&situation, observed));
    out.extend(revision::from_version(&situation, check));
    out.extend(texts::check(&situation, check));
    let mut failures = Vec::new();
    failures.extend(revision::failures(&situation));
    failures.extend(loss::failures(&situation));
    failures.extend(admission::failures(&situation));
    failures.extend(kube::failures(&situation));
    failures.extend(kueue::failures(&situation));
    let findings = errors(check);
    for f in failures {
        match verdict {
            "ready" => out.push(Disagreement {
                class: format!("ready-but-{}", f.class),
                area: f.area,
                expected: format!("not ready: {}", f.what),
                actual: "ready, exit 0".into(),
            }),
            "blocked" if !f.named_by.is_empty() && !findings.iter().any(|e| f.named_by.iter().any(|n| e.contains(n.as_str()))) => {
                out.push(Disagreement {
                    class: format!("missed-{}", f.class),
                    area: f.area,
                    expected: format!("an error finding naming one of {:?}: {}", f.named_by, f.what),
                    actual: format!("blocked without it; errors: {}", summary(check)),
                })
            }
            _ => {}
        }
    }
    out
}

/// Each error finding of a check report as one text (id, subject, title, message).
pub fn errors(line: &Json) -> Vec<String> {
    line.pointer("/report/findings")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            format!(
                "{} {} {} {}",
                f["id"].as_str().unwrap_or(""),
                f["subject"].as_str().unwrap_or(""),
                f["title"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// `TA-X-001 subject` per error finding, for a report line.
pub fn summary(line: &Json) -> String {
    let list: Vec<String> = line
        .pointer("/report/findings")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{} {}", f["id"].as_str().unwrap_or(""), f["subject"].as_str().unwrap_or("")))
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}
