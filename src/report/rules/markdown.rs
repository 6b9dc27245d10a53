//! The rule list as a Markdown reference (`rules --format markdown`, which is docs/rules.md): an
//! index table, the retired ids, the check kinds, then one section per rule id with everything
//! `explain` prints, so the page never says less than the tool.

use super::{commands, compat_rows, expected, fix_template, raised, rows, severities, versions};
use crate::audit::kinds::kind;
use crate::audit::rules::{Rule, Scope};
use crate::report::findings::cell;

/// The whole reference, deterministic (rule order as loaded, kinds by name).
pub fn document(rules: &[Rule]) -> String {
    let mut out = String::from(
        "# Rules\n\n\
         Every rule `trainer-audit` runs, as `trainer-audit rules --format markdown` prints it from the rule files\n\
         (`rules/*.yaml`, built in). `trainer-audit explain ID` prints one rule, and resolves a retired id.\n\
         A rule's severities are all it can emit: its own, its variants' and those its check decides from what it\n\
         finds (a runtime in use makes TA-RT-001 an error). Commands: where the rule runs (`check`, `plan`,\n\
         `runbook` and the GitOps review for an upgrade rule; `hooks` and the GitOps review for a chart-review rule).\n\n",
    );
    index(rules, &mut out);
    retired(rules, &mut out);
    kinds(rules, &mut out);
    let mut ids: Vec<&str> = Vec::new();
    for r in rules {
        if !ids.contains(&r.id.as_str()) {
            ids.push(&r.id);
        }
    }
    for id in ids {
        let entries: Vec<&Rule> = rules.iter().filter(|r| r.id == id).collect();
        section(&entries, &mut out);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// One row per rule id, the id linking to its section.
fn index(rules: &[Rule], out: &mut String) {
    out.push_str("| Rule | Severity | Kind | Commands | Title |\n|---|---|---|---|---|\n");
    for [id, severity, kind, commands, title] in rows(rules) {
        out.push_str(&format!(
            "| [`{id}`](#{}) | {severity} | `{kind}` | {} | {} |\n",
            id.to_lowercase(),
            commands.replace(',', ", "),
            cell(&title)
        ));
    }
    out.push('\n');
}

/// The ids a rule replaced (`aliases`): one id per concept, a retired id resolved by `explain`.
fn retired(rules: &[Rule], out: &mut String) {
    let mut rows: Vec<(&str, &str, &str)> =
        rules.iter().flat_map(|r| r.aliases.iter().map(move |a| (a.as_str(), r.id.as_str(), r.kind.as_str()))).collect();
    if rows.is_empty() {
        return;
    }
    rows.sort();
    out.push_str(
        "## Retired ids\n\n\
         One id per concept: a check that both an upgrade and the chart review run is one rule, defined once per\n\
         scope under one id. The ids it replaced still resolve (`explain` says which rule each became):\n\n\
         | retired id | id now | check kind |\n|---|---|---|\n",
    );
    for (old, now, kind) in rows {
        out.push_str(&format!("| `{old}` | [`{now}`](#{}) | `{kind}` |\n", now.to_lowercase()));
    }
    out.push('\n');
}

/// The check kinds the rules use (one file each in `src/audit/kinds/`), with what each checks.
fn kinds(rules: &[Rule], out: &mut String) {
    let mut names: Vec<&str> = rules.iter().map(|r| r.kind.as_str()).collect();
    names.sort();
    names.dedup();
    out.push_str("## Check kinds\n\n| kind | what it checks | rules |\n|---|---|---|\n");
    for name in names {
        let summary = kind(name).map(|k| k.summary).unwrap_or("");
        let mut ids: Vec<&str> = Vec::new();
        for r in rules.iter().filter(|r| r.kind == name) {
            if !ids.contains(&r.id.as_str()) {
                ids.push(&r.id);
            }
        }
        let ids: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
        out.push_str(&format!("| `{name}` | {} | {} |\n", cell(summary), ids.join(", ")));
    }
    out.push('\n');
}

/// One rule id: its title, then every entry (one per scope) as `explain` says it.
fn section(entries: &[&Rule], out: &mut String) {
    let first = entries[0];
    let all = severities(entries).iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    out.push_str(&format!("## {}\n\n**{}**\n\nSeverities: {all}.", first.id, first.title));
    let aliases: Vec<String> = entries.iter().flat_map(|e| e.aliases.iter()).map(|a| format!("`{a}`")).collect();
    if !aliases.is_empty() {
        out.push_str(&format!(" Renamed from {}.", aliases.join(", ")));
    }
    out.push('\n');
    let several = (entries.len() > 1).then_some(first.title.as_str());
    for r in entries {
        entry(r, several, out);
    }
}

/// One entry of a rule: the facts as a list, why, the fix template, variants, predicted failure
/// texts, params, sources and the compatibility rows it rests on. `several`: the rule has an
/// entry per scope, and this is the first entry's title.
fn entry(r: &Rule, several: Option<&str>, out: &mut String) {
    let run = commands(r.scope).join(", ");
    if let Some(first_title) = several {
        let scope = match r.scope {
            Scope::Upgrade => "In an upgrade",
            Scope::Review => "In the chart review",
        };
        out.push_str(&format!("\n### {scope} ({run})\n"));
        if r.title != first_title {
            out.push_str(&format!("\n**{}**\n", r.title));
        }
    }
    let summary = kind(&r.kind).map(|k| format!(": {}", k.summary)).unwrap_or_default();
    let applies = versions(r, "`");
    let applies = match r.scope {
        Scope::Upgrade => format!("{applies}; run by {run}"),
        Scope::Review => format!("the chart review; run by {run}"),
    };
    let raised = raised(r);
    out.push_str(&format!("\n- severity: {}{raised}\n- kind: `{}`{summary}\n- applies: {applies}\n", r.severity.as_str(), r.kind));
    if !r.engines.is_empty() {
        let engines: Vec<&str> = r.engines.iter().map(|e| e.as_str()).collect();
        out.push_str(&format!("- engines: {}\n", engines.join(", ")));
    }
    // The file only: a line number would change the page whenever a rule above it changes.
    let file = r.origin.rsplit_once(':').filter(|(_, line)| line.parse::<u32>().is_ok()).map(|(f, _)| f).unwrap_or(&r.origin);
    out.push_str(&format!("- defined in `{file}`\n"));
    out.push_str(&format!("\n{}\n\nFix:\n\n```text\n{}\n```\n", r.why, fix_template(&r.fix)));
    for (name, v) in &r.variants {
        out.push_str(&format!("\nVariant `{name}`:"));
        if let Some(s) = v.severity {
            out.push_str(&format!(" severity {}.", s.as_str()));
        }
        if let Some(t) = &v.title {
            out.push_str(&format!(" {t}."));
        }
        if let Some(s) = &v.source {
            out.push_str(&format!(" Source: {s}"));
        }
        out.push('\n');
        if let Some(f) = &v.fix {
            out.push_str(&format!("\n```text\n{}\n```\n", fix_template(f)));
        }
    }
    if !r.expect.is_empty() {
        out.push_str("\nWhat the failure prints:\n\n");
        for e in &r.expect {
            out.push_str(&format!("- {} ({})\n", expected(e), e.source));
        }
    }
    if !r.params.is_null() {
        out.push_str(&format!("\nParams: `{}`\n", serde_json::to_string(&r.params).unwrap_or_default()));
    }
    out.push_str(&format!("\nSource: {}\n", r.source));
    let compat = compat_rows(r);
    if !compat.is_empty() {
        out.push_str(&format!("\nCompatibility (`{}`):\n\n", crate::audit::compat::FILE));
        for row in compat {
            out.push_str(&format!("- {row}\n"));
        }
    }
    out.push('\n');
}
