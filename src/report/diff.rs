//! Chart-to-chart differences as text (for terminals) and Markdown (for a pull request
//! comment); JSON is the serde form of [`ChartDiff`].

use serde_json::Value as Json;

use super::document::{json_report, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use crate::diff::{ChartDiff, CrdChange, Status};
use crate::objects::Origin;

impl Document for ChartDiff {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        Ok(match format {
            Format::Text => text(self),
            Format::Json => json_report(super::json_schema::Report::Diff, self)?,
            Format::Markdown => markdown(self),
            other => return Err(unoffered(Command::Diff, other)),
        })
    }
}

fn origin(o: Origin) -> &'static str {
    match o {
        Origin::CrdsDir => "crds/",
        Origin::Template => "templates",
        Origin::Hook => "hook",
    }
}

fn status(s: &Status) -> &'static str {
    match s {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
    }
}

/// A value on one line, cut at 160 characters (the JSON output has it whole).
fn compact(v: &Json) -> String {
    let text = match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// RBAC grants (`role: verb target`) grouped to one line per role and target, verbs joined.
fn grouped_grants(grants: &[String]) -> Vec<String> {
    let mut groups: std::collections::BTreeMap<(String, String), Vec<String>> = std::collections::BTreeMap::new();
    for g in grants {
        let Some((role, rest)) = g.split_once(": ") else { continue };
        let Some((verb, target)) = rest.split_once(' ') else { continue };
        groups.entry((role.to_string(), target.to_string())).or_default().push(verb.to_string());
    }
    groups.into_iter().map(|((role, target), verbs)| format!("{role}: {} {target}", verbs.join(","))).collect()
}

/// Image references without the repository they share.
fn versions_of(repository: &str, refs: &[String]) -> String {
    if refs.is_empty() {
        return "-".into();
    }
    refs.iter()
        .map(|r| match r.strip_prefix(repository).map(|t| t.trim_start_matches([':', '@'])) {
            Some("") => "(untagged)".to_string(),
            Some(rest) => rest.to_string(),
            None => r.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lines describing one CRD change (without the heading), shared by both formats.
fn crd_lines(c: &CrdChange) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(m) = &c.moved {
        let note = match m.to {
            Origin::Template => " (now a release object: Helm must adopt the existing CRD)",
            Origin::CrdsDir => " (no longer managed by Helm after install)",
            Origin::Hook => "",
        };
        lines.push(format!("moved: {} → {}{note}", origin(m.from), origin(m.to)));
    }
    if let Some(s) = &c.served {
        lines.push(format!("served versions: {} → {}", s.from.join(","), s.to.join(",")));
    }
    if let Some(s) = &c.storage {
        lines.push(format!("storage version: {} → {}", s.from, s.to));
    }
    if let Some(k) = &c.keep {
        lines.push(format!("resource-policy keep: {} → {}", k.from, k.to));
    }
    for a in &c.schema_added {
        lines.push(format!("schema added: {a}"));
    }
    for r in &c.schema_removed {
        lines.push(format!("schema removed: {r}"));
    }
    for t in &c.types {
        lines.push(format!("type changed: {}: {} → {}", t.path, compact(&t.from), compact(&t.to)));
    }
    for e in &c.enums {
        lines.push(format!("enum changed: {}: {} → {}", e.path, compact(&e.from), compact(&e.to)));
    }
    for v in &c.validation {
        lines.push(format!("validation changed: {}: {} → {}", v.path, compact(&v.from), compact(&v.to)));
    }
    for r in &c.required {
        lines.push(format!("required changed: {}: {} → {}", r.path, compact(&r.from), compact(&r.to)));
    }
    lines
}

fn value_lines(d: &ChartDiff) -> Vec<String> {
    let mut lines = Vec::new();
    for a in &d.values.added {
        lines.push(format!("added: {a}"));
    }
    for r in &d.values.removed {
        lines.push(format!("removed: {r}"));
    }
    for c in &d.values.changed {
        lines.push(format!("default changed: {}: {} → {}", c.path, compact(&c.from), compact(&c.to)));
    }
    lines
}

pub fn text(d: &ChartDiff) -> String {
    let mut out = format!("{} {} → {} {}\n", d.from.name, d.from.version, d.to.name, d.to.version);
    let section = |out: &mut String, title: &str, lines: Vec<String>| {
        if lines.is_empty() {
            return;
        }
        out.push_str(&format!("\n{title}\n"));
        for l in lines {
            out.push_str(&format!("  {l}\n"));
        }
    };
    section(
        &mut out,
        "Subcharts",
        d.subcharts
            .iter()
            .map(|s| format!("{}: {} → {}", s.name, s.from.as_deref().unwrap_or("-"), s.to.as_deref().unwrap_or("-")))
            .collect(),
    );
    if !d.crds.is_empty() {
        out.push_str("\nCRDs\n");
        for c in &d.crds {
            out.push_str(&format!("  {} ({}): {}\n", c.name, c.kind, status(&c.status)));
            for l in crd_lines(c) {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    if !d.runtimes.is_empty() {
        out.push_str("\nRuntimes\n");
        for r in &d.runtimes {
            out.push_str(&format!("  {}/{}: {}\n", r.kind, r.name, status(&r.status)));
            if let Some(del) = &r.delivery {
                out.push_str(&format!("    delivery: {} → {}\n", del.from, del.to));
            }
            if let Some(i) = &r.images {
                out.push_str(&format!("    images: {} → {}\n", i.from.join(", "), i.to.join(", ")));
            }
            for l in r.diff.lines() {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    section(&mut out, "Values", value_lines(d));
    section(
        &mut out,
        "RBAC",
        grouped_grants(&d.rbac.added)
            .into_iter()
            .map(|g| format!("+ {g}"))
            .chain(grouped_grants(&d.rbac.removed).into_iter().map(|g| format!("- {g}")))
            .collect(),
    );
    section(
        &mut out,
        "Images",
        d.images
            .iter()
            .map(|i| format!("{}: {} → {}", i.repository, versions_of(&i.repository, &i.from), versions_of(&i.repository, &i.to)))
            .collect(),
    );
    section(
        &mut out,
        "Hooks",
        d.hooks.added.iter().map(|h| format!("+ {h}")).chain(d.hooks.removed.iter().map(|h| format!("- {h}"))).collect(),
    );
    out
}

pub fn markdown(d: &ChartDiff) -> String {
    use super::findings::cell;
    let mut out = format!("## `{}` {} → {}\n", d.to.name, d.from.version, d.to.version);
    if !d.subcharts.is_empty() {
        out.push_str("\n### Subcharts\n\n| Subchart | From | To |\n|---|---|---|\n");
        for s in &d.subcharts {
            out.push_str(&format!("| {} | {} | {} |\n", s.name, s.from.as_deref().unwrap_or("-"), s.to.as_deref().unwrap_or("-")));
        }
    }
    if !d.crds.is_empty() {
        out.push_str("\n### CRDs\n");
        for c in &d.crds {
            out.push_str(&format!("\n**`{}`** ({}): {}\n\n", c.name, c.kind, status(&c.status)));
            for l in crd_lines(c) {
                out.push_str(&format!("- {}\n", cell(&l)));
            }
        }
    }
    if !d.runtimes.is_empty() {
        out.push_str("\n### Runtimes\n\n| Runtime | Change | Delivery | Images |\n|---|---|---|---|\n");
        for r in &d.runtimes {
            let delivery = r.delivery.as_ref().map(|x| format!("{} → {}", x.from, x.to)).unwrap_or_default();
            let images = r.images.as_ref().map(|x| format!("{} → {}", x.from.join(", "), x.to.join(", "))).unwrap_or_default();
            out.push_str(&format!("| `{}/{}` | {} | {} | {} |\n", r.kind, r.name, status(&r.status), cell(&delivery), cell(&images)));
        }
        for r in d.runtimes.iter().filter(|r| !r.diff.is_empty()) {
            out.push_str(&format!(
                "\n<details><summary><code>{}/{}</code> rendered diff</summary>\n\n```diff\n{}```\n</details>\n",
                r.kind, r.name, r.diff
            ));
        }
    }
    let values = value_lines(d);
    if !values.is_empty() {
        out.push_str("\n### Values\n\n");
        for l in values {
            out.push_str(&format!("- {}\n", cell(&l)));
        }
    }
    if !d.rbac.is_empty() {
        out.push_str("\n### RBAC\n\n```diff\n");
        for g in grouped_grants(&d.rbac.added) {
            out.push_str(&format!("+ {g}\n"));
        }
        for g in grouped_grants(&d.rbac.removed) {
            out.push_str(&format!("- {g}\n"));
        }
        out.push_str("```\n");
    }
    if !d.images.is_empty() {
        out.push_str("\n### Images\n\n| Repository | From | To |\n|---|---|---|\n");
        for i in &d.images {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                i.repository,
                cell(&versions_of(&i.repository, &i.from)),
                cell(&versions_of(&i.repository, &i.to))
            ));
        }
    }
    if !d.hooks.is_empty() {
        out.push_str("\n### Hooks\n\n```diff\n");
        for h in &d.hooks.added {
            out.push_str(&format!("+ {h}\n"));
        }
        for h in &d.hooks.removed {
            out.push_str(&format!("- {h}\n"));
        }
        out.push_str("```\n");
    }
    out
}
