//! Findings as text blocks and as a Markdown table, shared by every report that has findings.

use crate::audit::finding::{Finding, Severity};

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

pub fn text(findings: &[Finding], out: &mut String) {
    for f in findings {
        out.push_str(&format!("{:<7} {}  {}\n", f.severity.as_str(), f.id, f.title));
        out.push_str(&format!("        subject:  {}\n", f.subject));
        if !f.location.is_empty() {
            out.push_str(&format!("        location: {}\n", f.location));
        }
        out.push_str(&format!("        {}\n", f.message));
        for e in &f.evidence {
            out.push_str(&format!("        evidence: {e}\n"));
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
