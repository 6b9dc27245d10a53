//! `hook-argocd-unsupported`: under Argo CD, hooks whose every event is one Argo CD has no phase for: it never applies them.

use serde::Deserialize;

use super::support::hook_hit;
use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;
use crate::engine::hooks::argocd_phase;
use crate::engine::Engine;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        if chart.engine != Engine::Argocd {
            return Vec::new();
        }
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let never = hook.events.iter().all(|e| argocd_phase(e, chart.argocd).phase.is_none());
            never.then(|| {
                let message = format!(
                    "{} carries only hook events Argo CD does not support ({}): Argo CD never applies it",
                    hook.identity.name,
                    hook.events.join(", ")
                );
                hook_hit(hook, message, vec![format!("helm.sh/hook: {}", hook.events.join(","))])
            })
        });
        hits.collect()
    }
}
