//! SARIF 2.1.0 for code scanning (GitHub, GitLab): one run, the rules that fired as the tool's
//! rules (their metadata from the rule definitions, not from any one finding), one result per
//! finding located at the template that produced it.

use std::collections::BTreeMap;

use serde_json::json;

use crate::audit::finding::Finding;
use crate::audit::rules::Rule;

/// `rules` are the loaded rules the findings' ids name (a finding whose rule is missing still
/// gets an entry, from its own words).
pub fn sarif(findings: &[Finding], rules: &[Rule]) -> serde_json::Value {
    let fired: BTreeMap<&str, &Finding> = findings.iter().map(|f| (f.id.as_str(), f)).rev().collect();
    let rule_index: BTreeMap<&str, usize> = fired.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let rules_json: Vec<serde_json::Value> = fired
        .iter()
        .map(|(id, f)| match rules.iter().find(|r| r.id == *id) {
            Some(r) => json!({
                "id": r.id,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": r.why},
                "help": {"text": format!("{}\nSource: {}", r.fix, r.source)},
                "defaultConfiguration": {"level": r.severity.sarif_level()},
            }),
            None => json!({
                "id": f.id,
                "shortDescription": {"text": f.title},
                "defaultConfiguration": {"level": f.severity.sarif_level()},
            }),
        })
        .collect();
    let results: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.id,
                "ruleIndex": rule_index[f.id.as_str()],
                "level": f.severity.sarif_level(),
                "message": {"text": format!("{}: {}", f.subject, f.message)},
            });
            if !f.location.is_empty() {
                result["locations"] = json!([{"physicalLocation": {"artifactLocation": {"uri": f.location}}}]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "trainer-audit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/kubeflow/trainer",
                "rules": rules_json,
            }},
            "results": results,
        }],
    })
}
