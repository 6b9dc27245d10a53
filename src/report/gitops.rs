//! The GitOps review as text (a CI log) and as Markdown (a pull-request comment): a summary
//! first — per reference its file, engine, from → to, verdict and counts — then each reference's
//! route, chart diff in short, notes and findings, each at its GitOps file and line (folded in
//! `<details>` in Markdown).

use std::fmt::Write as _;
use std::path::Path;

use super::document::{json_report, pretty, unoffered, Context, Document, OutputError};
use super::findings::{cell, Detail};
use super::format::{Command, Format};
use crate::audit::finding::Severity;
use crate::audit::verdict::Decision;
use crate::gitops_review::{GitopsReview, LocatedFinding, Outcome, ReferenceReview, Verdict};

/// `gitops`'s report: what it made, the tree's root as given (SARIF records it as the base of
/// its locations) and the tree's place in its repository (`gitops_review::repo_prefix`): what a
/// person reads (text, Markdown, step summary, annotations, Code Quality) names files from the
/// repository root, JSON and SARIF from the tree.
pub struct GitopsDocument<'a> {
    pub outcome: &'a Outcome,
    pub root: &'a Path,
    pub repo_prefix: Option<String>,
}

impl Document for GitopsDocument<'_> {
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError> {
        let review = match self.outcome {
            Outcome::List { scan, comparison } => {
                return match format {
                    Format::Json => pretty(&serde_json::json!({ "scan": scan, "comparison": comparison })),
                    _ => {
                        let mut out = crate::gitops::text::scan(scan, ctx.detail == Detail::Verbose);
                        if let Some(c) = comparison {
                            out.push('\n');
                            out.push_str(&crate::gitops::text::comparison(c));
                        }
                        Ok(out)
                    }
                };
            }
            Outcome::Review(review) => review,
        };
        let shown = || review.shown_from(self.repo_prefix.as_deref());
        Ok(match format {
            Format::Text => text_detailed(&shown(), ctx.detail),
            Format::Markdown => markdown(&shown()),
            Format::Json => json_report(super::json_schema::Report::Gitops, &json(review).map_err(|e| OutputError::Write(e.to_string()))?)?,
            Format::Sarif => {
                // An id the review pack shares with the upgrade rules is described in the
                // review's words (the engine-aware ones).
                let mut rules = ctx.rules().to_vec();
                rules.sort_by_key(|r| r.scope != crate::audit::rules::Scope::Review);
                pretty(&super::gitops_sarif::sarif(review, &rules, self.root))?
            }
            Format::Codequality => pretty(&super::gitops_sarif::codequality(&shown()))?,
            Format::Github => super::github::gitops_commands(&shown()),
            other => return Err(unoffered(Command::Gitops, other)),
        })
    }

    fn decision(&self, _ctx: &Context) -> Option<Decision> {
        match self.outcome {
            Outcome::Review(review) => Some(review.decision()),
            Outcome::List { .. } => None,
        }
    }

    fn step_summary(&self, _ctx: &Context) -> Option<String> {
        match self.outcome {
            Outcome::Review(review) => Some(super::github::gitops_summary(&review.shown_from(self.repo_prefix.as_deref()))),
            Outcome::List { .. } => None,
        }
    }
}

fn change(r: &ReferenceReview) -> String {
    let to = r.to.as_deref().or(r.to_written.as_deref()).unwrap_or("?");
    let to = match (&r.to_written, &r.to) {
        (Some(w), Some(t)) if w != t => format!("{t} ({w})"),
        _ => to.to_string(),
    };
    match (&r.from_written, &r.from, r.status) {
        (Some(w), Some(f), _) if w != f => format!("{f} ({w}) → {to}"),
        (Some(_), Some(f), _) | (None, Some(f), "changed") if f.as_str() != to => format!("{f} → {to}"),
        (Some(w), None, _) => format!("{w} → {to}"),
        (None, _, "added") => format!("(new) → {to}"),
        _ => to,
    }
}

fn route(r: &ReferenceReview) -> String {
    match r.route.len() {
        0 => "none (no version change)".into(),
        1 => "direct".into(),
        _ => format!("via {}", r.route[..r.route.len() - 1].join(", ")),
    }
}

/// `0 errors, 4 warnings, 4 info`: the counts in the words every report uses.
pub fn counts(r: &ReferenceReview) -> String {
    super::findings::counts(&r.counts)
}

/// A reference's verdict in `check`'s words: `ready`, `blocked: 1 error, 2 warnings`, or
/// `not audited`.
fn verdict_line(r: &ReferenceReview, fail_on: Severity) -> String {
    // The reference's own verdict (blocked also when it could not be audited), with its counts.
    crate::audit::verdict::Decision { verdict: r.verdict, ..crate::audit::verdict::Decision::new(r.counts, fail_on, None, None) }.line()
}

