//! The rule list (`rules`) and one rule explained (`explain ID`) as text.

use crate::audit::kinds::kind;
use crate::audit::rules::{Rule, Scope};

/// One line per rule: id, severity, kind, title.
pub fn list(rules: &[Rule]) -> String {
    rules.iter().map(|r| format!("{:<12} {:<8} {:<20} {}\n", r.id, r.severity.as_str(), r.kind, r.title)).collect()
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
        Scope::Upgrade => applies,
        Scope::Review => "the chart review (`trainer-audit hooks`)".to_string(),
    };
    let engines = if r.engines.is_empty() {
        String::new()
    } else {
        format!("engines:  {}\n", r.engines.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", "))
    };
    let mut out = format!(
        "{} — {}\n\nseverity: {}\nkind:     {} ({summary})\napplies:  {applies}\n{engines}defined:  {}\n\nWhy: {}\n\nFix: {}\n\nSource: {}\n",
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
        let mut when = Vec::new();
        if let Some(k) = &e.kubernetes {
            when.push(format!("Kubernetes {k}"));
        }
        if let Some(h) = &e.helm {
            when.push(format!("Helm {h}"));
        }
        let when = if when.is_empty() { String::new() } else { format!(" ({})", when.join(", ")) };
        out.push_str(&format!("\nFails with{when}: {} prints: {}\n  ({})\n", e.by.as_str(), e.text, e.source));
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
