//! Findings as text blocks and as a Markdown table, shared by every report that has findings.

use super::style::Paint;
use crate::audit::finding::{Finding, Severity};

/// How much a text report says: the short answer (each rule once, with its subjects and one
/// fix), or everything (each finding with its evidence, the failure it predicts and its sources).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Detail {
    #[default]
    Short,
    Verbose,
}

impl Detail {
    /// The detail `--verbose` asks for.
    pub fn of(verbose: bool) -> Detail {
        if verbose {
            Detail::Verbose
        } else {
            Detail::Short
        }
    }
}

/// The most evidence lines a report for people shows per finding; machine formats (JSON, JSON
/// Lines, SARIF) carry every one.
pub const EVIDENCE_SHOWN: usize = 20;

/// What a report for people says for the evidence it leaves out, and how to see it.
pub fn evidence_left_out(f: &Finding) -> Option<String> {
    let more = f.evidence.len().checked_sub(EVIDENCE_SHOWN).filter(|n| *n > 0)?;
    Some(format!("… and {more} more (`--format json` lists every one)"))
}

/// `1 error`, `2 warnings`, `0 info`: the one way every report counts a severity.
pub fn count(n: usize, severity: Severity) -> String {
    match severity {
        Severity::Info => format!("{n} info"),
        s => format!("{n} {}{}", s.as_str(), if n == 1 { "" } else { "s" }),
    }
}

/// What was found about a finding's subject, as a list item names it: the message when it opens
/// with the subject, else `subject: message` (the subject alone when there is no message).
pub fn found(f: &Finding) -> String {
    if f.message.is_empty() {
        f.subject.clone()
    } else if f.message.starts_with(&f.subject) {
        f.message.clone()
    } else {
        format!("{}: {}", f.subject, f.message)
    }
}

/// `0 errors, 4 warnings, 4 info`: counts in the words every report uses.
pub fn counts(c: &crate::audit::verdict::Counts) -> String {
    format!("{}, {}, {}", count(c.error, Severity::Error), count(c.warning, Severity::Warning), count(c.info, Severity::Info))
}

/// `N findings: a errors, b warnings, c info`.
pub fn summary(findings: &[Finding]) -> String {
    let of = |s: Severity| count(findings.iter().filter(|f| f.severity == s).count(), s);
    format!(
        "{} finding{}: {}, {}, {}",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        of(Severity::Error),
        of(Severity::Warning),
        of(Severity::Info)
    )
}

/// The findings grouped by (rule, severity), in report order: one entry per rule, its first
/// finding and all of them.
pub fn by_rule(findings: &[Finding]) -> Vec<(&Finding, Vec<&Finding>)> {
    let mut rules: Vec<(&Finding, Vec<&Finding>)> = Vec::new();
    for f in findings {
        match rules.iter_mut().find(|(first, _)| first.id == f.id && first.severity == f.severity) {
            Some((_, members)) => members.push(f),
            None => rules.push((f, vec![f])),
        }
    }
    rules
}

fn subjects<'a>(members: &[&'a Finding]) -> Vec<&'a str> {
    let mut subjects: Vec<&str> = members.iter().map(|f| f.subject.as_str()).collect();
    subjects.sort_unstable();
    subjects.dedup();
    subjects
}

/// Per rule, in report order: severity, id, how many findings, and their subjects (at most three
/// named). The id column is as wide as the longest id.
pub fn summary_lines(findings: &[Finding]) -> Vec<String> {
    let groups = by_rule(findings);
    let width = groups.iter().map(|(f, _)| f.id.len()).max().unwrap_or(0).max(11);
    groups
        .into_iter()
        .map(|(f, members)| {
            let subjects = subjects(&members);
            let shown = subjects.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            let more = if subjects.len() > 3 { format!(" and {} more below", subjects.len() - 3) } else { String::new() };
            format!("{:<7} {:<width$} {:>3}  {shown}{more}", f.severity.as_str(), f.id, members.len())
        })
        .collect()
}

