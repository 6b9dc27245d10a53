//! GitHub Actions: workflow commands (`::error file=…,line=…,title=…::…`) that put findings
//! inline on a pull request without a SARIF upload, and the short Markdown a job appends to
//! `$GITHUB_STEP_SUMMARY` (verdict, counts, the blocking findings, the first commands to run).
//!
//! Escaping follows GitHub's runner (actions/toolkit `packages/core/src/command.ts`,
//! `escapeData` and `escapeProperty`): in the message `%`, CR and LF are percent-encoded; in a
//! property also `:` and `,`.

use std::fmt::Write as _;

use super::findings::cell;
use crate::audit::finding::{Finding, Severity};
use crate::gitops_review::GitopsReview;
use crate::plan::Plan;
use crate::upgrade::check::CheckReport;

/// The environment variable GitHub Actions names the job's step summary file in.
pub const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// Appends `markdown` to the step summary when running in a GitHub Actions job. A summary that
/// cannot be written is reported and does not change the run's outcome (the gate is the exit
/// code, the summary only shows it).
pub fn step_summary(markdown: impl FnOnce() -> String) {
    let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty()) else { return };
    let written = std::fs::OpenOptions::new().append(true).create(true).open(&path).and_then(|mut f| {
        let mut text = markdown();
        text.push('\n');
        std::io::Write::write_all(&mut f, text.as_bytes())
    });
    if let Err(e) = written {
        eprintln!("warning: cannot append the summary to ${STEP_SUMMARY_ENV} ({}): {e}", std::path::Path::new(&path).display());
    }
}

/// At most this many findings and commands are listed in a step summary; the rest are counted.
const LISTED: usize = 10;

fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow command's name for a severity.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// One workflow command; `at` is a file relative to the repository root and a line.
fn annotation(f: &Finding, at: Option<(&str, u32)>, prefix: &str, out: &mut String) {
    let mut props = Vec::new();
    if let Some((file, line)) = at {
        props.push(format!("file={}", escape_property(file)));
        if line > 0 {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", escape_property(&format!("{} {}", f.id, f.title))));
    let mut message = format!("{prefix}{}: {}", f.subject, f.message);
    for line in f.fix.lines() {
        let _ = write!(message, "\nfix: {line}");
    }
    let _ = writeln!(out, "::{} {}::{}", command(f.severity), props.join(","), escape_data(&message));
}

/// `check --format github`: one command per finding (a cluster's findings have no file in the
/// repository, so they show on the run's summary page), then a notice with the verdict.
pub fn check_commands(r: &CheckReport, fail_on: Severity) -> String {
    let mut out = String::new();
    for f in &r.findings {
        annotation(f, None, "", &mut out);
    }
    let (verdict, counts) = (r.decision.verdict.as_str(), counts(&r.findings));
    let _ = writeln!(
        out,
        "::notice title={}::{}",
        escape_property("trainer-audit check"),
        escape_data(&format!("{verdict}: {}/{} {} → {} ({counts}; --fail-on {})", r.namespace, r.release, r.from, r.to, fail_on.as_str()))
    );
    out
}

/// `gitops --format github`: one command per finding at its GitOps file and line. `root` is
/// the reviewed tree as given on the command line, so that the file is relative to the
/// repository root the workflow runs in.
pub fn gitops_commands(review: &GitopsReview, root: &std::path::Path) -> String {
    let mut out = String::new();
    let prefix = if root.is_relative() && root != std::path::Path::new(".") { Some(root) } else { None };
    for f in review.findings() {
        let file = match prefix {
            Some(p) => p.join(&f.at.file).to_string_lossy().into_owned(),
            None => f.at.file.clone(),
        };
        annotation(&f.finding, Some((&file, f.at.line)), &format!("{}: ", f.reference), &mut out);
    }
    for r in review.references.iter().filter(|r| r.not_audited.is_some()) {
        let why = r.not_audited.as_deref().unwrap_or_default();
        let level = if review.fail_on >= Severity::Warning { "error" } else { "warning" };
        let _ = writeln!(
            out,
            "::{level} file={},line={},title={}::{}",
            escape_property(&r.at.file),
            r.at.line,
            escape_property("not audited"),
            escape_data(&format!("{} {}: {why}", r.engine.as_str(), r.object))
        );
    }
    out
}

/// `ready` or `blocked`: blocked when a finding is at or above `fail_on`.
pub fn verdict(findings: &[Finding], fail_on: Severity) -> &'static str {
    if findings.iter().any(|f| f.severity <= fail_on) {
        "blocked"
    } else {
        "ready"
    }
}

/// `2 error, 1 warning, 0 info`.
pub fn counts(findings: &[Finding]) -> String {
    let n = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    format!("{} error, {} warning, {} info", n(Severity::Error), n(Severity::Warning), n(Severity::Info))
}

/// The findings at or above `fail_on` as a table, at most [`LISTED`].
fn blocking_table<'a>(findings: impl Iterator<Item = (&'a Finding, String)>, out: &mut String) {
    let all: Vec<(&Finding, String)> = findings.collect();
    if all.is_empty() {
        return;
    }
    out.push_str("\n| Severity | Rule | Subject | Finding |\n|---|---|---|---|\n");
    for (f, subject) in all.iter().take(LISTED) {
        let _ = writeln!(out, "| {} | `{}` | `{}` | {} |", f.severity.as_str(), f.id, cell(subject), cell(&f.title));
    }
    if all.len() > LISTED {
        let _ = writeln!(out, "\n…and {} more.", all.len() - LISTED);
    }
}

