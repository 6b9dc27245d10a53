//! The `check` report ([`crate::upgrade::check::CheckReport`]) as text and Markdown, and as the
//! printer prints it in every format `check` offers for one cluster.

use super::document::{json_report, pretty, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use super::json_schema::Report as SchemaReport;
use crate::audit::verdict::Decision;
use crate::upgrade::check::CheckReport;

impl Document for CheckReport {
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError> {
        let fail_on = self.decision.fail_on;
        Ok(match format {
            Format::Text => text_painted(self, ctx.paint, ctx.detail),
            Format::Json | Format::Jsonl => json_report(SchemaReport::Check, self)?,
            Format::Sarif => {
                let root = std::env::current_dir().map_err(|e| OutputError::Write(format!("cannot read the current directory: {e}")))?;
                let g = &ctx.given;
                let files = super::sarif::locate::Files::new(root, g.snapshot.clone(), g.values.clone(), g.chart.clone());
                pretty(&super::sarif::check_sarif(self, ctx.rules(), &files))?
            }
            Format::Markdown => markdown(self),
            Format::Github => super::github::check_commands(self, fail_on),
            Format::Html => super::html::check_page(ctx.cluster_name(), self, fail_on),
            Format::Openmetrics => metrics(ctx.cluster_name(), self, ctx.read_at),
            other => return Err(unoffered(Command::Check, other)),
        })
    }

    fn decision(&self, _ctx: &Context) -> Option<Decision> {
        Some(self.decision.clone())
    }

    fn step_summary(&self, _ctx: &Context) -> Option<String> {
        Some(super::github::check_summary(self, self.decision.fail_on))
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