fn heading(review: &GitopsReview) -> String {
    let n = review.references.len();
    let failing = review.references.iter().filter(|r| r.verdict == Verdict::Blocked).count();
    let unknown = review.references.iter().filter(|r| r.verdict == Verdict::NotAudited).count();
    let mut s = format!(
        "{n} reference{} audited: {failing} blocked at --fail-on {}, {unknown} not audited",
        if n == 1 { "" } else { "s" },
        review.fail_on.as_str()
    );
    if !review.unchanged.is_empty() || !review.removed.is_empty() {
        let _ = write!(s, "; {} unchanged, {} removed against the base", review.unchanged.len(), review.removed.len());
    }
    if review.cluster {
        s.push_str("; cluster checks included");
    }
    s
}

pub fn text(review: &GitopsReview) -> String {
    text_detailed(review, Detail::Short)
}

/// The review as text: the short answer (per reference, one block per rule with its subjects
/// and one fix, no sources), or with [`Detail::Verbose`] every finding with its evidence, chart
/// file and sources.
pub fn text_detailed(review: &GitopsReview, detail: Detail) -> String {
    let mut out = format!("{}\n", review.decision().line());
    let _ = writeln!(out, "Kubeflow Trainer GitOps review: {}", heading(review));
    for r in &review.references {
        let _ = writeln!(out, "\n{} {} ({})", r.engine.as_str(), r.object, r.at);
        let _ = writeln!(out, "  change:   {} [{}]", change(r), r.status);
        if let Some(why) = &r.not_audited {
            let _ = writeln!(out, "  verdict:  {}: {why}", r.verdict.label());
        } else {
            let _ = writeln!(out, "  route:    {}", route(r));
            let _ = writeln!(out, "  release:  {} in {}", r.release.as_deref().unwrap_or("?"), r.namespace.as_deref().unwrap_or("?"));
            let _ = writeln!(out, "  verdict:  {}", verdict_line(r, review.fail_on));
        }
        for (i, line) in r.diff.iter().flat_map(|d| d.lines()).enumerate() {
            let _ = writeln!(out, "  {}{line}", if i == 0 { "diff:     " } else { "          " });
        }
        for n in &r.notes {
            let _ = writeln!(out, "  note:     {n}");
        }
        for p in &r.problems {
            let at = p.at.as_ref().map(|a| format!("  [{a}]")).unwrap_or_default();
            let _ = writeln!(out, "  unknown:  {}{at}", p.message);
        }
        match detail {
            Detail::Short => rule_blocks(&r.findings, &mut out),
            Detail::Verbose => r.findings.iter().for_each(|f| finding_text(f, &mut out)),
        }
    }
    for removed in &review.removed {
        let _ = writeln!(out, "\nremoved: {} {} ({}): not audited", removed.engine.as_str(), removed.object, removed.at);
    }
    if !review.tree_problems.is_empty() {
        let n = review.tree_problems.len();
        let _ = writeln!(out, "\n{n} problem{} reading the tree:", if n == 1 { "" } else { "s" });
        for p in &review.tree_problems {
            let _ = writeln!(out, "  {}{}", p.at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default(), p.message);
        }
    }
    let all: Vec<_> = review.findings().map(|f| f.finding.clone()).collect();
    if detail == Detail::Short && !all.is_empty() {
        out.push_str("\nDetails (evidence, chart files, sources): --verbose, or `trainer-audit explain ID`.\n");
    }
    let _ = writeln!(out, "\n{}", super::findings::summary(&all));
    out
}

/// A reference's findings, one block per rule (and severity): the title, each subject with what
/// was found and where in the GitOps files, then one fix for all of them.
fn rule_blocks(findings: &[LocatedFinding], out: &mut String) {
    let mut groups: Vec<Vec<&LocatedFinding>> = Vec::new();
    for f in findings {
        match groups.iter_mut().find(|g| g[0].finding.id == f.finding.id && g[0].finding.severity == f.finding.severity) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    for members in groups {
        let g = &members[0].finding;
        let _ = writeln!(out, "\n  {:<7} {}  {}", g.severity.as_str(), g.id, g.title);
        for m in &members {
            let _ = writeln!(out, "          - {}  [{}]", super::findings::found(&m.finding), m.at);
        }
        let mut label = "fix:";
        let findings: Vec<&crate::audit::finding::Finding> = members.iter().map(|m| &m.finding).collect();
        for line in super::fix::text_lines(&super::fix::merged(&findings)) {
            let _ = writeln!(out, "          {label:<5}{line}");
            label = "";
        }
    }
}

fn finding_text(f: &LocatedFinding, out: &mut String) {
    let g = &f.finding;
    let _ = writeln!(out, "\n  {:<7} {}  {}", g.severity.as_str(), g.id, g.title);
    let _ = writeln!(out, "          at:       {}", f.at);
    for rel in &f.related {
        let _ = writeln!(out, "          see:      {} ({})", rel.at, rel.what);
    }
    let _ = writeln!(out, "          subject:  {}", g.subject);
    if !g.location.is_empty() {
        let _ = writeln!(out, "          chart:    {}", g.location);
    }
    let _ = writeln!(out, "          {}", g.message);
    for e in g.evidence.iter().take(super::findings::EVIDENCE_SHOWN) {
        let _ = writeln!(out, "          evidence: {e}");
    }
    if let Some(more) = super::findings::evidence_left_out(g) {
        let _ = writeln!(out, "          evidence: {more}");
    }
    let _ = writeln!(out, "          fix:      {}", g.fix.replace('\n', "\n                    "));
    let _ = writeln!(out, "          source:   {}", g.source);
}

fn badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Ready => "✅ ready",
        Verdict::Blocked => "❌ blocked",
        Verdict::NotAudited => "⚠️ not audited",
        other => other.label(),
    }
}

