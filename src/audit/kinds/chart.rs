//! Checks on the cluster against the target chart: leftover CRDs, user values the chart no
//! longer knows, and hook risks under the detected engine and Pod Security level.

use std::collections::BTreeMap;

use super::Hit;
use crate::audit::input::CheckInput;
use crate::audit::rules::Rule;
use crate::inventory::object::str_at;

pub fn crd_present(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let group = rule.param_str("group").unwrap_or("");
    let version = rule.param_str("version");
    input
        .state
        .crds()
        .filter(|c| str_at(c, &["spec", "group"]) == group)
        .filter(|c| {
            version.is_none_or(|v| {
                c.pointer("/spec/versions").and_then(|vs| vs.as_array()).is_some_and(|vs| vs.iter().any(|x| str_at(x, &["name"]) == v))
            })
        })
        .map(|c| {
            let name = str_at(c, &["metadata", "name"]);
            Hit::new(
                format!("CustomResourceDefinition/{name}"),
                format!("{name} is installed ({group}{})", version.map(|v| format!("/{v}")).unwrap_or_default()),
            )
            .var("crd", name)
        })
        .collect()
}

pub fn values_unknown(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let mut user = BTreeMap::new();
    crate::inventory::flatten_values(&input.user_values, "", &mut user);
    let defaults = &input.target.values;
    let subcharts: Vec<&String> = input.target.chart.subcharts.keys().collect();
    let known = |path: &str| {
        let top = path.split('.').next().unwrap_or(path);
        top == "global"
            || subcharts.iter().any(|s| s.as_str() == top)
            || defaults.keys().any(|d| d == path || path.starts_with(&format!("{d}.")) || d.starts_with(&format!("{path}.")))
    };
    let unknown: Vec<String> = user.keys().filter(|p| !known(p)).cloned().collect();
    let roots = crate::diff::paths::collapse(&unknown.iter().cloned().collect(), &defaults.keys().cloned().collect());
    roots
        .into_iter()
        .map(|r| {
            Hit::new(
                format!("values {}", r.path),
                format!("the release sets {r}, which the {} chart does not have: Helm ignores it silently", input.to),
            )
            .evidence(format!("user value {}", r.path))
            .var("path", r.path.clone())
        })
        .collect()
}

/// Re-emits one `hooks` review finding for the target under the detected engine. With
/// `namespace_level`, only when the release namespace enforces that Pod Security level.
pub fn hook_finding(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let wanted = rule.param_str("hook_rule").unwrap_or("");
    let engines = rule.param_strings("engines");
    if !engines.is_empty() && !engines.iter().any(|e| e == input.engine().as_str()) {
        return Vec::new();
    }
    if let Some(level) = rule.param_str("namespace_level") {
        let ns = input.state.of_kind("Namespace").find(|n| str_at(n, &["metadata", "name"]) == input.namespace);
        let enforced = ns.map(|n| str_at(n, &["metadata", "labels", "pod-security.kubernetes.io/enforce"])).unwrap_or("");
        if enforced != level {
            return Vec::new();
        }
    }
    let report = crate::audit::hooks::review(input.target, input.engine(), None);
    report
        .findings
        .into_iter()
        .filter(|f| f.id == wanted)
        .map(|f| {
            Hit { subject: f.subject, location: f.location, message: f.message, evidence: f.evidence, ..Hit::default() }
                .var("engine", input.engine().as_str())
        })
        .collect()
}
