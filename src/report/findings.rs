//! Findings as text blocks and as a Markdown table, shared by every report that has findings.

use super::style::Paint;
use crate::audit::finding::{Finding, FixLine, Severity};

/// `N findings: a error, b warning, c info`.
pub fn summary(findings: &[Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    format!(
        "{} finding{}: {} error, {} warning, {} info",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    )
}

/// Per rule, in report order: severity, id, how many findings, and their subjects (at most three
/// named).
pub fn summary_lines(findings: &[Finding]) -> Vec<String> {
    let mut rules: Vec<(&Finding, Vec<&str>)> = Vec::new();
    for f in findings {
        match rules.iter_mut().find(|(first, _)| first.id == f.id && first.severity == f.severity) {
            Some((_, subjects)) => subjects.push(&f.subject),
            None => rules.push((f, vec![&f.subject])),
        }
    }
    rules
        .into_iter()
        .map(|(f, mut subjects)| {
            let count = subjects.len();
            subjects.sort_unstable();
            subjects.dedup();
            let shown = subjects.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            let more = if subjects.len() > 3 { format!(" and {} more", subjects.len() - 3) } else { String::new() };
            format!("{:<7} {:<12} {:>3}  {shown}{more}", f.severity.as_str(), f.id, count)
        })
        .collect()
}

/// The first finding of each (rule, severity), in the order [`summary_lines`] lists them.
fn first_of_each_rule(findings: &[Finding]) -> Vec<&Finding> {
    let mut firsts: Vec<&Finding> = Vec::new();
    for f in findings {
        if !firsts.iter().any(|x| x.id == f.id && x.severity == f.severity) {
            firsts.push(f);
        }
    }
    firsts
}

pub fn text(findings: &[Finding], out: &mut String) {
    text_painted(findings, Paint::PLAIN, out)
}

/// [`text`] with the severities coloured.
pub fn text_painted(findings: &[Finding], paint: Paint, out: &mut String) {
    if !findings.is_empty() {
        out.push_str(&format!("Summary: {}\n", summary(findings)));
        for (line, f) in summary_lines(findings).into_iter().zip(first_of_each_rule(findings)) {
            // The line opens with the padded severity word; colour just that.
            let (word, rest) = line.split_at(7.min(line.len()));
            out.push_str(&format!("  {}{rest}\n", paint.severity(f.severity, word)));
        }
        out.push('\n');
    }
    for f in findings {
        let word = format!("{:<7}", f.severity.as_str());
        out.push_str(&format!("{} {}  {}\n", paint.severity(f.severity, &word), f.id, f.title));
        out.push_str(&format!("        subject:  {}\n", f.subject));
        if !f.location.is_empty() {
            out.push_str(&format!("        location: {}\n", f.location));
        }
        out.push_str(&format!("        {}\n", f.message));
        for e in &f.evidence {
            out.push_str(&format!("        evidence: {e}\n"));
        }
        for e in &f.expect {
            let versions: Vec<String> = [("Kubernetes", &e.kubernetes), ("Helm", &e.helm)]
                .into_iter()
                .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}")))
                .collect();
            let versions = if versions.is_empty() { String::new() } else { format!(" ({})", versions.join(", ")) };
            out.push_str(&format!("        fails:    {}{versions} prints: {}\n", e.by, e.text));
        }
        out.push_str(&format!("        fix:      {}\n", f.fix.replace('\n', "\n                  ")));
        out.push_str(&format!("        source:   {}\n", f.source));
    }
    out.push_str(&format!("{}\n", summary(findings)));
}

/// Escapes what would break a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(findings: &[Finding], out: &mut String) {
    if findings.is_empty() {
        out.push_str("No findings.\n");
        return;
    }
    out.push_str("| Severity | Rule | Subject | Finding | Fix |\n|---|---|---|---|---|\n");
    for f in findings {
        out.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} |\n",
            f.severity.as_str(),
            f.id,
            cell(&f.subject),
            cell(&f.message),
            cell(&f.fix)
        ));
    }
    out.push_str(&format!("\n{}\n", summary(findings)));
}

/// A finding's fix in Markdown: explanations as text, runs of commands as `sh` blocks that
/// hold commands only, every line indented by `indent`.
pub fn fix_markdown(f: &Finding, indent: &str, out: &mut String) {
    let mut in_block = false;
    for line in &f.fix_lines {
        match line {
            FixLine::Command(c) => {
                if !in_block {
                    out.push_str(&format!("{indent}```sh\n"));
                    in_block = true;
                }
                out.push_str(&format!("{indent}{c}\n"));
            }
            FixLine::Text(t) => {
                if in_block {
                    out.push_str(&format!("{indent}```\n\n"));
                    in_block = false;
                }
                out.push_str(&format!("{indent}{t}\n\n"));
            }
        }
    }
    if in_block {
        out.push_str(&format!("{indent}```\n\n"));
    }
}

/// A finding's fix as shell text: commands as they are, explanations as `#` comments.
pub fn fix_shell(f: &Finding) -> Vec<String> {
    f.fix_lines
        .iter()
        .map(|l| match l {
            FixLine::Command(c) => c.clone(),
            FixLine::Text(t) => format!("# {t}"),
        })
        .collect()
}