pub fn markdown(review: &GitopsReview) -> String {
    let mut out = String::from("## Kubeflow Trainer GitOps review\n\n");
    let _ = writeln!(out, "**Verdict: {}** (`--fail-on {}`)\n", review.decision().line(), review.fail_on.as_str());
    let _ = writeln!(out, "{}.\n", heading(review));
    if !review.references.is_empty() {
        out.push_str("| Reference | File | Engine | Change | Verdict | Errors | Warnings | Info |\n|---|---|---|---|---|---:|---:|---:|\n");
        for r in &review.references {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} | {} | {} |",
                cell(&r.object.to_string()),
                cell(&format!("{}:{}", r.at.file, r.at.line)),
                r.engine.as_str(),
                cell(&change(r)),
                badge(r.verdict),
                r.counts.error,
                r.counts.warning,
                r.counts.info
            );
        }
        out.push('\n');
    }
    for r in &review.references {
        let what = r.not_audited.clone().unwrap_or_else(|| counts(r));
        let _ = writeln!(out, "<details>\n<summary>{} {}: {}</summary>\n", r.engine.as_str(), html(&r.object.to_string()), html(&what));
        if r.not_audited.is_none() {
            let _ = writeln!(
                out,
                "Route: {}. Release `{}` in `{}`.\n",
                route(r),
                r.release.as_deref().unwrap_or("?"),
                r.namespace.as_deref().unwrap_or("?")
            );
        }
        let diff: Vec<String> = r.diff.iter().flat_map(|d| d.lines()).collect();
        if !diff.is_empty() {
            out.push_str("Chart diff:\n");
            for line in diff {
                let _ = writeln!(out, "- {}", cell(&line));
            }
            out.push('\n');
        }
        for p in &r.problems {
            let at = p.at.as_ref().map(|a| format!(" (`{}:{}`)", a.file, a.line)).unwrap_or_default();
            let _ = writeln!(out, "- unknown: {}{at}", cell(&p.message));
        }
        for n in &r.notes {
            let _ = writeln!(out, "- note: {}", cell(n));
        }
        if !r.findings.is_empty() {
            out.push_str("\n| Severity | Rule | At | Subject | Finding |\n|---|---|---|---|---|\n");
            for f in &r.findings {
                let _ = writeln!(
                    out,
                    "| {} | `{}` | `{}:{}` | `{}` | {} |",
                    f.finding.severity.as_str(),
                    f.finding.id,
                    cell(&f.at.file),
                    f.at.line,
                    cell(&f.finding.subject),
                    cell(&f.finding.message)
                );
            }
            out.push_str("\nFixes, one per rule:\n\n");
            let findings: Vec<crate::audit::finding::Finding> = r.findings.iter().map(|f| f.finding.clone()).collect();
            for (f, members) in super::findings::by_rule(&findings) {
                let mut subjects: Vec<String> = members.iter().map(|m| format!("`{}`", cell(&m.subject))).collect();
                subjects.dedup();
                let _ = writeln!(out, "- **{}** {} ({}):\n", f.id, subjects.join(", "), f.title);
                super::fix::markdown(&super::fix::merged(&members), "  ", &mut out);
            }
        }
        out.push_str("</details>\n\n");
    }
    for removed in &review.removed {
        let _ = writeln!(
            out,
            "- removed: {} {} (`{}:{}`), not audited",
            removed.engine.as_str(),
            removed.object,
            removed.at.file,
            removed.at.line
        );
    }
    let all: Vec<_> = review.findings().map(|f| f.finding.clone()).collect();
    let _ = writeln!(out, "{}", super::findings::summary(&all));
    out
}

/// Text inside HTML (`<summary>`).
fn html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The JSON document: the verdict and its counts at the top, the review, and every finding once
/// more at the top for tools that read findings only.
pub fn json(review: &GitopsReview) -> Result<serde_json::Value, serde_json::Error> {
    let mut doc = serde_json::to_value(review.decision())?;
    let body = serde_json::to_value(review)?;
    if let (Some(doc), serde_json::Value::Object(body)) = (doc.as_object_mut(), body) {
        for (k, v) in body {
            doc.entry(k).or_insert(v);
        }
    }
    doc["findings"] = serde_json::to_value(review.findings().collect::<Vec<_>>())?;
    Ok(doc)
}
