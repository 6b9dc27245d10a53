//! `runtime-drift`: live runtimes that differ from what the target's installer hook applies
//! with `--force-conflicts` (the live spec is overwritten).

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::inventory::runtime::Delivery;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Runtimes the target's hook force-applies that differ live: local changes are overwritten.
impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for r in input.target.runtimes.iter().filter(|r| matches!(r.delivery, Delivery::ConfigMap { .. })) {
            let Some(live) = input.live(&r.kind, &r.namespace, &r.name) else { continue };
            let (mut want, mut have) = (r.body.get("spec").cloned().unwrap_or(Json::Null), live.get("spec").cloned().unwrap_or(Json::Null));
            want.sort_all_objects();
            have.sort_all_objects();
            if want != have {
                hits.push(
                    Hit::new(
                        format!("{}/{}", r.kind, r.name),
                        format!(
                            "live {}/{} differs from what the installer hook applies with --force-conflicts: the live spec is overwritten",
                            r.kind, r.name
                        ),
                    )
                    .evidence(format!("delivered by {}", r.delivery.describe()))
                    .var("kind", r.kind.to_ascii_lowercase())
                    .var("name", r.name.clone()),
                );
            }
        }
        hits
    }
}
