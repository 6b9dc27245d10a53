//! `immutable-field`: the target renders a workload selector different from the live one;
//! `spec.selector` is immutable, so the upgrade fails.

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
                        evidence: vec![format!("live: {}", compact(have)), format!("target: {}", compact(want))],
                        ..Hit::default()
                    }
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

fn compact(v: Option<&Json>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "<none>".into())
}
