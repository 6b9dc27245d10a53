//! The hook review as text: each hook with its lifecycle under every engine, the CRD sizes,
//! then the findings.

use super::document::{json_report, pretty, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use crate::audit::hooks::HooksReport;
use crate::audit::verdict::{Counts, Decision};
use crate::engine::hooks::behaviour;
use crate::engine::Engine;
use crate::inventory::crd::ANNOTATION_BUDGET;

impl Document for HooksReport {
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError> {
        Ok(match format {
            Format::Text => text_detailed(self, ctx.detail),
            Format::Json => json_report(super::json_schema::Report::Hooks, self)?,
            Format::Markdown => markdown(self),
            Format::Sarif => {
                // The review's words for the ids it shares with the upgrade rules.
                let review: Vec<_> = ctx.rules().iter().filter(|r| r.scope == crate::audit::rules::Scope::Review).cloned().collect();
                pretty(&super::sarif::sarif(&self.findings, &review))?
            }
            other => return Err(unoffered(Command::Hooks, other)),
        })
    }

    /// The verdict of the review in `check`'s words (`blocked: 1 error, 2 warnings`, `ready`), at
    /// `--fail-on`, or at `error` (check's default, not gating) for a review run without one.
    fn decision(&self, ctx: &Context) -> Option<Decision> {
        Some(Decision::at(Counts::of(&self.findings), ctx.fail_on, None, None))
    }
}

pub fn text(report: &HooksReport) -> String {
    text_detailed(report, super::findings::Detail::Short)
}

/// [`text`], short or with every finding's evidence and sources.
pub fn text_detailed(report: &HooksReport, detail: super::findings::Detail) -> String {
    let mut out = String::new();
    let engine = match (&report.engine, &report.argocd_version) {
        (Engine::Argocd, Some(v)) => format!("argocd {v}"),
        (e, _) => e.as_str().to_string(),
    };
    out.push_str(&format!("Hooks in {} {} (findings for: {engine})\n\n", report.chart, report.version));
    if report.hooks.is_empty() {
        out.push_str("No hooks.\n\n");
    }
    for h in &report.hooks {
        let hook = &h.hook;
        out.push_str(&format!("{}\n", hook.identity));
        out.push_str(&format!("  template         {}\n", hook.source));
        out.push_str(&format!("  events           {}\n", hook.events.join(", ")));
        out.push_str(&format!("  weight           {}\n", hook.weight));
        let policies = if hook.delete_policies.is_empty() {
            "<none> (Helm: before-hook-creation)".to_string()
        } else {
            hook.delete_policies.join(", ")
        };
        out.push_str(&format!("  delete policies  {policies}\n"));
        for c in &hook.containers {
            out.push_str(&format!("  container        {}: {}\n", c.name, c.image));
        }
        if !hook.service_account.is_empty() {
            out.push_str(&format!("  service account  {}\n", hook.service_account));
        }
        for g in &hook.grants {
            out.push_str(&format!(
                "  rbac             {}: {} on {} ({})\n",
                g.role,
                g.rule.verbs.join(","),
                g.rule.resources.join(","),
                g.rule.api_groups.join(",")
            ));
        }
        let bound = |v: Option<i64>| v.map(|n| n.to_string()).unwrap_or_else(|| "<unset>".into());
        out.push_str(&format!(
            "  bounds           backoffLimit {}, activeDeadlineSeconds {}\n",
            bound(hook.backoff_limit),
            bound(hook.active_deadline_seconds)
        ));
        let argocd = report.argocd_version.as_deref().and_then(|v| semver::Version::parse(v).ok());
        for engine in [Engine::Helm, Engine::Argocd, Engine::Flux, Engine::Kustomize] {
            out.push_str(&format!("  {:<16} {}\n", engine.as_str(), behaviour(engine, &hook.events, hook.weight, argocd.as_ref())));
        }
        out.push_str(&format!("  argocd delete    {}\n\n", h.argocd_delete_policies.join(", ")));
    }
    if !report.crds.is_empty() {
        out.push_str(&format!("CRDs (size as compact JSON; client-side apply budget {ANNOTATION_BUDGET} bytes)\n"));
        for c in &report.crds {
            let origin = match c.origin {
                crate::objects::Origin::CrdsDir => "crds/",
                _ => "templates",
            };
            out.push_str(&format!(
                "  {:<50} {:<9} {:>8} bytes  {}  keep: {}\n",
                c.name,
                origin,
                c.json_size,
                if c.over_budget { "OVER BUDGET" } else { "fits       " },
                if c.keep { "yes" } else { "no" }
            ));
        }
        out.push('\n');
    }
    out.push_str("Findings\n");
    super::findings::text_painted(&report.findings, super::style::Paint::PLAIN, detail, &mut out);
    out
}

/// The review as Markdown: what was reviewed, then the findings table.
pub fn markdown(report: &HooksReport) -> String {
    let mut out = format!(
        "## Hooks in `{}` {} (findings for: {})\n\n{} hook{}, {} CRD{}.\n\n",
        report.chart,
        report.version,
        report.engine.as_str(),
        report.hooks.len(),
        if report.hooks.len() == 1 { "" } else { "s" },
        report.crds.len(),
        if report.crds.len() == 1 { "" } else { "s" }
    );
    super::findings::markdown(&report.findings, &mut out);
    out
}
