//! `label-bypass`: user runtimes (not rendered by the target) carrying a label that makes the
//! validating webhooks skip them.

use serde::Deserialize;

use super::support::name_of;
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `key=value`.
    pub label: String,
}

/// `kubectl label KIND NAME [-n NAMESPACE] KEY-`, quoted: a TrainingRuntime is namespaced, so
/// its command names the namespace (without it kubectl looks in the context's default namespace).
fn unlabel_command(o: &serde_json::Value, key: &str) -> String {
    let kind = str_at(o, &["kind"]).to_ascii_lowercase();
    let mut words = vec!["kubectl", "label", kind.as_str(), str_at(o, &["metadata", "name"])];
    let namespace = str_at(o, &["metadata", "namespace"]);
    if !namespace.is_empty() {
        words.extend(["-n", namespace]);
    }
    let unset = format!("{key}-");
    words.push(&unset);
    crate::shell::join(words)
}

/// User runtimes (not rendered by the target) carrying a label that skips webhook validation.
impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let label = &self.label;
        let (key, value) = label.split_once('=').unwrap_or((label, ""));
        input
            .state
            .runtimes()
            .filter(|o| str_at(o, &["metadata", "labels", key]) == value)
            .filter(|o| !input.target.runtimes.iter().any(|r| r.kind == str_at(o, &["kind"]) && r.name == str_at(o, &["metadata", "name"])))
            .map(|o| {
                Hit::new(
                    name_of(o),
                    format!("{} is not a built-in runtime but carries {label}: the validating webhooks skip it", name_of(o)),
                )
                .evidence(format!("label {label}"))
                .var("commands", unlabel_command(o, key))
            })
            .collect()
    }
}