/// An expected failure text as a sentence: who prints it, the text as a quoted excerpt (a
/// prefix the source's format string fixes, so it ends in `…` where the message goes on, and a
/// quote it opens is closed), and the versions it holds for.
pub fn expected_sentence(e: &crate::audit::finding::Expected) -> String {
    let who = match e.by {
        "helm" => "helm prints",
        "kube-apiserver" => "the API server answers",
        "event" => "an event reports",
        "controller" => "the controller logs",
        other => other,
    };
    let mut text = e.text.trim_end().to_string();
    let complete = text.ends_with(['.', '!', '?']) && text.matches('"').count() % 2 == 0;
    if !complete {
        text.push('…');
    }
    if text.matches('"').count() % 2 == 1 {
        text.push('"');
    }
    let versions: Vec<String> = [("Kubernetes", &e.kubernetes), ("Helm", &e.helm)]
        .into_iter()
        .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}")))
        .collect();
    let versions = if versions.is_empty() { String::new() } else { format!(" ({})", versions.join(", ")) };
    format!("If it fails, {who}{versions}: `{text}`.")
}

pub fn text(findings: &[Finding], out: &mut String) {
    text_painted(findings, Paint::PLAIN, Detail::Short, out)
}

/// The findings as text: the summary table, then one block per rule (short) or per finding
/// (verbose), then the count.
pub fn text_painted(findings: &[Finding], paint: Paint, detail: Detail, out: &mut String) {
    if !findings.is_empty() {
        out.push_str(&format!("Summary: {}\n", summary(findings)));
        for (line, (f, _)) in summary_lines(findings).into_iter().zip(by_rule(findings)) {
            // The line opens with the padded severity word; colour just that.
            let (word, rest) = line.split_at(7.min(line.len()));
            out.push_str(&format!("  {}{rest}\n", paint.severity(f.severity, word)));
        }
        out.push('\n');
    }
    match detail {
        Detail::Short => short_blocks(findings, paint, out),
        Detail::Verbose => verbose_blocks(findings, paint, out),
    }
    out.push_str(&format!("{}\n", summary(findings)));
}

/// One block per rule: its title, each subject with what was found, one fix for all of them.
fn short_blocks(findings: &[Finding], paint: Paint, out: &mut String) {
    let groups = by_rule(findings);
    for (f, members) in &groups {
        let word = format!("{:<7}", f.severity.as_str());
        out.push_str(&format!("{} {}  {}\n", paint.severity(f.severity, &word), f.id, f.title));
        // Each subject with what was found about it (the message, which often opens with it).
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut sorted = members.clone();
        sorted.sort_by(|a, b| (&a.subject, &a.message).cmp(&(&b.subject, &b.message)));
        for m in sorted {
            if seen.contains(&(m.subject.as_str(), m.message.as_str())) {
                continue;
            }
            seen.push((&m.subject, &m.message));
            out.push_str(&format!("        - {}\n", found(m)));
        }
        let mut label = "fix:";
        for text in super::fix::text_lines(&super::fix::merged(members)) {
            out.push_str(&format!("        {label:<5}{text}\n"));
            label = "";
        }
        out.push('\n');
    }
    if !groups.is_empty() {
        out.push_str("Details (evidence, expected failures, sources): --verbose, or `trainer-audit explain ID`.\n");
    }
}

/// Every finding with its message, evidence, expected failures, fix and source.
fn verbose_blocks(findings: &[Finding], paint: Paint, out: &mut String) {
    for f in findings {
        let word = format!("{:<7}", f.severity.as_str());
        out.push_str(&format!("{} {}  {}\n", paint.severity(f.severity, &word), f.id, f.title));
        out.push_str(&format!("        subject:  {}\n", f.subject));
        if !f.location.is_empty() {
            out.push_str(&format!("        location: {}\n", f.location));
        }
        out.push_str(&format!("        {}\n", f.message));
        for e in f.evidence.iter().take(EVIDENCE_SHOWN) {
            out.push_str(&format!("        evidence: {e}\n"));
        }
        if let Some(more) = evidence_left_out(f) {
            out.push_str(&format!("        evidence: {more}\n"));
        }
        for e in &f.expect {
            out.push_str(&format!("        expect:   {}\n", expected_sentence(e)));
        }
        out.push_str(&format!("        fix:      {}\n", f.fix.replace('\n', "\n                  ")));
        out.push_str(&format!("        source:   {}\n", f.source));
    }
}

