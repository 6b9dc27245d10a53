//! The rule list (`rules`) and one rule explained (`explain ID`) as text.

pub mod markdown;

use super::document::{pretty, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use crate::audit::finding::Severity;
use crate::audit::kinds::kind;
use crate::audit::rules::{Rule, RuleSet, Scope};

/// `rules`: the rule list.
pub struct RuleList(pub RuleSet);

impl Document for RuleList {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        Ok(match format {
            Format::Text => list(&self.0),
            Format::Json => pretty(&*self.0)?,
            Format::Markdown => markdown::document(&self.0),
            other => return Err(unoffered(Command::Rules, other)),
        })
    }
}

/// `explain ID`: the rule's entries (one per scope), and the retired id it was asked by.
pub struct Explained<'a> {
    pub entries: Vec<&'a Rule>,
    pub alias: Option<String>,
}

impl Document for Explained<'_> {
    fn render(&self, _format: Format, _ctx: &Context) -> Result<String, OutputError> {
        Ok(explain_all(&self.entries, self.alias.as_deref()))
    }
}

/// A fix template as a person reads it: commands indented, restore commands under the words
/// every output puts before them, `{placeholders}` as written.
fn fix_template(fix: &str) -> String {
    // Variables filled with whole command lines stay as their placeholder.
    let vars = crate::audit::rules::COMMAND_VARS.iter().map(|v| (v.to_string(), format!("{{{v}}}"))).collect();
    let lines = crate::audit::finding::with_restore_heads(&Rule::fix_lines(fix, &vars));
    super::fix::text_lines(&lines).join("\n")
}

/// The commands that run rules of a scope.
pub fn commands(scope: Scope) -> &'static [&'static str] {
    match scope {
        Scope::Upgrade => &["check", "plan", "runbook", "gitops"],
        Scope::Review => &["hooks", "gitops"],
    }
}

/// The severities a check kind computes from what it sees, over the rule's own (a runtime in
/// use makes TA-RT-001 an error; a pre-release move is a warning or info). A test keeps this in
/// step with the kinds' code.
const COMPUTED: &[(&str, &[Severity])] = &[
    ("direction", &[Severity::Warning, Severity::Info]),
    ("runtime-handoff", &[Severity::Error]),
    ("stale-crd", &[Severity::Error]),
    ("release-size", &[Severity::Error, Severity::Warning]),
];

fn computed(kind: &str) -> &'static [Severity] {
    COMPUTED.iter().find(|(k, _)| *k == kind).map(|(_, s)| *s).unwrap_or(&[])
}

/// Every severity a rule's entries emit (the rule's own, its variants' and what its kind
/// computes), most severe first.
pub fn severities(entries: &[&Rule]) -> Vec<Severity> {
    let mut all: Vec<Severity> = entries
        .iter()
        .flat_map(|r| {
            std::iter::once(r.severity).chain(r.variants.values().filter_map(|v| v.severity)).chain(computed(&r.kind).iter().copied())
        })
        .collect();
    all.sort();
    all.dedup();
    all
}

/// One row per rule id (its entries in every scope together): id, the severities it emits,
/// kind, the commands that run it, title.
fn rows(rules: &[Rule]) -> Vec<[String; 5]> {
    let mut ids: Vec<&str> = Vec::new();
    for r in rules {
        if !ids.contains(&r.id.as_str()) {
            ids.push(&r.id);
        }
    }
    ids.iter()
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
        .collect()
}

/// The rule list as text: one line per rule id, columns as wide as their longest cell.
pub fn list(rules: &[Rule]) -> String {
    let rows = rows(rules);
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
    let applies = versions(r, "");
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
    let raised = raised(r);
    let mut out = format!(
        "{} — {}\n\nseverity: {}{raised}\nkind:     {} ({summary})\napplies:  {applies}\n{engines}{aliases}defined:  {}\n\nWhy: {}\n\nFix: {}\n\nSource: {}\n",
        r.id,
        r.title,
        r.severity.as_str(),
        r.kind,
        r.origin,
        r.why,
        fix_template(&r.fix),
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
            parts.push(format!("fix: {}", fix_template(f)));
        }
        if let Some(s) = &v.source {
            parts.push(format!("source: {s}"));
        }
        out.push_str(&format!("\nVariant {name}: {}\n", parts.join("; ")));
    }
    for e in &r.expect {
        out.push_str(&format!("\n{}\n  ({})\n", expected(e), e.source));
    }
    if !r.params.is_null() {
        out.push_str(&format!("\nParams: {}\n", serde_json::to_string(&r.params).unwrap_or_default()));
    }
    out.push_str(&compat_text(r));
    out
}

