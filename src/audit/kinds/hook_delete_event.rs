//! `hook-delete-event`: delete hooks, and what the engine does with them: Helm and Flux run them
//! at uninstall, Argo CD only from the version that has the phase, and kustomize `helmCharts`
//! (`helm template`, hooks included unless `skipHooks`) applies them as plain objects, so a delete
//! Job runs once, when it is first applied: at install, beside any post-install Job.

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
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let delete_events: Vec<&String> = hook.events.iter().filter(|e| e.ends_with("-delete")).collect();
            if delete_events.is_empty() {
                return None;
            }
            let name = &hook.identity.name;
            let evidence = vec![format!("helm.sh/hook: {}", hook.events.join(","))];
            let hit = match chart.engine {
                Engine::Kustomize => hook_hit(
                    hook,
                    format!("{name} is a delete hook; kustomize helmCharts applies it as a plain Job, which runs once when first applied: at install, beside (and racing) any post-install hook, not at uninstall"),
                    evidence,
                )
                .variant("kustomize"),
                Engine::Argocd => {
                    let unsupported: Vec<String> = delete_events
                        .iter()
                        .map(|e| argocd_phase(e, chart.argocd))
                        .filter(|p| p.supported != Some(true))
                        .map(|p| format!("{} needs Argo CD ≥ {}", p.event, p.since.unwrap_or("?")))
                        .collect();
                    if unsupported.is_empty() {
                        hook_hit(hook, format!("{name} runs when the Argo CD Application is deleted"), evidence).variant("argocd-supported")
                    } else {
                        let message =
                            format!("{name} is a delete hook Argo CD may never run ({}): cleanup it does is skipped", unsupported.join("; "));
                        hook_hit(hook, message, evidence).variant("argocd")
                    }
                }
                Engine::Helm | Engine::Flux => hook_hit(hook, format!("{name} runs on uninstall ({})", hook.events.join(", ")), evidence),
            };
            Some(hit)
        });
        hits.collect()
    }
}
