//! `release-stuck`: the Helm release's last operation is pending or failed.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(r) = input.release else { return Vec::new() };
        if !r.current.is_stuck() {
            return Vec::new();
        }
        let last_good = r
            .history
            .iter()
            .rev()
            .find(|(_, s, _)| s == "deployed" || s == "superseded")
            .map(|(rev, _, _)| rev.to_string())
            .unwrap_or_default();
        vec![Hit::new(
            format!("release {}/{}", r.current.namespace, r.current.name),
            format!("revision {} is {}: Helm refuses another upgrade until it is resolved", r.current.revision, r.current.status),
        )
        .evidence(format!("status {} ({})", r.current.status, r.current.description))
        .var("revision", last_good)]
    }
}
