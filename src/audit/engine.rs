//! Running rules: each rule that applies to the upgrade runs its kind, and every hit becomes a
//! finding carrying the rule's id, severity, title, source and filled-in fix.

use std::collections::BTreeMap;

use super::finding::{sort_findings, Finding};
use super::input::CheckInput;
use super::kinds::kind;
use super::rules::Rule;

pub fn run(rules: &[Rule], input: &CheckInput) -> Vec<Finding> {
    let mut findings = Vec::new();
    for rule in rules.iter().filter(|r| r.applies_to(&input.from, &input.to)) {
        let Some(spec) = kind(&rule.kind) else { continue };
        for hit in (spec.run)(rule, input) {
            let mut vars: BTreeMap<String, String> = BTreeMap::new();
            vars.insert("release".into(), input.release_name.clone());
            vars.insert("namespace".into(), input.namespace.clone());
            vars.insert("from".into(), input.from.to_string());
            vars.insert("to".into(), input.to.to_string());
            vars.extend(hit.vars.clone());
            findings.push(Finding {
                id: rule.id.clone(),
                severity: rule.severity,
                title: rule.title.clone(),
                subject: hit.subject,
                location: hit.location,
                message: hit.message,
                evidence: hit.evidence,
                fix: rule.fix_with(&vars),
                source: rule.source.clone(),
            });
        }
    }
    sort_findings(&mut findings);
    findings
}