/// The first commands of the blocking findings' fixes, in order, without repeats.
fn first_commands<'a>(findings: impl Iterator<Item = &'a Finding>, out: &mut String) {
    let mut commands: Vec<&str> = Vec::new();
    for f in findings {
        for c in &f.commands {
            if !commands.contains(&c.as_str()) {
                commands.push(c);
            }
        }
    }
    if commands.is_empty() {
        return;
    }
    out.push_str("\nFirst commands to run:\n\n```sh\n");
    for c in commands.iter().take(LISTED) {
        let _ = writeln!(out, "{c}");
    }
    out.push_str("```\n");
    if commands.len() > LISTED {
        let _ = writeln!(out, "\n…and {} more in the full report.", commands.len() - LISTED);
    }
}

fn badge(verdict: &str) -> &'static str {
    match verdict {
        "ready" | "pass" => "✅",
        "blocked" | "fail" => "❌",
        _ => "⚠️",
    }
}

/// The step summary of `check`.
pub fn check_summary(r: &CheckReport, fail_on: Severity) -> String {
    // The report's own decision: it also blocks on what could not be audited.
    let verdict = r.decision.verdict.as_str();
    let mut out = format!(
        "### {} Trainer upgrade check: {verdict}\n\n`{}/{}` {} → {} (installed with {}): {} (`--fail-on {}`)\n",
        badge(verdict),
        r.namespace,
        r.release,
        r.from,
        r.to,
        r.method.describe(),
        counts(&r.findings),
        fail_on.as_str()
    );
    let blocking = || r.findings.iter().filter(|f| f.severity <= fail_on);
    blocking_table(blocking().map(|f| (f, f.subject.clone())), &mut out);
    first_commands(blocking(), &mut out);
    out
}

/// The step summary of `plan`: the route, and what blocks each step.
pub fn plan_summary(p: &Plan) -> String {
    let all: Vec<&Finding> = p.steps.iter().flat_map(|s| s.preconditions.iter()).collect();
    let errors = all.iter().filter(|f| f.severity == Severity::Error).count();
    let verdict = if errors > 0 { "blocked" } else { "ready" };
    let route: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).collect();
    let mut out = format!(
        "### {} Trainer upgrade plan: {} → {}\n\n`{}/{}` route {} → {}: {} step{}, {errors} blocking finding{}\n",
        badge(verdict),
        p.from,
        p.to,
        p.namespace,
        p.release,
        p.from,
        route.join(" → "),
        p.steps.len(),
        if p.steps.len() == 1 { "" } else { "s" },
        if errors == 1 { "" } else { "s" },
    );
    let blocking = || all.iter().copied().filter(|f| f.severity == Severity::Error);
    blocking_table(blocking().map(|f| (f, f.subject.clone())), &mut out);
    first_commands(blocking(), &mut out);
    out
}

/// The step summary of `gitops`: per reference its verdict and counts, then the blocking findings.
pub fn gitops_summary(review: &GitopsReview) -> String {
    let fails = review.fails();
    let verdict = if fails { "blocked" } else { "ready" };
    let mut out = format!(
        "### {} Trainer GitOps review: {verdict}\n\n{} reference{} (`--fail-on {}`)\n\n| Reference | File | Change | Verdict | Counts |\n|---|---|---|---|---|\n",
        badge(verdict),
        review.references.len(),
        if review.references.len() == 1 { "" } else { "s" },
        review.fail_on.as_str()
    );
    for r in &review.references {
        let change = format!(
            "{} → {}",
            r.from.as_deref().or(r.from_written.as_deref()).unwrap_or("(new)"),
            r.to.as_deref().or(r.to_written.as_deref()).unwrap_or("?")
        );
        let _ = writeln!(
            out,
            "| `{}` | `{}:{}` | {} | {} | {} |",
            cell(&format!("{} {}", r.engine.as_str(), r.object)),
            cell(&r.at.file),
            r.at.line,
            cell(&change),
            r.verdict.as_str(),
            super::gitops::counts(r)
        );
    }
    let blocking = || review.findings().filter(|f| f.finding.severity <= review.fail_on);
    blocking_table(blocking().map(|f| (&f.finding, format!("{} ({}:{})", f.finding.subject, f.at.file, f.at.line))), &mut out);
    first_commands(blocking().map(|f| &f.finding), &mut out);
    out
}

