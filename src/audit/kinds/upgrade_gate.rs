//! `upgrade-gate`: the upgrade skips a version every install must land on first.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use helm_render::version::Constraint;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The versions to land on (a constraint, e.g. `~2.3`); `plan` routes through the newest.
    pub via: Constraint,
}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let via = self.via.to_string();
        vec![Hit::new(
            format!("release {}/{}", input.namespace, input.release_name),
            format!("{} → {} skips {via}: the chart requires landing on {via} first", input.from, input.to),
        )
        .evidence(format!("installed {}, target {}", input.from, input.to))
        .var("via", via)]
    }

    fn gate(&self) -> Option<&Constraint> {
        Some(&self.via)
    }
}
