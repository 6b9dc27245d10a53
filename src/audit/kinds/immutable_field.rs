//! `immutable-field`: the target renders a workload selector different from the live one;
//! `spec.selector` is immutable, so the upgrade fails. Variant `adopted` when the target's
//! selector matches the labels of the live Pods (the live pod template's, which the current
//! ReplicaSet carries): once the Deployment is deleted with its ReplicaSets orphaned, the one
//! Helm re-creates adopts the old ReplicaSet and rolls it over (kube-controller-manager's
//! ControllerRefManager claims an orphan its selector matches). Variant `orphaned` otherwise: no
//! Deployment would ever claim the old ReplicaSet again.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Deployment selectors are immutable: a target selector that differs from the live one fails
/// the upgrade.
impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for o in input.target.objects.iter().filter(|o| matches!(o.identity.kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet")) {
            let Some(live) = input.live(&o.identity.kind, &o.identity.namespace, &o.identity.name) else { continue };
            let (want, have) = (o.body.pointer("/spec/selector"), live.pointer("/spec/selector"));
            let norm = |v: Option<&Json>| {
                v.cloned().map(|mut v| {
                    v.sort_all_objects();
                    v
                })
            };
            if norm(want) != norm(have) {
                let pods = live.pointer("/spec/template/metadata/labels");
                let variant = if want.is_some_and(|selector| selects(selector, pods)) { "adopted" } else { "orphaned" };
                hits.push(
                    Hit {
                        subject: o.identity.to_string(),
                        location: o.source.clone(),
                        message: format!(
                            "{} has selector {} live; the target renders {}: spec.selector is immutable, so the upgrade fails",
                            o.identity,
                            compact(have),
                            compact(want)
                        ),
                        evidence: vec![
                            format!("live: {}", compact(have)),
                            format!("target: {}", compact(want)),
                            format!("live Pods' labels: {}", compact(pods)),
                        ],
                        ..Hit::default()
                    }
                    .variant(variant)
                    .var("object", o.identity.to_string())
                    .var("kind", o.identity.kind.to_ascii_lowercase())
                    .var("name", o.identity.name.clone())
                    .var("object_namespace", o.identity.namespace.clone()),
                );
            }
        }
        hits
    }
}

/// Whether a label selector (`matchLabels`, `matchExpressions`) selects an object with these
/// labels, as the API machinery's `LabelSelectorAsSelector` does; an empty selector selects
/// everything (a Deployment's may not be empty).
pub fn selects(selector: &Json, labels: Option<&Json>) -> bool {
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Json::as_str);
    let by_labels = selector.get("matchLabels").and_then(Json::as_object).into_iter().flatten().all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector.get("matchExpressions").and_then(Json::as_array).into_iter().flatten().all(|e| {
        let key = e.get("key").and_then(Json::as_str).unwrap_or("");
        let values: Vec<&str> = e.get("values").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).collect();
        match e.get("operator").and_then(Json::as_str) {
            Some("In") => label(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => label(key).is_some(),
            Some("DoesNotExist") => label(key).is_none(),
            _ => false,
        }
    });
    by_labels && by_expressions
}

fn compact(v: Option<&Json>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "<none>".into())
}

#[cfg(test)]
mod tests {
    use super::selects;
    use serde_json::json;

    #[test]
    fn a_selector_selects_the_labels_it_is_a_subset_of() {
        let pods = json!({"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/component": "manager", "team": "ml"});
        // 2.1 with manager.labels → 2.2+: the four default labels, a subset of the old Pods'.
        assert!(selects(
            &json!({"matchLabels": {"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/component": "manager"}}),
            Some(&pods)
        ));
        // kustomize → Helm, or a selectorLabels added: a label the old Pods lack.
        assert!(!selects(&json!({"matchLabels": {"app.kubernetes.io/name": "kubeflow-trainer", "tier": "control"}}), Some(&pods)));
        assert!(!selects(&json!({"matchLabels": {"app.kubernetes.io/name": "trainer"}}), Some(&pods)));
        let expr = |op: &str, values: &[&str]| json!({"matchExpressions": [{"key": "team", "operator": op, "values": values}]});
        assert!(selects(&expr("In", &["ml", "x"]), Some(&pods)) && !selects(&expr("In", &["x"]), Some(&pods)));
        assert!(selects(&expr("NotIn", &["x"]), Some(&pods)) && !selects(&expr("NotIn", &["ml"]), Some(&pods)));
        assert!(selects(&expr("Exists", &[]), Some(&pods)) && !selects(&expr("DoesNotExist", &[]), Some(&pods)));
        assert!(!selects(&json!({"matchLabels": {"a": "b"}}), None));
    }
}
