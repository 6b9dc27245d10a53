//! The rule list (`rules`) and one rule explained (`explain ID`) as text.

use crate::audit::finding::Severity;
use crate::audit::kinds::kind;
use crate::audit::rules::{Rule, Scope};

/// The commands that run rules of a scope.
pub fn commands(scope: Scope) -> &'static [&'static str] {
    match scope {
        Scope::Upgrade => &["check", "plan", "runbook", "gitops"],
        Scope::Review => &["hooks", "gitops"],
    }
}

/// Every severity a rule's entries emit (the rule's own and its variants'), most severe first.
pub fn severities(entries: &[&Rule]) -> Vec<Severity> {
    let mut all: Vec<Severity> =
        entries.iter().flat_map(|r| std::iter::once(r.severity).chain(r.variants.values().filter_map(|v| v.severity))).collect();
    all.sort();
    all.dedup();
    all
}

/// One line per rule id (its entries in every scope together): id, the severities it emits,
/// kind, the commands that run it, title. Columns are as wide as their longest cell.
pub fn list(rules: &[Rule]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for r in rules {
        if !ids.contains(&r.id.as_str()) {
            ids.push(&r.id);
        }
    }
    let rows: Vec<[String; 5]> = ids
        .iter()
        .map(|id| {
            let entries: Vec<&Rule> = rules.iter().filter(|r| r.id == *id).collect();
            let severity = severities(&entries).iter().map(|s| s.as_str()).collect::<Vec<_>>().join("/");
            let mut run: Vec<&str> = Vec::new();
            for e in &entries {
                for c in commands(e.scope) {
                    if !run.contains(c) {
                        run.push(c);
                    }
                }
            }
            [id.to_string(), severity, entries[0].kind.clone(), run.join(","), entries[0].title.clone()]
        })
        .collect();
    let header = ["ID", "SEVERITY", "KIND", "COMMANDS", "TITLE"].map(String::from);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(rows.iter())
        .map(|row| {
            let mut line = String::new();
            for (w, cell) in widths.iter().zip(row.iter()) {
                line.push_str(&format!("{cell:<w$}  "));
            }
            line.push_str(&row[4]);
            line.push('\n');
            line
        })
        .collect()
}

/// `explain ID`: every entry of the rule (one per scope), after a line saying so when `id` was
/// a retired alias.
pub fn explain_all(entries: &[&Rule], alias: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(old) = alias {
        out.push_str(&format!(
            "{old} was renamed {}: one id per concept in every command (the chart review and the upgrade check report it under one id).\n\n",
            entries[0].id
        ));
    }
    let parts: Vec<String> = entries.iter().map(|r| explain(r)).collect();
    out.push_str(&parts.join("\n"));
    out
}

/// Everything a rule says: what it checks, when, why, the fix and its source.
pub fn explain(r: &Rule) -> String {
    let summary = kind(&r.kind).map(|k| k.summary).unwrap_or("");
    let applies = match (&r.applies.from, &r.applies.to) {
        (None, None) => "every upgrade".to_string(),
        (f, t) => format!(
            "from {} to {}",
            f.as_ref().map(|c| c.to_string()).unwrap_or_else(|| "any".into()),
            t.as_ref().map(|c| c.to_string()).unwrap_or_else(|| "any".into())
        ),
    };
    let applies = match r.scope {
        Scope::Upgrade => format!("{applies} (run by {})", commands(r.scope).join(", ")),
        Scope::Review => format!("the chart review (run by {})", commands(r.scope).join(", ")),
    };
    let aliases = if r.aliases.is_empty() { String::new() } else { format!("renamed from: {}\n", r.aliases.join(", ")) };
    let engines = if r.engines.is_empty() {
        String::new()
    } else {
        format!("engines:  {}\n", r.engines.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", "))
    };
    let mut out = format!(
        "{} — {}\n\nseverity: {}\nkind:     {} ({summary})\napplies:  {applies}\n{engines}{aliases}defined:  {}\n\nWhy: {}\n\nFix: {}\n\nSource: {}\n",
        r.id,
        r.title,
        r.severity.as_str(),
        r.kind,
        r.origin,
        r.why,
        r.fix,
        r.source
    );
    for (name, v) in &r.variants {
        let mut parts = Vec::new();
        if let Some(s) = v.severity {
            parts.push(format!("severity {}", s.as_str()));
        }
        if let Some(t) = &v.title {
            parts.push(format!("title: {t}"));
        }
        if let Some(f) = &v.fix {
            parts.push(format!("fix: {f}"));
        }
        if let Some(s) = &v.source {
            parts.push(format!("source: {s}"));
        }
        out.push_str(&format!("\nVariant {name}: {}\n", parts.join("; ")));
    }
    for e in &r.expect {
        let expected = crate::audit::finding::Expected {
            by: e.by.as_str(),
            text: e.text.clone(),
            kubernetes: e.kubernetes.as_ref().map(|c| c.to_string()),
            helm: e.helm.as_ref().map(|c| c.to_string()),
        };
        out.push_str(&format!("\n{}\n  ({})\n", super::findings::expected_sentence(&expected), e.source));
    }
    if !r.params.is_null() {
        out.push_str(&format!("\nParams: {}\n", serde_json::to_string(&r.params).unwrap_or_default()));
    }
    out.push_str(&compat_rows(r));
    out
}

/// The `rules/compat.yaml` rows a rule rests on: the tables its kind reads, and the Helm
/// minimums of the flags its words name.
fn compat_rows(r: &Rule) -> String {
    let compat = crate::audit::compat::get();
    let mut rows: Vec<String> = r.check.as_ref().map(|c| c.compat()).unwrap_or_default().iter().flat_map(|t| compat.rows(*t)).collect();
    let words = format!("{}\n{}\n{}", r.fix, r.why, r.title);
    rows.extend(compat.helm_flags_in(&words).map(crate::audit::compat::helm_row));
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\nCompatibility ({}):\n", crate::audit::compat::FILE);
    for row in rows {
        out.push_str(&format!("  {row}\n"));
    }
    out
}
