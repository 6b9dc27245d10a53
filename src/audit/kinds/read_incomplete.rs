//! `read-incomplete`: the cluster read (live, or the read that made the snapshot) was refused some
//! lists, so every check over those objects saw nothing: a gate that passed would pass on
//! missing data.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let warnings = &input.state.warnings;
        if warnings.is_empty() {
            return Vec::new();
        }
        let mut hit = Hit::new(
            "cluster",
            format!(
                "{} of the cluster read {} refused: the checks over those objects saw none",
                super::counted(warnings.len(), "list"),
                super::agree(warnings.len(), "was", "were")
            ),
        );
        for w in warnings {
            hit = hit.evidence(w.clone());
        }
        vec![hit]
    }
}
