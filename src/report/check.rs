//! The `check` report ([`crate::upgrade::check::CheckReport`]) as text and Markdown, and as the
//! printer prints it in every format `check` offers for one cluster.

use super::document::{json_report, pretty, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use super::json_schema::Report as SchemaReport;
use crate::audit::verdict::Decision;
use crate::upgrade::check::CheckReport;

impl Document for CheckReport {
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError> {
        Ok(match format {
            Format::Text => text_painted(self, ctx.paint, ctx.detail, next(self, ctx).as_deref()),
            Format::Json | Format::Jsonl => json_report(SchemaReport::Check, self)?,
            Format::Sarif => pretty(&super::sarif::check_sarif(self, ctx.rules(), &files(ctx)?))?,
            Format::Markdown => markdown(self, next(self, ctx).as_deref()),
            Format::Github => super::github::check_commands(self, Some(&files(ctx)?)),
            Format::Html => super::html::check_page(ctx.cluster_name(), self, next(self, ctx).as_deref()),
            Format::Openmetrics => metrics(ctx.cluster_name(), self, ctx.read_at),
            other => return Err(unoffered(Command::Check, other)),
        })
    }

    fn decision(&self, _ctx: &Context) -> Option<Decision> {
        Some(self.decision.clone())
    }

    fn step_summary(&self, ctx: &Context) -> Option<String> {
        Some(super::github::check_summary(self, next(self, ctx).as_deref()))
    }
}

/// Where SARIF results and annotations place findings: the files the user gave, relative to the
/// current directory (the repository a workflow runs in).
fn files(ctx: &Context) -> Result<super::sarif::locate::Files, OutputError> {
    let root = std::env::current_dir().map_err(|e| OutputError::Write(format!("cannot read the current directory: {e}")))?;
    let g = &ctx.given;
    Ok(super::sarif::locate::Files::new(root, g.snapshot.clone(), g.values.clone(), g.chart.clone()))
}

/// The runbook command that comes next, unless the cluster is already at the target and ready.
fn next(r: &CheckReport, ctx: &Context) -> Option<String> {
    let done = r.decision.already_at.is_some() && r.decision.verdict == crate::audit::verdict::Verdict::Ready;
    if done {
        None
    } else {
        ctx.next_command()
    }
}

/// `check --format openmetrics` for one cluster.
fn metrics(name: &str, r: &CheckReport, read_at: Option<i64>) -> String {
    let method = super::openmetrics::method_name(r.method);
    let cluster = super::openmetrics::Cluster {
        cluster: name,
        verdict: r.decision.verdict.as_str(),
        exit_code: r.decision.exit_code(),
        installed: Some(&r.from),
        target: Some(&r.to),
        method: Some(&method),
        findings: Some(&r.findings),
        read_at,
    };
    super::openmetrics::render(&[cluster], r.decision.fail_on)
}

pub fn text(r: &CheckReport) -> String {
    text_painted(r, super::style::Paint::PLAIN, super::findings::Detail::Short, None)
}

/// [`text`] with severities coloured, short or verbose; the verdict line first, and `next`, the
/// command that comes next, last.
pub fn text_painted(r: &CheckReport, paint: super::style::Paint, detail: super::findings::Detail, next: Option<&str>) -> String {
    let mut out = format!("{}\n", r.decision.line());
    out.push_str(&format!("Upgrade check: {}/{} {} → {} ({})\n", r.namespace, r.release, r.from, r.to, r.method.installed()));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push('\n');
    super::findings::text_painted(&r.findings, paint, detail, &mut out);
    if let Some(next) = next {
        out.push_str(&format!("\nNext, the runbook for this cluster (its fixes, the upgrade, verification, rollback):\n  {next}\n"));
    }
    out
}

/// The report as Markdown; `next` is the command that comes next (the runbook).
pub fn markdown(r: &CheckReport, next: Option<&str>) -> String {
    let mut out = format!(
        "## Trainer upgrade check: `{}/{}` {} → {}\n\n**Verdict: {}** (`--fail-on {}`)\n\n{}.\n\n",
        r.namespace,
        r.release,
        r.from,
        r.to,
        r.decision.line(),
        r.decision.fail_on.as_str(),
        capitalised(&r.method.installed())
    );
    for n in r.notes.iter().chain(r.warnings.iter()) {
        out.push_str(&format!("- {n}\n"));
    }
    out.push('\n');
    super::findings::markdown(&r.findings, &mut out);
    if let Some(next) = next {
        out.push_str(&format!("\nNext, the runbook for this cluster:\n\n```sh\n{next}\n```\n"));
    }
    out
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
