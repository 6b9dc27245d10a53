//! The `check` report ([`crate::upgrade::check::CheckReport`]) as text and Markdown.

use crate::upgrade::check::CheckReport;

pub fn text(r: &CheckReport) -> String {
    text_painted(r, super::style::Paint::PLAIN, super::findings::Detail::Short)
}

/// [`text`] with severities coloured, short or verbose; the verdict line first.
pub fn text_painted(r: &CheckReport, paint: super::style::Paint, detail: super::findings::Detail) -> String {
    let mut out = format!("{}\n", r.decision.line());
    out.push_str(&format!("Upgrade check: {}/{} {} → {} (installed with {})\n", r.namespace, r.release, r.from, r.to, r.method.describe()));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push('\n');
    super::findings::text_painted(&r.findings, paint, detail, &mut out);
    out
}

pub fn markdown(r: &CheckReport) -> String {
    let mut out = format!(
        "## Trainer upgrade check: `{}/{}` {} → {}\n\n**Verdict: {}** (`--fail-on {}`)\n\nInstalled with {}.\n\n",
        r.namespace,
        r.release,
        r.from,
        r.to,
        r.decision.line(),
        r.decision.fail_on.as_str(),
        r.method.describe()
    );
    for n in r.notes.iter().chain(r.warnings.iter()) {
        out.push_str(&format!("- {n}\n"));
    }
    out.push('\n');
    super::findings::markdown(&r.findings, &mut out);
    out
}
