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
pub fn step_summary(markdown: impl FnOnce() -> Option<String>) {
    let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty()) else { return };
    let Some(mut text) = markdown() else { return };
    let written = std::fs::OpenOptions::new().append(true).create(true).open(&path).and_then(|mut f| {
        text.push('\n');
        std::io::Write::write_all(&mut f, text.as_bytes())
    });
    if let Err(e) = written {
        eprintln!("warning: cannot append the summary to ${STEP_SUMMARY_ENV} ({}): {e}", std::path::Path::new(&path).display());
    }
}

/// At most this many subjects are named in a row of a step summary's table (the report in the
/// job's log names them all; the summary says so).
const NAMED: usize = 3;

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

/// One workflow command; `at` is a file relative to the repository root and a line (0: none).
fn annotation(severity: Severity, title: &str, at: Option<(&str, u32)>, message: &str, out: &mut String) {
    let mut props = Vec::new();
    if let Some((file, line)) = at {
        props.push(format!("file={}", escape_property(file)));
        if line > 0 {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", escape_property(title)));
    let _ = writeln!(out, "::{} {}::{}", command(severity), props.join(","), escape_data(message));
}

/// What an annotation of one rule says: each finding (subject: what was found), then the rule's
/// one fix under `Fix:`, commands indented, restore commands with it.
fn rule_message(members: &[&Finding], prefix: &str) -> String {
    let mut lines: Vec<String> = members
        .iter()
        .map(|f| {
            let what = super::findings::found(f);
            if members.len() > 1 {
                format!("- {prefix}{what}")
            } else {
                format!("{prefix}{what}")
            }
        })
        .collect();
    lines.dedup();
    let fix = super::fix::text_lines(&super::fix::merged(members));
    if !fix.is_empty() {
        lines.push(String::new());
        lines.push("Fix:".into());
        lines.extend(fix);
    }
    lines.join("\n")
}

/// A SARIF physical location as an annotation's file and line.
fn file_line(location: &serde_json::Value) -> Option<(String, u32)> {
    let file = location.pointer("/artifactLocation/uri")?.as_str()?.to_string();
    let line = location.pointer("/region/startLine").and_then(serde_json::Value::as_u64).unwrap_or(0);
    Some((file, u32::try_from(line).unwrap_or(0)))
}

/// `check --format github`: one command per rule, at the file its first finding is placed at
/// (as SARIF places it: a values file, the snapshot's line, the chart template), naming every
/// finding and the rule's one fix; then a notice with the verdict.
pub fn check_commands(r: &CheckReport, files: Option<&super::sarif::locate::Files>) -> String {
    let mut out = String::new();
    for (f, members) in super::findings::by_rule(&r.findings) {
        let at = files.and_then(|files| file_line(&files.locate(f)));
        let at = at.as_ref().map(|(file, line)| (file.as_str(), *line));
        annotation(f.severity, &format!("{} {}", f.id, f.title), at, &rule_message(&members, ""), &mut out);
    }
    let d = &r.decision;
    let _ = writeln!(
        out,
        "::notice title={}::{}",
        escape_property("trainer-audit check"),
        escape_data(&format!(
            "{}: {}/{} {} → {} ({}; --fail-on {})",
            d.verdict.as_str(),
            r.namespace,
            r.release,
            r.from,
            r.to,
            super::findings::counts(&d.counts),
            d.fail_on.as_str()
        ))
    );
    out
}

/// `gitops --format github`: one command per finding at its GitOps file and line, with its
/// fix; the review's files are named from the repository root (`GitopsReview::shown_from`), as
/// GitHub places annotations.
pub fn gitops_commands(review: &GitopsReview) -> String {
    let mut out = String::new();
    for f in review.findings() {
        let file = &f.at.file;
        let g = &f.finding;
        annotation(
            g.severity,
            &format!("{} {}", g.id, g.title),
            Some((file, f.at.line)),
            &rule_message(&[g], &format!("{}: ", f.reference)),
            &mut out,
        );
    }
    for r in review.references.iter().filter(|r| r.not_audited.is_some()) {
        let why = r.not_audited.as_deref().unwrap_or_default();
        let level = if review.fail_on >= Severity::Warning { Severity::Error } else { Severity::Warning };
        annotation(level, "not audited", Some((&r.at.file, r.at.line)), &format!("{} {}: {why}", r.engine.as_str(), r.object), &mut out);
    }
    out
}

/// The blocking findings, one row per rule (what it is, how many, the subjects), then every
/// blocking rule's fix in one shell block, each rule's commands under a comment naming it and
/// its restore commands after them. `subject` says how a finding is named in the table.
fn blocking(findings: &[&Finding], subject: impl Fn(&Finding) -> String, out: &mut String) {
    if findings.is_empty() {
        return;
    }
    let owned: Vec<Finding> = findings.iter().map(|f| (*f).clone()).collect();
    let groups = super::findings::by_rule(&owned);
    out.push_str("\n| Severity | Rule | Findings | Subjects |\n|---|---|---|---|\n");
    let mut cut = false;
    for (f, members) in &groups {
        let mut subjects: Vec<String> = members.iter().map(|m| subject(m)).collect();
        subjects.dedup();
        let named: Vec<String> = subjects.iter().take(NAMED).map(|s| format!("`{}`", cell(s))).collect();
        let more = if subjects.len() > NAMED {
            cut = true;
            format!(" and {} more", subjects.len() - NAMED)
        } else {
            String::new()
        };
        let _ =
            writeln!(out, "| {} | `{}` {} | {} | {}{more} |", f.severity.as_str(), f.id, cell(&f.title), members.len(), named.join(", "));
    }
    if cut {
        out.push_str("\nThe report in the job's log names every subject.\n");
    }
    let mut block = String::new();
    let mut listed: Vec<String> = Vec::new();
    for (f, members) in &groups {
        // A command an earlier rule's fix lists already is not listed again.
        let commands: Vec<String> = super::fix::commands_with_restores(&super::fix::merged(members))
            .into_iter()
            .filter(|c| c.starts_with('#') || !listed.contains(c))
            .collect();
        if commands.iter().all(|c| c.starts_with('#')) {
            continue;
        }
        let _ = writeln!(block, "# {} {}", f.id, f.title);
        for c in commands {
            let _ = writeln!(block, "{c}");
            listed.push(c);
        }
    }
    if !block.is_empty() {
        let _ =
            write!(out, "\nCommands to run, one fix per rule (the report in the job's log has each fix in full):\n\n```sh\n{block}```\n");
    }
}

/// The badge a step summary's heading opens with.
pub fn badge(verdict: &str) -> &'static str {
    match verdict {
        "ready" | "pass" => "✅",
        "blocked" | "fail" => "❌",
        _ => "⚠️",
    }
}

/// The step summary of `check`; `next` is the command that comes next (the runbook).
pub fn check_summary(r: &CheckReport, next: Option<&str>) -> String {
    // The report's own decision: it also blocks on what could not be audited.
    let d = &r.decision;
    let verdict = d.verdict.as_str();
    let mut out = format!(
        "### {} Trainer upgrade check: {verdict}\n\n`{}/{}` {} → {} ({}): {} (`--fail-on {}`)\n",
        badge(verdict),
        r.namespace,
        r.release,
        r.from,
        r.to,
        r.method.installed(),
        super::findings::counts(&d.counts),
        d.fail_on.as_str()
    );
    let blocking_findings: Vec<&Finding> = r.findings.iter().filter(|f| f.severity <= d.fail_on).collect();
    blocking(&blocking_findings, |f| f.subject.clone(), &mut out);
    if let Some(next) = next {
        let _ = write!(out, "\nNext, the runbook for this cluster:\n\n```sh\n{next}\n```\n");
    }
    out
}

/// The step summary of `plan`: the route, and what blocks each step.
pub fn plan_summary(p: &Plan) -> String {
    let d = p.decision();
    let all: Vec<&Finding> = p.steps.iter().flat_map(|s| s.preconditions.iter()).collect();
    let blocking_findings: Vec<&Finding> = all.iter().copied().filter(|f| f.severity <= d.fail_on).collect();
    let verdict = d.verdict.as_str();
    let route: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).collect();
    let n = blocking_findings.len();
    let mut out = format!(
        "### {} Trainer upgrade plan: {} → {}\n\n`{}/{}` route {} → {}: {} step{}, {n} blocking finding{}\n",
        badge(verdict),
        p.from,
        p.to,
        p.namespace,
        p.release,
        p.from,
        route.join(" → "),
        p.steps.len(),
        if p.steps.len() == 1 { "" } else { "s" },
        if n == 1 { "" } else { "s" },
    );
    blocking(&blocking_findings, |f| f.subject.clone(), &mut out);
    out
}