/// Escapes what would break a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The findings as Markdown: a table of what was found (no commands in a cell), then one fix per
/// rule, its commands in `sh` blocks, then the count.
pub fn markdown(findings: &[Finding], out: &mut String) {
    if findings.is_empty() {
        out.push_str("No findings.\n");
        return;
    }
    out.push_str("| Severity | Rule | Subject | Finding |\n|---|---|---|---|\n");
    for f in findings {
        out.push_str(&format!("| {} | `{}` | `{}` | {} |\n", f.severity.as_str(), f.id, cell(&f.subject), cell(&f.message)));
    }
    out.push_str("\nFixes, one per rule:\n\n");
    for (f, members) in by_rule(findings) {
        let subjects: Vec<String> = subjects(&members).iter().map(|s| format!("`{}`", cell(s))).collect();
        out.push_str(&format!("- **`{}`** ({}) {}: {}\n\n", f.id, f.severity.as_str(), f.title, subjects.join(", ")));
        super::fix::markdown(&super::fix::merged(&members), "  ", out);
    }
    out.push_str(&format!("{}\n", summary(findings)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::finding::{Expected, FixLine};

    fn finding(subject: &str, fix: Vec<FixLine>) -> Finding {
        Finding {
            title: "t".into(),
            fix_lines: fix,
            source: "https://example.org/source".into(),
            ..Finding::about("TA-X-001", Severity::Warning, subject)
        }
    }

    #[test]
    fn one_fix_per_rule_shares_the_words_and_one_command_names_every_subject() {
        let fix = |name: &str| {
            vec![
                FixLine::Text("Protect it:".into()),
                FixLine::Command(format!("kubectl annotate crd {name} helm.sh/resource-policy=keep")),
                FixLine::Command(format!("kubectl label crd {name} x=y --overwrite")),
                FixLine::Command(format!("kubectl get crd {name} -o yaml > {name}.yaml")),
                FixLine::Text("Then upgrade.".into()),
            ]
        };
        let (a, b) = (finding("a", fix("a")), finding("b", fix("b")));
        let merged = super::super::fix::merged(&[&a, &b]);
        let want = [
            "Protect it:",
            "kubectl annotate crd a b helm.sh/resource-policy=keep",
            "kubectl label crd a b x=y --overwrite",
            "kubectl get crd a -o yaml > a.yaml",
            "kubectl get crd b -o yaml > b.yaml",
            "Then upgrade.",
        ];
        let got: Vec<&str> = merged.iter().map(FixLine::text).collect();
        assert_eq!(got, want);
        let mut out = String::new();
        text(&[a, b], &mut out);
        assert!(!out.contains("https://"), "no source URLs in the short text: {out}");
        assert_eq!(out.matches("TA-X-001  t").count(), 1, "one block per rule: {out}");
        assert!(out.contains("2 findings: 0 errors, 2 warnings, 0 info"), "{out}");
    }

    #[test]
    fn expected_texts_read_as_sentences_with_balanced_quotes() {
        let e = |text: &str| Expected { by: "event", text: text.into(), kubernetes: Some(">=1.32".into()), helm: None };
        assert_eq!(
            expected_sentence(&e("violates PodSecurity \"restricted:")),
            "If it fails, an event reports (Kubernetes >=1.32): `violates PodSecurity \"restricted:…\"`."
        );
        assert_eq!(expected_sentence(&e("the job failed.")), "If it fails, an event reports (Kubernetes >=1.32): `the job failed.`.");
        assert_eq!(count(1, Severity::Error), "1 error");
        assert_eq!(count(2, Severity::Warning), "2 warnings");
        assert_eq!(count(2, Severity::Info), "2 info");
    }

    #[test]
    fn people_see_twenty_evidence_lines_and_how_to_see_the_rest() {
        let mut f = finding("a", vec![]);
        f.evidence = (0..25).map(|i| format!("e{i}")).collect();
        let mut out = String::new();
        text_painted(&[f.clone()], Paint::PLAIN, Detail::Verbose, &mut out);
        assert_eq!(out.matches("evidence: e").count(), EVIDENCE_SHOWN, "{out}");
        assert!(out.contains("evidence: … and 5 more (`--format json` lists every one)"), "{out}");
        f.evidence.truncate(EVIDENCE_SHOWN);
        assert_eq!(evidence_left_out(&f), None);
    }
}
