//! Checks on the cluster against the target chart: leftover CRDs, user values the chart no
//! longer knows, and hook risks under the detected engine and Pod Security level.

use std::collections::BTreeMap;

use super::Hit;
use crate::audit::input::CheckInput;
use crate::audit::rules::Rule;
use crate::kube::str_at;

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
    let roots = crate::inventory::paths::collapse(&unknown.iter().cloned().collect(), &defaults.keys().cloned().collect());
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

/// Feature gates the user sets that the target's controller does not know, and a controller
/// image pinned older than the chart (the chart's config keys may be unknown to it). The
/// manager decodes its configuration strictly, so either stops it at start-up.
pub fn feature_gates(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let known = rule.param_strings("known");
    let gates_path = rule.param_str("values_path").unwrap_or("manager.config.featureGates");
    let tag_path = rule.param_str("image_tag_path").unwrap_or("manager.image.tag");
    let at = |path: &str| path.split('.').try_fold(&input.user_values, |v, k| v.get(k));
    let mut hits = Vec::new();
    if let Some(gates) = at(gates_path).and_then(|g| g.as_object()) {
        for gate in gates.keys().filter(|g| !known.contains(g)) {
            hits.push(
                Hit::new(
                    format!("values {gates_path}.{gate}"),
                    format!(
                        "feature gate {gate} is not one the {} controller knows: its strict config decoding stops it at start-up",
                        input.to
                    ),
                )
                .evidence(format!("known gates: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") }))
                .var("path", format!("{gates_path}.{gate}")),
            );
        }
    }
    if let Some(tag) = at(tag_path).and_then(|t| t.as_str()) {
        let pinned = crate::version::parse_lenient(tag.trim_start_matches('v'));
        if pinned.as_ref().is_some_and(|p| p < &input.to) {
            hits.push(
                Hit::new(format!("values {tag_path}"), format!("the release pins the controller image to {tag}, older than the {} chart: config keys the chart renders may be unknown to it", input.to))
                    .evidence(format!("{tag_path}={tag}"))
                    .var("path", tag_path.to_string()),
            );
        }
    }
    hits
}
