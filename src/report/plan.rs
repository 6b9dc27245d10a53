//! `plan` as text and Markdown, and in every format `plan` offers for one cluster.

use super::document::{json_report, pretty, unoffered, Context, OutputError};
use super::format::{Command, Format};
use super::json_schema::Report as SchemaReport;
use crate::plan::Plan;
use crate::upgrade::check::Inputs;

/// The plan in `format`.
pub fn render(p: &Plan, notes: &[String], inputs: &Inputs, format: Format, ctx: &Context) -> Result<String, OutputError> {
    Ok(match format {
        Format::Text => text(p, notes),
        Format::Json | Format::Jsonl => json_report(SchemaReport::Plan, &json(p, notes, inputs))?,
        Format::Markdown => markdown(p, notes),
        Format::Sarif => {
            let findings: Vec<_> = p.steps.iter().flat_map(|s| s.preconditions.iter().cloned()).collect();
            pretty(&super::sarif::sarif(&findings, ctx.rules()))?
        }
        other => return Err(unoffered(Command::Plan, other)),
    })
}

fn decision(p: &Plan) -> crate::audit::verdict::Decision {
    p.decision()
}

/// The JSON document: the verdict and what decided it at the top, then the plan and notes.
pub fn json(p: &Plan, notes: &[String], inputs: &crate::upgrade::check::Inputs) -> serde_json::Value {
    let mut doc = serde_json::to_value(decision(p)).unwrap_or_default();
    doc["inputs"] = serde_json::to_value(inputs).unwrap_or_default();
    doc["plan"] = serde_json::to_value(p).unwrap_or_default();
    doc["notes"] = serde_json::to_value(notes).unwrap_or_default();
    doc
}

pub fn text(p: &Plan, notes: &[String]) -> String {
    let mut out = format!("{}\n", decision(p).line());
    out.push_str(&format!("Upgrade plan: {}/{} {} → {}{} ({})\n", p.namespace, p.release, p.from, p.to, via(p), p.method.describe()));
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for s in &p.steps {
        out.push_str(&format!("\nStep {}: {} → {}\n", s.number, s.from, s.to));
        if s.preconditions.is_empty() {
            out.push_str("  Before: nothing blocking\n");
        } else {
            out.push_str("  Before:\n");
            // One fix per rule, after the findings it settles.
            for (_, members) in super::findings::by_rule(&s.preconditions) {
                for f in &members {
                    out.push_str(&format!("    [{}] {} {}: {}\n", f.severity.as_str(), f.id, f.subject, f.title));
                }
                for line in super::fix::shell_lines(&super::fix::merged(&members)) {
                    out.push_str(&format!("        {line}\n"));
                }
            }
        }
        out.push_str("  Upgrade:\n");
        for m in &s.manual {
            out.push_str(&format!("    # {m}\n"));
        }
        for c in &s.upgrade {
            out.push_str(&format!("    {c}\n"));
        }
        out.push_str("  Verify:\n");
        for c in &s.verify {
            out.push_str(&format!("    {c}\n"));
        }
        out.push_str(&format!("  Rollback{}: {}\n", if s.rollback_dangerous { " (DANGEROUS)" } else { "" }, s.rollback));
    }
    out
}

pub fn markdown(p: &Plan, notes: &[String]) -> String {
    let route: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).collect();
    let mut out = format!(
        "## Upgrade plan: `{}/{}` {} → {}\n\n**Verdict: {}**\n\nRoute: {} → {} ({}).\n",
        p.namespace,
        p.release,
        p.from,
        p.to,
        decision(p).line(),
        p.from,
        route.join(" → "),
        p.method.describe()
    );
    for n in notes {
        out.push_str(&format!("\n- {n}"));
    }
    out.push('\n');
    for s in &p.steps {
        out.push_str(&format!("\n### Step {}: {} → {}\n\n", s.number, s.from, s.to));
        super::findings::markdown(&s.preconditions, &mut out);
        out.push_str("\nUpgrade:\n\n");
        for m in &s.manual {
            out.push_str(&format!("- {m}\n"));
        }
        if !s.upgrade.is_empty() {
            out.push_str("\n```sh\n");
            for c in &s.upgrade {
                out.push_str(&format!("{c}\n"));
            }
            out.push_str("```\n");
        }
        out.push_str("\nVerify:\n\n```sh\n");
        for c in &s.verify {
            out.push_str(&format!("{c}\n"));
        }
        out.push_str(&format!("```\n\nRollback{}: {}\n", if s.rollback_dangerous { " (**dangerous**)" } else { "" }, s.rollback));
    }
    out
}

/// ` via 2.3.1` when the route has stops before the target; nothing for one hop.
fn via(p: &Plan) -> String {
    let stops: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).filter(|v| *v != p.to).collect();
    if stops.is_empty() {
        String::new()
    } else {
        format!(" via {}", stops.join(" → "))
    }
}
