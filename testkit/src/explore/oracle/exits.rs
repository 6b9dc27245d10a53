//! Invariants of any run: a process ends with 0, 1 or 2 (`trainer-audit --help`: 0 clean, 1
//! findings at or above `--fail-on`, 2 the run itself failed), never by a panic, a signal or the
//! explorer's time limit; a report's verdict agrees with its exit code; and a cluster's answer in
//! a fleet run is the single run's (same exit code, same findings).

use serde_json::Value as Json;

use super::{Disagreement, Observed};
use crate::explore::process::Ran;

fn broken(ran: &Ran) -> Option<String> {
    if ran.timed_out {
        return Some(format!("killed at the explorer's limit after {:.0} s (a hang)", ran.seconds));
    }
    if ran.panicked() {
        let line = ran.stderr.lines().find(|l| l.contains("panicked at")).unwrap_or("exit 101");
        return Some(format!("panicked: {line}"));
    }
    match ran.code {
        Some(0..=2) => None,
        Some(c) => Some(format!("exit {c}")),
        None => Some("killed by a signal".into()),
    }
}

pub fn check(observed: &Observed) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let runs = observed.broken.iter().chain(&observed.single_check).chain(&observed.runbook);
    for ran in runs {
        if let Some(why) = broken(ran) {
            out.push(Disagreement {
                class: "exit".into(),
                area: "other",
                expected: "exit 0, 1 or 2".into(),
                actual: format!("{}: {why}; stderr: {}", ran.command(), tail(&ran.stderr)),
            });
        }
    }
    for (name, line) in [("check", &observed.check), ("plan", &observed.plan)] {
        let Some(line) = line else { continue };
        let (verdict, code) = (line["verdict"].as_str().unwrap_or_default(), line["exit_code"].as_i64());
        let agrees = match (name, verdict) {
            (_, "failed") => code == Some(2),
            ("check", "ready") => code == Some(0),
            ("check", "blocked") => code == Some(1),
            ("plan", "ready" | "blocked") => code == Some(0),
            _ => false,
        };
        if !agrees {
            out.push(Disagreement {
                class: "verdict-exit".into(),
                area: "other",
                expected: format!("{name}'s exit code to follow its verdict"),
                actual: format!("verdict {verdict:?}, exit {code:?}"),
            });
        }
    }
    if let (Some(fleet), Some(single)) = (&observed.check, &observed.single_check) {
        if broken(single).is_none() {
            let fleet_code = fleet["exit_code"].as_i64();
            let single_code = single.code.map(i64::from);
            let single_findings = serde_json::from_str::<Json>(&single.stdout).ok().map(|r| ids(&r["findings"]));
            let fleet_findings = Some(ids(&fleet["report"]["findings"])).filter(|_| fleet_code != Some(2));
            if fleet_code != single_code || (single_code != Some(2) && fleet_findings != single_findings) {
                out.push(Disagreement {
                    class: "fleet-vs-single".into(),
                    area: "other",
                    expected: format!("the fleet's answer (exit {fleet_code:?}, {fleet_findings:?})"),
                    actual: format!("single run: exit {single_code:?}, {single_findings:?}; stderr: {}", tail(&single.stderr)),
                });
            }
        }
    }
    out
}

/// `id subject` of every finding, sorted.
fn ids(findings: &Json) -> Vec<String> {
    let mut out: Vec<String> = findings
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!("{} {} {}", f["severity"].as_str().unwrap_or(""), f["id"].as_str().unwrap_or(""), f["subject"].as_str().unwrap_or(""))
        })
        .collect();
    out.sort();
    out
}

pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}
