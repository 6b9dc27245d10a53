//! One live state judged: `check` and `plan` run live on the state made for real, their answers
//! held against the offline oracles (the same judge the offline explorer uses, on the same state
//! description), then against what really happens — a `ready` state's upgrade, run as `plan`
//! prints it, must reach `deployed` at the target with every TrainJob and runtime kept and
//! `check` ready again; a `blocked` state's upgrade, run as printed without its fixes first,
//! must fail as the errors said (the rehearsals' `verdict::observed`), and every failure must be
//! one some finding predicted.

use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use testkit::explore::charts::Charts;
use testkit::explore::oracle::{judge, Disagreement, Observed};
use testkit::explore::printed::plan_commands;
use testkit::explore::state::State;

use crate::lab::{Lab, Ran, NAMESPACE};
use crate::printed::Check;
use crate::{observe, verdict};

fn disagreement(class: &str, expected: impl Into<String>, actual: impl Into<String>) -> Disagreement {
    Disagreement { class: format!("live-{class}"), area: "other", expected: expected.into(), actual: actual.into() }
}

/// `check --format json` as a fleet line (what the judge reads), and the parsed check.
fn check(lab: &Lab, to: &str) -> (Ran, Json, Option<Check>) {
    let repo = lab.repo();
    let ran = lab.audit(&["check", "--to", to, "--repo", &repo, "--plain-http", "--format", "json"]);
    let report: Option<Json> = serde_json::from_str(&ran.stdout).ok();
    let line = match &report {
        Some(r) => json!({"verdict": r["verdict"], "exit_code": ran.code, "report": r}),
        None => json!({"verdict": "failed", "exit_code": ran.code}),
    };
    let parsed = report.map(|report| Check { ran: ran.clone(), findings: crate::printed::findings(&report), report });
    (ran, line, parsed)
}

fn plan(lab: &Lab, to: &str) -> (Ran, Json) {
    let repo = lab.repo();
    let ran = lab.audit(&["plan", "--to", to, "--repo", &repo, "--plain-http", "--format", "json"]);
    let line = match serde_json::from_str::<Json>(&ran.stdout) {
        Ok(r) => json!({"verdict": r["verdict"], "exit_code": ran.code, "report": r}),
        Err(_) => json!({"verdict": "failed", "exit_code": ran.code}),
    };
    (ran, line)
}

/// The plan's upgrade command lines, step by step.
fn upgrade_commands(plan: &Json) -> Vec<String> {
    plan.get("report")
        .map(plan_commands)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.place.ends_with(" upgrade"))
        .map(|p| p.line)
        .collect()
}

/// A printed command run bounded: a hook refused by admission makes Helm wait out its whole
/// `--timeout`, so the attempt stops once the refusal shows as an Event (what it printed and
/// the Events until then are what count), or after 200 s.
fn run_bounded(lab: &Lab, command: &str) -> Ran {
    let started = Instant::now();
    lab.shell_until(command, &|| {
        started.elapsed() > Duration::from_secs(200)
            || (started.elapsed() > Duration::from_secs(20)
                && !lab
                    .shell(&format!("kubectl get events -n {NAMESPACE} --field-selector reason=FailedCreate -o name"))
                    .stdout
                    .trim()
                    .is_empty())
    })
}