/// The versions a rule applies to: `every upgrade`, or `from A to B`, each constraint between
/// `quote`s.
fn versions(r: &Rule, quote: &str) -> String {
    let or_any = |c: &Option<helm_render::version::Constraint>| c.as_ref().map(|c| c.to_string()).unwrap_or_else(|| "any".into());
    match (&r.applies.from, &r.applies.to) {
        (None, None) => "every upgrade".to_string(),
        (f, t) => format!("from {quote}{}{quote} to {quote}{}{quote}", or_any(f), or_any(t)),
    }
}

/// The severities a rule's kind decides beyond the rule's own and its variants', as a clause
/// (empty when there are none).
fn raised(r: &Rule) -> String {
    let declared: Vec<Severity> = std::iter::once(r.severity).chain(r.variants.values().filter_map(|v| v.severity)).collect();
    let raised: Vec<&str> = computed(&r.kind).iter().filter(|s| !declared.contains(s)).map(|s| s.as_str()).collect();
    if raised.is_empty() {
        String::new()
    } else {
        format!(" (also {}, as the check decides from what it finds)", raised.join(", "))
    }
}

/// What a failure the rule predicts prints, as one sentence.
fn expected(e: &crate::audit::rules::Expect) -> String {
    super::findings::expected_sentence(&crate::audit::finding::Expected {
        by: e.by.as_str(),
        text: e.text.clone(),
        kubernetes: e.kubernetes.as_ref().map(|c| c.to_string()),
        helm: e.helm.as_ref().map(|c| c.to_string()),
    })
}

/// The `rules/compat.yaml` rows a rule rests on: the tables its kind reads, and the Helm
/// minimums of the flags its words name.
fn compat_rows(r: &Rule) -> Vec<String> {
    let compat = crate::audit::compat::get();
    let mut rows: Vec<String> = r.check.as_ref().map(|c| c.compat()).unwrap_or_default().iter().flat_map(|t| compat.rows(*t)).collect();
    let words = format!("{}\n{}\n{}", r.fix, r.why, r.title);
    rows.extend(compat.helm_flags_in(&words).map(crate::audit::compat::helm_row));
    rows
}

fn compat_text(r: &Rule) -> String {
    let rows = compat_rows(r);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\nCompatibility ({}):\n", crate::audit::compat::FILE);
    for row in rows {
        out.push_str(&format!("  {row}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every severity a kind's code sets (outside its tests) is in [`COMPUTED`], so `rules`
    /// lists what each rule really emits.
    #[test]
    fn computed_severities_follow_the_kinds_code() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/audit/kinds");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if matches!(stem.as_str(), "mod" | "support") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            let kind = stem.replace('_', "-");
            for s in [Severity::Error, Severity::Warning, Severity::Info] {
                let named = format!(
                    "Severity::{}",
                    match s {
                        Severity::Error => "Error",
                        Severity::Warning => "Warning",
                        Severity::Info => "Info",
                    }
                );
                if code.contains(&named) {
                    assert!(computed(&kind).contains(&s), "{}: the kind sets {named}; add it to COMPUTED", path.display());
                }
            }
        }
    }

    #[test]
    fn the_list_names_computed_severities_and_keeps_columns_for_long_kinds() {
        let mut rules = crate::audit::rules::load(None).unwrap();
        let handoff = rules.iter().find(|r| r.id == "TA-RT-001").unwrap().clone();
        assert_eq!(severities(&[&handoff]), [Severity::Error, Severity::Warning]);
        let mut long = handoff.clone();
        long.id = "TA-LONG-001".into();
        long.kind = "a-kind-name-much-longer-than-any-built-in-one".into();
        rules.push(long);
        let text = list(&rules);
        let lines: Vec<&str> = text.lines().collect();
        let title_at = |line: &str, title: &str| line.find(title).unwrap();
        let header = title_at(lines[0], "TITLE");
        for line in &lines[1..] {
            let r = rules.iter().find(|r| line.starts_with(&format!("{} ", r.id))).unwrap();
            assert_eq!(title_at(line, &r.title), header, "{line}");
        }
        assert!(lines.iter().any(|l| l.starts_with("TA-RT-001") && l.contains(" error/warning ")), "{text}");
        let md = markdown::document(&rules);
        assert!(md.contains("| [`TA-RT-001`](#ta-rt-001) | error/warning | `runtime-handoff` | check, plan, runbook, gitops |"), "{md}");
        let index = md.lines().filter(|l| l.starts_with("| [`TA-")).count();
        assert_eq!(index, lines.len() - 1, "{md}");
        assert!(md.contains("\n## TA-LONG-001\n"), "{md}");
    }
}
