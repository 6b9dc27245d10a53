//! SARIF 2.1.0 for code scanning (GitHub, GitLab): one run, the rules that fired as the tool's
//! rules (their metadata from the rule definitions, their help the fix as this run filled it in),
//! one result per finding located at the template that produced it. For `check` every result
//! has a physical location (`locate`) and the run's invocation carries the verdict.

use std::collections::BTreeMap;

use serde_json::json;

use crate::audit::finding::Finding;
use crate::audit::rules::Rule;

/// `rules` are the loaded rules the findings' ids name (a finding whose rule is missing still
/// gets an entry, from its own words).
pub fn sarif(findings: &[Finding], rules: &[Rule]) -> serde_json::Value {
    let (rules_json, rule_index) = descriptors(findings.iter(), rules);
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
    log(rules_json, results, None)
}

/// The rules that fired as SARIF reporting descriptors (sorted by id), and each id's index.
pub fn descriptors<'a>(findings: impl Iterator<Item = &'a Finding>, rules: &[Rule]) -> (Vec<serde_json::Value>, BTreeMap<&'a str, usize>) {
    let findings: Vec<&Finding> = findings.collect();
    let fired: BTreeMap<&str, &Finding> = findings.iter().map(|f| (f.id.as_str(), *f)).rev().collect();
    let rule_index: BTreeMap<&str, usize> = fired.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    // The rule's one fix as this run filled it in (the rule's text has `{placeholders}`), for
    // every finding of it: its commands naming all subjects, its restore commands with them.
    let help = |id: &str, source: &str| {
        let members: Vec<&Finding> = findings.iter().copied().filter(|f| f.id == id).collect();
        let lines = super::fix::merged(&members);
        let text: Vec<&str> = lines.iter().map(crate::audit::finding::FixLine::text).collect();
        let mut markdown = String::new();
        super::fix::markdown(&lines, "", &mut markdown);
        json!({"text": format!("{}\nSource: {source}", text.join("\n")), "markdown": format!("{markdown}Source: {source}")})
    };
    let rules_json: Vec<serde_json::Value> = fired
        .iter()
        .map(|(id, f)| match rules.iter().find(|r| r.id == *id) {
            Some(r) => json!({
                "id": r.id,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": r.why},
                "help": help(id, &f.source),
                "defaultConfiguration": {"level": r.severity.sarif_level()},
            }),
            None => json!({
                "id": f.id,
                "shortDescription": {"text": f.title},
                "defaultConfiguration": {"level": f.severity.sarif_level()},
            }),
        })
        .collect();
    (rules_json, rule_index)
}

/// A SARIF 2.1.0 log of one run; `base_ids` are its `originalUriBaseIds`.
pub fn log(rules: Vec<serde_json::Value>, results: Vec<serde_json::Value>, base_ids: Option<serde_json::Value>) -> serde_json::Value {
    let mut run = json!({
        "tool": {"driver": {
            "name": "trainer-audit",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": "https://github.com/kubeflow/trainer",
            "rules": rules,
        }},
        "results": results,
    });
    if let Some(ids) = base_ids {
        run["originalUriBaseIds"] = ids;
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    })
}

/// `check` as SARIF: every result located (see [`locate`]), the verdict in the invocation.
pub fn check_sarif(report: &crate::upgrade::check::CheckReport, rules: &[Rule], files: &locate::Files) -> serde_json::Value {
    let mut doc = sarif(&report.findings, rules);
    let results = doc["runs"][0]["results"].as_array_mut().map(std::mem::take).unwrap_or_default();
    let located: Vec<serde_json::Value> = results
        .into_iter()
        .zip(&report.findings)
        .map(|(mut result, f)| {
            result["locations"] = json!([{"physicalLocation": files.locate(f)}]);
            result
        })
        .collect();
    let run = &mut doc["runs"][0];
    run["results"] = json!(located);
    run["originalUriBaseIds"] = json!({"%SRCROOT%": {"uri": files.root_uri()}});
    run["invocations"] = json!([{
        "executionSuccessful": true,
        "exitCode": report.decision.exit_code(),
        "properties": {
            "verdict": report.decision.verdict,
            "summary": report.decision.line(),
            "counts": report.decision.counts,
            "failOn": report.decision.fail_on,
            "inputs": report.inputs,
        },
    }]);
    doc
}

pub mod locate;
