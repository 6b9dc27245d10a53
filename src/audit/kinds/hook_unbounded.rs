//! `hook-unbounded`: hook Jobs without `backoffLimit` or `activeDeadlineSeconds`: a failing hook retries while Helm waits, holding the release in pending-*.

use serde::Deserialize;

use super::support::hook_hit;
use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let hits = chart.chart.hooks.iter().filter(|h| h.identity.kind == "Job").filter_map(|hook| {
            let mut missing = Vec::new();
            if hook.backoff_limit.is_none() {
                missing.push("backoffLimit (defaults to 6 retries)");
            }
            if hook.active_deadline_seconds.is_none() {
                missing.push("activeDeadlineSeconds (no time limit)");
            }
            (!missing.is_empty()).then(|| {
                let message = format!(
                    "{} sets no {}: a failing hook retries and Helm waits up to its --timeout, holding the release in pending-*",
                    hook.identity.name,
                    missing.join(" and no ")
                );
                hook_hit(hook, message, missing.iter().map(|m| format!("{m}: <unset>")).collect())
            })
        });
        hits.collect()
    }
}