pub fn differential(lab: &mut Lab, state: &State, charts: &Charts) -> Vec<Disagreement> {
    let to = state.to.clone();
    let (ran, line, parsed) = check(lab, &to);
    let (plan_ran, plan_line) = plan(lab, &to);
    lab.note(&format!("check --to {to}: exit {:?}, {}", ran.code, testkit::explore::oracle::summary(&line)));
    let mut out = Vec::new();
    // How many of `out` are the offline oracles' predictions (the rest is what really happened).
    let mut predicted = 0;
    for r in [&ran, &plan_ran] {
        if !matches!(r.code, Some(0..=2)) {
            out.push(disagreement("exit", "exit 0, 1 or 2", format!("{r}")));
        }
    }
    // The offline oracles on the live answers.
    match state.build(charts) {
        Ok(built) => {
            let observed = Observed { check: Some(line.clone()), plan: Some(plan_line.clone()), ..Default::default() };
            out.extend(judge(state, &built, charts, &observed));
            predicted = out.len();
        }
        Err(e) => lab.note(&format!("the offline model cannot build this state: {e}")),
    }
    let Some(found) = parsed else { return out };
    let before = observe::State::read(lab);
    let commands = upgrade_commands(&plan_line);
    match ran.code {
        Some(0) => {
            for command in &commands {
                let r = run_bounded(lab, &command.replace("--timeout 10m", "--timeout 3m"));
                lab.note(&format!("ready, as printed: {}", r.command.lines().next().unwrap_or_default()));
                if !r.ok() {
                    out.push(disagreement("ready-but-upgrade-failed", "the printed upgrade to succeed", format!("{r}")));
                    return out;
                }
            }
            let after = observe::State::read(lab);
            let target = testkit::explore::oracle::situation::resolve(&to).unwrap_or(to.clone());
            if !commands.is_empty() && after.release != ("deployed".to_string(), format!("kubeflow-trainer-{target}")) {
                out.push(disagreement(
                    "ready-but-not-deployed",
                    format!("deployed kubeflow-trainer-{target}"),
                    format!("{:?}", after.release),
                ));
            }
            for key in before.trainjobs.keys().filter(|k| !after.trainjobs.contains_key(*k)) {
                out.push(disagreement("ready-but-lost", format!("TrainJob {key} kept"), "gone after the upgrade"));
            }
            for name in before.runtimes.keys().filter(|k| !after.runtimes.contains_key(*k)) {
                out.push(disagreement("ready-but-lost", format!("ClusterTrainingRuntime {name} kept"), "gone after the upgrade"));
            }
            let (again, _, _) = check(lab, &to);
            if again.code != Some(0) {
                out.push(disagreement("ready-not-ready-after", "check ready again after the upgrade", format!("{again}")));
            }
            // The real upgrade reached the target with nothing lost: where an offline oracle
            // predicted that this `ready` fails (a quota, a refusal), reality wins — the oracle's
            // model is what is wrong, said in the lab's notes (an explorer finding to fix), not a
            // disagreement of the tool with what happened.
            if out.len() == predicted {
                let (wrong, kept): (Vec<_>, Vec<_>) = out.drain(..).partition(|d| d.class.starts_with("ready-but-"));
                for d in wrong {
                    lab.note(&format!(
                        "ORACLE CONTRADICTED by the real upgrade: {} ({}) predicted {}; the printed upgrade reached deployed with nothing lost",
                        d.class, d.area, d.expected
                    ));
                }
                out = kept;
            }
        }
        Some(1) => {
            let mut attempts: Vec<Ran> = Vec::new();
            // Where Helm refuses the plain upgrade (TA-REL-003), --install is one of the fixes.
            let mut fixes = testkit::explore::printed::COMMAND_FIXES.to_vec();
            if found.errors().iter().any(|f| f.id == "TA-REL-003") {
                fixes.push(testkit::explore::printed::INSTALL_FIX);
            }
            let run_attempts = |lab: &Lab, attempts: &mut Vec<Ran>| {
                'commands: for command in &commands {
                    for attempt in testkit::explore::printed::attempts_with(command, &fixes) {
                        let r = run_bounded(lab, &attempt.replace("--timeout 10m", "--timeout 3m"));
                        lab.note(&format!("un-fixed: exit {:?}: {}", r.code, attempt));
                        let (ok, stopped) = (r.ok(), r.code.is_none());
                        attempts.push(r);
                        if ok {
                            continue 'commands;
                        }
                        // Stopped by the bound, Helm leaves the release pending: every later
                        // attempt would fail on what the explorer did ("another operation … is
                        // in progress"), not on the state (live seed 1 state 3).
                        if stopped {
                            break 'commands;
                        }
                    }
                    break;
                }
            };
            run_attempts(lab, &mut attempts);
            // A pending release refuses every upgrade: its own fix (the rollback) runs, then the
            // attempts again (as the rehearsals do).
            if let Some(f) =
                found.report["findings"].as_array().into_iter().flatten().find(|f| f["id"] == "TA-REL-001" && f["severity"] == "error")
            {
                let fix: Vec<String> =
                    f["commands"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(String::from)).collect();
                if !fix.is_empty() {
                    attempts.push(lab.shell(&fix.join("\n")));
                    run_attempts(lab, &mut attempts);
                }
            }
            let after = observe::State::read(lab);
            let settled = Instant::now();
            let (observed, unobserved) = loop {
                let events =
                    lab.shell("kubectl get events -A --field-selector type=Warning -o custom-columns=MESSAGE:.message --no-headers");
                let mut seen = attempts.clone();
                seen.push(events);
                seen.push(Ran {
                    command: "the controllers' logs".into(),
                    code: Some(0),
                    stdout: lab.controller_logs(),
                    stderr: String::new(),
                    seconds: 0.0,
                });
                let mut observed = Vec::new();
                let mut unobserved = Vec::new();
                for f in found.errors() {
                    match verdict::observed(lab, &found, f, &seen, &before, &after) {
                        Some(how) => observed.push((f.clone(), how)),
                        None => unobserved.push(f.clone()),
                    }
                }
                if unobserved.is_empty() || settled.elapsed().as_secs() > 60 {
                    break (observed, unobserved);
                }
                std::thread::sleep(Duration::from_secs(5));
            };
            observed.iter().for_each(|(f, how)| lab.note(&format!("OBSERVED {} {}: {how}", f.id, f.subject)));
            // What the printed command (all fixes in) failed with masks what lies behind it.
            // The plan's own guard stops where a finding said it must (the downgrade guard names
            // TA-DIR-001): that finding predicted the failure.
            let explains = |failed: &Ran| {
                found
                    .errors()
                    .into_iter()
                    .find(|f| failed.stderr.contains(&format!("({})", f.id)))
                    .or_else(|| verdict::explained_by(&found, failed))
            };
            let last = attempts.iter().rev().find(|r| !r.command.starts_with("helm rollback"));
            // An upgrade that never finished (Helm's own failure unexplained by its text, or stopped
            // at the explorer's bound while `--wait` waited) stopped at what was observed to fail in
            // it: a refused manager Pod keeps `--wait` from the post-upgrade hooks (live seed 1
            // state 43: the quota refused the manager, and the hook Pods Pod Security would refuse
            // were never made).
            let masked_by = last.filter(|r| !r.ok()).and_then(|r| explains(r).or_else(|| observed.first().map(|(f, _)| f)));
            for f in &unobserved {
                match masked_by {
                    Some(m) => lab.note(&format!("not reached: {} {} (the upgrade stopped at {} first)", f.id, f.subject, m.id)),
                    // A skip the plan routes around (its steps land on ~2.3 first): the printed
                    // commands never make the jump the chart's gate refuses.
                    None if f.id == "TA-GATE-001" => lab.note(&format!("not run: {} {} (the plan's route is its fix)", f.id, f.subject)),
                    None => {
                        // The finding's own evidence, so the lab's notes show what the rule saw.
                        let evidence = found.report["findings"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|g| g["id"] == f.id.as_str() && g["subject"] == f.subject.as_str())
                            .flat_map(|g| g["evidence"].as_array().cloned().unwrap_or_default());
                        evidence.for_each(|e| lab.note(&format!("  {} evidence: {}", f.id, e.as_str().unwrap_or_default())));
                        out.push(disagreement(
                            "blocked-but-not-observed",
                            format!("{} {} observed in the un-fixed upgrade: {}", f.id, f.subject, f.message),
                            "neither its expected texts nor its damage",
                        ));
                    }
                }
            }
            let routed = found.errors().iter().all(|f| f.id == "TA-GATE-001");
            if observed.is_empty() && masked_by.is_none() && !found.errors().is_empty() && !routed {
                out.push(disagreement("blocked-but-nothing-failed", "an error finding observed", "the un-fixed upgrade showed none"));
            }
            for failed in attempts.iter().filter(|r| r.code.is_some_and(|c| c != 0)) {
                if explains(failed).is_none() {
                    out.push(disagreement(
                        "failed-unpredicted",
                        "every failure of the upgrade predicted by a finding",
                        format!("{failed}"),
                    ));
                }
            }
        }
        _ => lab.note(&format!("check refused the state (exit {:?}): {}", ran.code, ran.stderr.trim())),
    }
    out
}
