//! Rules as data: YAML files in `rules/` (embedded at build time) and any `--rules DIR`, each
//! rule naming a check kind (code) with its params, a severity, the versions it applies to, and
//! the words a finding carries (title, why with its source, a fix template). A bad file fails at
//! load naming the file and line.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::finding::Severity;
use super::kinds::kind;
use crate::version::Constraint;

/// The rule packs shipped with the tool.
pub const EMBEDDED: &[(&str, &str)] = &[("rules/trainer.yaml", include_str!("../../rules/trainer.yaml"))];

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Applies {
    /// Installed versions the rule applies to (a Helm constraint, e.g. `>=2.0.0-0, <2.3.0-0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Target versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub kind: String,
    pub severity: Severity,
    #[serde(default)]
    pub applies: Applies,
    #[serde(default)]
    pub params: BTreeMap<String, Json>,
    pub title: String,
    pub why: String,
    pub source: String,
    /// `{release}`, `{namespace}`, `{from}`, `{to}` and the kind's own variables are filled in.
    pub fix: String,
    /// Where it was loaded from (`rules/trainer.yaml:12`).
    #[serde(skip_deserializing)]
    pub origin: String,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RuleError(pub String);

impl Rule {
    pub fn param_str(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Json::as_str)
    }

    pub fn param_strings(&self, name: &str) -> Vec<String> {
        match self.params.get(name) {
            Some(Json::Array(items)) => items.iter().filter_map(Json::as_str).map(str::to_string).collect(),
            Some(Json::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        }
    }

    /// Whether the rule applies to this upgrade.
    pub fn applies_to(&self, from: &semver::Version, to: &semver::Version) -> bool {
        let ok =
            |range: &Option<String>, v: &semver::Version| range.as_deref().is_none_or(|r| Constraint::parse(r).is_ok_and(|c| c.matches(v)));
        ok(&self.applies.from, from) && ok(&self.applies.to, to)
    }

    /// The fix with `{name}` placeholders filled from `vars` (unknown ones are left as written).
    pub fn fix_with(&self, vars: &BTreeMap<String, String>) -> String {
        let mut out = self.fix.clone();
        for (k, v) in vars {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        out.trim_end().to_string()
    }
}

fn line_of(text: &str, id: &str) -> usize {
    text.lines().position(|l| l.trim_start().trim_start_matches("- ").trim() == format!("id: {id}")).map(|i| i + 1).unwrap_or(1)
}

/// Parses and validates one rule file.
pub fn parse_rules(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let mut rules: Vec<Rule> =
        serde_saphyr::from_str(text).map_err(|e| RuleError(format!("{name}: {}", e.to_string().lines().next().unwrap_or(""))))?;
    for rule in rules.iter_mut() {
        let line = line_of(text, &rule.id);
        let at = format!("{name}:{line}");
        let bad = |what: String| RuleError(format!("{at}: rule {}: {what}", rule.id));
        let Some(spec) = kind(&rule.kind) else {
            return Err(bad(format!(
                "unknown kind {:?} (known: {})",
                rule.kind,
                super::kinds::KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            )));
        };
        for p in spec.required {
            if !rule.params.contains_key(*p) {
                return Err(bad(format!("kind {} needs param {p:?}", rule.kind)));
            }
        }
        if let Some(unknown) = rule.params.keys().find(|k| !spec.required.contains(&k.as_str()) && !spec.optional.contains(&k.as_str())) {
            return Err(bad(format!("kind {} has no param {unknown:?}", rule.kind)));
        }
        for range in [&rule.applies.from, &rule.applies.to].into_iter().flatten() {
            Constraint::parse(range).map_err(|e| bad(format!("applies: {e}")))?;
        }
        if !rule.id.starts_with("TA-") {
            return Err(bad("ids start with TA-".into()));
        }
        rule.origin = at;
    }
    Ok(rules)
}

/// The embedded rules plus every `*.yaml` in `extra` (sorted by file name); ids must be unique.
pub fn load(extra: Option<&Path>) -> Result<Vec<Rule>, RuleError> {
    let mut rules = Vec::new();
    for (name, text) in EMBEDDED {
        rules.extend(parse_rules(name, text)?);
    }
    if let Some(dir) = extra {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| RuleError(format!("cannot read rules directory {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|e| RuleError(format!("cannot read {}: {e}", path.display())))?;
            rules.extend(parse_rules(&path.display().to_string(), &text)?);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in &rules {
        if !seen.insert(r.id.clone()) {
            return Err(RuleError(format!("{}: rule id {} is defined twice", r.origin, r.id)));
        }
    }
    Ok(rules)
}
