//! `label-bypass`: user runtimes (not rendered by the target) carrying a label that makes the
//! validating webhooks skip them.

use serde::Deserialize;

use super::support::name_of;
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::kube::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `key=value`.
    pub label: String,
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
                .var("name", str_at(o, &["metadata", "name"]))
            })
            .collect()
    }
}
