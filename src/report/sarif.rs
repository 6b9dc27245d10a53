//! SARIF 2.1.0 for code scanning (GitHub, GitLab): one run, the rules that fired as the tool's
//! rules, one result per finding located at the template that produced it.

use std::collections::BTreeMap;

use serde_json::json;

use crate::audit::finding::Finding;

pub fn sarif(findings: &[Finding]) -> serde_json::Value {
    let mut rules: BTreeMap<&str, &Finding> = BTreeMap::new();
    for f in findings {
        rules.entry(f.id.as_str()).or_insert(f);
    }
    let rule_index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let rules_json: Vec<serde_json::Value> = rules
        .values()
        .map(|f| {
            json!({
                "id": f.id,
                "shortDescription": {"text": f.title},
                "help": {"text": format!("{}\nSource: {}", f.fix, f.source)},
                "defaultConfiguration": {"level": f.severity.sarif_level()},
            })
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