/// The step summary of `gitops`: per reference its verdict and counts, then the blocking findings.
pub fn gitops_summary(review: &GitopsReview) -> String {
    let verdict = review.decision().verdict.as_str();
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
            r.verdict.label(),
            super::findings::counts(&r.counts)
        );
    }
    let located: Vec<&crate::gitops_review::LocatedFinding> = review.findings().filter(|f| f.finding.severity <= review.fail_on).collect();
    let findings: Vec<&Finding> = located.iter().map(|f| &f.finding).collect();
    let at = |f: &Finding| {
        located
            .iter()
            .find(|l| {
                std::ptr::eq(&l.finding, f) || (l.finding.id == f.id && l.finding.subject == f.subject && l.finding.message == f.message)
            })
            .map(|l| format!("{} ({}:{})", f.subject, l.at.file, l.at.line))
            .unwrap_or_else(|| f.subject.clone())
    };
    blocking(&findings, at, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Method;

    fn finding(id: &str, severity: Severity, commands: &[&str]) -> Finding {
        Finding {
            title: "CRD not owned, by the release".into(),
            message: "100% of it: a\nb".into(),
            fix: commands.join("\n"),
            commands: commands.iter().map(|s| s.to_string()).collect(),
            source: "https://example.invalid".into(),
            ..Finding::about(id, severity, "CustomResourceDefinition/trainjobs.trainer.kubeflow.org")
        }
    }

    fn report(findings: Vec<Finding>, fail_on: Severity) -> CheckReport {
        let counts = crate::audit::verdict::Counts::of(&findings);
        CheckReport {
            decision: crate::audit::verdict::Decision::new(counts, fail_on, Some("2.2.1"), Some("2.3.0")),
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
    fn workflow_commands_escape_what_the_runner_would_split_on_and_say_the_fix_once() {
        let out =
            check_commands(&report(vec![finding("TA-OWN-001", Severity::Error, &["kubectl annotate crd x a=b"])], Severity::Error), None);
        let first = out.lines().next().unwrap();
        assert_eq!(
            first,
            "::error title=TA-OWN-001 CRD not owned%2C by the release::CustomResourceDefinition/trainjobs.trainer.kubeflow.org: 100%25 of it: a%0Ab%0A%0AFix:%0A  kubectl annotate crd x a=b"
        );
        assert!(!out.contains("fix: "), "no prefix per line: {out}");
        assert!(out.lines().nth(1).unwrap().starts_with(
            "::notice title=trainer-audit check::blocked: kubeflow-system/kubeflow-trainer 2.2.1 → 2.3.0 (1 error, 0 warnings"
        ));
        assert_eq!(out.lines().count(), 2);
        let info = check_commands(&report(vec![finding("TA-X", Severity::Info, &[])], Severity::Error), None);
        assert!(info.starts_with("::notice ") && info.contains("::ready: "), "{info}");
        // One annotation per rule, naming each subject.
        let mut two = vec![finding("TA-OWN-001", Severity::Error, &["kubectl annotate crd x a=b"]); 2];
        two[1].subject = "CustomResourceDefinition/y".into();
        two[1].fix = "kubectl annotate crd y a=b".into();
        two[1].commands = vec![two[1].fix.clone()];
        let out = check_commands(&report(two, Severity::Error), None);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(out.contains("%0A- CustomResourceDefinition/y: ") && out.contains("kubectl annotate crd x y a=b"), "{out}");
    }

    #[test]
    fn the_step_summary_names_the_verdict_the_blockers_and_their_commands_once() {
        let findings = vec![
            finding("TA-OWN-001", Severity::Error, &["kubectl annotate crd x a=b", "kubectl label crd x c=d"]),
            finding("TA-OWN-002", Severity::Error, &["kubectl annotate crd x a=b"]),
            finding("TA-RT-001", Severity::Warning, &["kubectl get ctr"]),
        ];
        let md = check_summary(&report(findings.clone(), Severity::Error), Some("trainer-audit runbook -o runbook.md"));
        assert!(md.starts_with("### ❌ Trainer upgrade check: blocked\n"), "{md}");
        assert!(md.contains("installed with Helm): 2 errors, 1 warning, 0 info (`--fail-on error`)"), "{md}");
        assert!(md.contains("| error | `TA-OWN-002` ") && !md.contains("TA-RT-001"), "{md}");
        assert_eq!(md.matches("kubectl annotate crd x a=b").count(), 1, "{md}");
        assert!(!md.contains("kubectl get ctr"), "{md}");
        assert!(md.ends_with("```sh\ntrainer-audit runbook -o runbook.md\n```\n"), "{md}");
        let warn = check_summary(&report(findings, Severity::Warning), None);
        assert!(warn.contains("TA-RT-001") && warn.contains("kubectl get ctr"), "{warn}");
        let ready = check_summary(&report(vec![], Severity::Error), None);
        assert!(ready.starts_with("### ✅ Trainer upgrade check: ready\n") && !ready.contains('|'), "{ready}");
    }
}
