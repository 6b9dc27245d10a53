//! The contract for machines: the JSON Schema (2020-12) of every JSON report, the
//! `schemaVersion` each report carries, and the stamp that puts it first in a document.
//!
//! Compatibility rule: `schemaVersion` is `MAJOR.MINOR`. Within a major version a report only
//! gains: new keys, new optional parts (the minor goes up). Removing or renaming a key,
//! changing its type or meaning, making an optional key required, or adding a value to a closed
//! set (`severity`, a `verdict`) is a new major version. Consumers check the major and ignore
//! keys they do not know. Each report has its own version, and each schema's `schemaVersion`
//! pattern names the major it describes. The schemas live in `schemas/` and are compiled in.
//!
//! The versions' history (docs/integrations.md keeps it for users):
//! - every report carrying one: 1.0;
//! - status and fleet 1.1: a Helm release's `upgrade` (what `helm upgrade` does with it), and
//!   `stuck` also for a release with no deployed revision (Helm refuses it just the same);
//! - gitops 2.0: a reference's `verdict` says `ready`/`blocked`/`not-audited`, the words of the
//!   review's top-level `verdict` (it said `pass`/`fail`).
//! - check, plan, hooks, fleet 1.1, gitops 2.1: a finding's `restore` (commands that undo a
//!   temporary change after the upgrade); `evidence` lists every item; plan's `gates: false`.

use serde::Serialize;
use serde_json::{Map, Value};

/// One JSON report and its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Report {
    /// `check --format json`
    Check,
    /// `plan --format json`
    Plan,
    /// `status --format json`
    Status,
    /// `hooks --format json`
    Hooks,
    /// `diff --format json`
    Diff,
    /// `gitops --format json`
    Gitops,
    /// `migrate --format json` (a Kubernetes List)
    Migrate,
    /// One line of `check|plan|status --format jsonl` (a fleet)
    Fleet,
}

/// Every report, in the order `schema --list` prints them.
pub const ALL: [Report; 8] =
    [Report::Check, Report::Plan, Report::Status, Report::Hooks, Report::Diff, Report::Gitops, Report::Migrate, Report::Fleet];

impl Report {
    pub fn name(self) -> &'static str {
        match self {
            Report::Check => "check",
            Report::Plan => "plan",
            Report::Status => "status",
            Report::Hooks => "hooks",
            Report::Diff => "diff",
            Report::Gitops => "gitops",
            Report::Migrate => "migrate",
            Report::Fleet => "fleet",
        }
    }

    /// The schema's text, as `schema REPORT` prints it.
    pub fn schema(self) -> &'static str {
        match self {
            Report::Check => include_str!("../../schemas/check.json"),
            Report::Plan => include_str!("../../schemas/plan.json"),
            Report::Status => include_str!("../../schemas/status.json"),
            Report::Hooks => include_str!("../../schemas/hooks.json"),
            Report::Diff => include_str!("../../schemas/diff.json"),
            Report::Gitops => include_str!("../../schemas/gitops.json"),
            Report::Migrate => include_str!("../../schemas/migrate.json"),
            Report::Fleet => include_str!("../../schemas/fleet.json"),
        }
    }

    /// The `schemaVersion` the report carries (None: the migrate List, whose contract is
    /// Kubernetes' `v1` List, carries none so that kubectl applies it unchanged).
    pub fn version(self) -> Option<&'static str> {
        match self {
            Report::Migrate => None,
            Report::Gitops => Some("2.1"),
            Report::Check | Report::Plan | Report::Hooks | Report::Status | Report::Fleet => Some("1.1"),
            Report::Diff => Some("1.0"),
        }
    }
}

/// `value` serialised with `schemaVersion` as its first key (objects only; anything else is
/// returned as it is).
pub fn stamped(report: Report, value: &impl Serialize) -> Result<Value, serde_json::Error> {
    let value = serde_json::to_value(value)?;
    let (Some(version), Value::Object(map)) = (report.version(), &value) else { return Ok(value) };
    let mut out = Map::with_capacity(map.len() + 1);
    out.insert("schemaVersion".into(), Value::String(version.into()));
    for (k, v) in map {
        if k != "schemaVersion" {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_2020_12_json_named_for_its_report() {
        for r in ALL {
            let schema: Value = serde_json::from_str(r.schema()).unwrap_or_else(|e| panic!("{}: {e}", r.name()));
            assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{}", r.name());
            assert_eq!(schema["$id"], format!("urn:trainer-audit:schema:{}", r.name()));
            let requires_version = schema["required"].as_array().unwrap().iter().any(|k| k == "schemaVersion");
            assert_eq!(requires_version, r.version().is_some(), "{}", r.name());
            // The schema describes one major: the version the report carries, not the next.
            let Some(version) = r.version() else { continue };
            let pattern = schema["$defs"]["schemaVersion"]["pattern"].as_str().unwrap_or_else(|| panic!("{}", r.name()));
            let pattern = regex::Regex::new(pattern).unwrap();
            let (major, minor) = version.split_once('.').unwrap();
            let next: u32 = major.parse::<u32>().unwrap() + 1;
            assert!(
                pattern.is_match(version) && pattern.is_match(&format!("{major}.{}", minor.parse::<u32>().unwrap() + 1)),
                "{}",
                r.name()
            );
            assert!(!pattern.is_match(&format!("{next}.0")), "{}: the schema of {version} accepts {next}.0", r.name());
        }
    }

    #[test]
    fn a_gitops_reference_speaks_the_reviews_verdict_words_since_2_0() {
        assert_eq!(Report::Gitops.version().map(|v| v.starts_with("2.")), Some(true));
        let schema: Value = serde_json::from_str(Report::Gitops.schema()).unwrap();
        let words = &schema["$defs"]["reference"]["properties"]["verdict"]["enum"];
        assert_eq!(words, &serde_json::json!(["ready", "blocked", "not-audited"]), "{schema}");
        for (verdict, word) in [
            (crate::gitops_review::Verdict::Ready, "ready"),
            (crate::gitops_review::Verdict::Blocked, "blocked"),
            (crate::gitops_review::Verdict::NotAudited, "not-audited"),
        ] {
            assert_eq!(serde_json::to_value(verdict).unwrap(), word);
        }
    }

    #[test]
    fn the_stamp_goes_first_and_only_on_objects() {
        let v = stamped(Report::Check, &serde_json::json!({"release": "r", "schemaVersion": "0.1"})).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"schemaVersion":"1.1","release":"r"}"#);
        assert_eq!(stamped(Report::Migrate, &serde_json::json!({"kind": "List"})).unwrap(), serde_json::json!({"kind": "List"}));
        assert_eq!(stamped(Report::Check, &serde_json::json!([1])).unwrap(), serde_json::json!([1]));
    }
}