/// The step summary of a fleet run (`check` or `plan` over several clusters): the verdicts and
/// one row per cluster.
pub fn fleet_summary(command: &str, rows: &[crate::fleet::audit::Row]) -> String {
    use crate::fleet::audit::Verdict;
    let worst = rows
        .iter()
        .map(|r| r.verdict)
        .find(|v| *v == Verdict::Failed)
        .or_else(|| rows.iter().map(|r| r.verdict).find(|v| *v == Verdict::Blocked));
    let verdict = match worst {
        Some(Verdict::Failed) => "failed",
        Some(_) => "blocked",
        None => "ready",
    };
    let mut out = format!(
        "### {} Trainer fleet {command}: {verdict}\n\n{}\n\n| Cluster | Installed | Target | Errors | Warnings | Verdict |\n|---|---|---|---|---|---|\n",
        badge(verdict),
        super::fleet::tally(rows)
    );
    for r in rows {
        let failed = r.verdict == Verdict::Failed;
        let n = |n: usize| if failed { "-".to_string() } else { n.to_string() };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            cell(&r.cluster),
            r.installed.as_deref().unwrap_or("-"),
            r.target.as_deref().unwrap_or("-"),
            n(r.errors),
            n(r.warnings),
            match &r.failure {
                Some(why) => format!("failed: {}", cell(why)),
                None => r.verdict.as_str().to_string(),
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Method;

    fn finding(id: &str, severity: Severity, commands: &[&str]) -> Finding {
        Finding {
            id: id.into(),
            severity,
            title: "CRD not owned, by the release".into(),
            subject: "CustomResourceDefinition/trainjobs.trainer.kubeflow.org".into(),
            location: String::new(),
            message: "100% of it: a\nb".into(),
            evidence: vec![],
            fix: commands.join("\n"),
            commands: commands.iter().map(|s| s.to_string()).collect(),
            fix_lines: vec![],
            adopt: None,
            source: "https://example.invalid".into(),
            expect: vec![],
            phase: Default::default(),
            variant: None,
        }
    }

    fn report(findings: Vec<Finding>) -> CheckReport {
        let counts = crate::audit::verdict::Counts::of(&findings);
        CheckReport {
            decision: crate::audit::verdict::Decision::new(counts, Severity::Error, Some("2.2.1"), Some("2.3.0")),
            inputs: crate::upgrade::check::Inputs {
                installed: String::new(),
                installed_chart: String::new(),
                target_chart: String::new(),
                kubernetes: String::new(),
            },
            release: "kubeflow-trainer".into(),
            namespace: "kubeflow-system".into(),
            method: Method::Helm,
            from: "2.2.1".into(),
            to: "2.3.0".into(),
            notes: vec![],
            warnings: vec![],
            findings,
        }
    }

    #[test]
    fn workflow_commands_escape_what_the_runner_would_split_on() {
        let out = check_commands(&report(vec![finding("TA-OWN-001", Severity::Error, &["kubectl annotate crd x a=b"])]), Severity::Error);
        let first = out.lines().next().unwrap();
        assert_eq!(
            first,
            "::error title=TA-OWN-001 CRD not owned%2C by the release::CustomResourceDefinition/trainjobs.trainer.kubeflow.org: 100%25 of it: a%0Ab%0Afix: kubectl annotate crd x a=b"
        );
        assert!(out
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("::notice title=trainer-audit check::blocked: kubeflow-system/kubeflow-trainer 2.2.1 → 2.3.0 (1 error"));
        assert_eq!(out.lines().count(), 2);
        let info = check_commands(&report(vec![finding("TA-X", Severity::Info, &[])]), Severity::Error);
        assert!(info.starts_with("::notice ") && info.contains("::ready: "), "{info}");
    }

    #[test]
    fn the_step_summary_names_the_verdict_the_blockers_and_their_commands_once() {
        let r = report(vec![
            finding("TA-OWN-001", Severity::Error, &["kubectl annotate crd x a=b", "kubectl label crd x c=d"]),
            finding("TA-OWN-002", Severity::Error, &["kubectl annotate crd x a=b"]),
            finding("TA-RT-001", Severity::Warning, &["kubectl get ctr"]),
        ]);
        let md = check_summary(&r, Severity::Error);
        assert!(md.starts_with("### ❌ Trainer upgrade check: blocked\n"), "{md}");
        assert!(md.contains("2 error, 1 warning, 0 info (`--fail-on error`)"), "{md}");
        assert!(md.contains("| error | `TA-OWN-002` |") && !md.contains("TA-RT-001"), "{md}");
        assert_eq!(md.matches("kubectl annotate crd x a=b").count(), 1, "{md}");
        assert!(!md.contains("kubectl get ctr"), "{md}");
        let warn = check_summary(&r, Severity::Warning);
        assert!(warn.contains("TA-RT-001") && warn.contains("kubectl get ctr"), "{warn}");
        let ready = check_summary(&report(vec![]), Severity::Error);
        assert!(ready.starts_with("### ✅ Trainer upgrade check: ready\n") && !ready.contains('|'), "{ready}");
    }
}
