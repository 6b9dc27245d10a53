//! `hooks-skipped`: in a GitOps review, hooks the file's engine options switch off for this
//! change while the chart relies on them at install or upgrade: kustomize `helmCharts` with
//! `skipHooks: true` renders with `--no-hooks` (kubernetes-sigs/kustomize
//! api/types/helmchartargs.go, kustomize/v5.8.1), Flux helm-controller skips them with
//! `spec.install.disableHooks` / `spec.upgrade.disableHooks` (fluxcd/helm-controller
//! api/v2/helmrelease_types.go, v1.6.3). Whatever such a hook does (Trainer 2.3 applies its
//! built-in runtimes from a post-install/post-upgrade hook) then never happens.

use serde::Deserialize;

use super::support::hook_hit;
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::engine::Engine;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(ctx) = input.gitops else { return Vec::new() };
        // A reference reviewed as installed is an install; anything else an upgrade.
        let action = if input.from == input.to { "install" } else { "upgrade" };
        let why = match ctx.engine {
            Engine::Kustomize if ctx.is_on("skipHooks") => {
                "the helmCharts entry sets skipHooks: true (helm template --no-hooks)".to_string()
            }
            Engine::Flux if ctx.is_on(&format!("{action}.disableHooks")) => {
                format!("the HelmRelease sets spec.{action}.disableHooks: true")
            }
            _ => return Vec::new(),
        };
        let events = [format!("pre-{action}"), format!("post-{action}")];
        input
            .target
            .hooks
            .iter()
            .filter(|h| h.events.iter().any(|e| events.contains(e)))
            .map(|hook| {
                let name = &hook.identity.name;
                let mounts = if hook.config_maps.is_empty() {
                    String::new()
                } else {
                    format!(" (it reads ConfigMap {})", hook.config_maps.join(", "))
                };
                let message = format!(
                    "{name} is a {} hook{mounts} and {why}: it never runs at this {action}, so what it does is not done",
                    hook.events.join(",")
                );
                hook_hit(hook, message, vec![format!("helm.sh/hook: {}", hook.events.join(","))]).var("hook", name.clone())
            })
            .collect()
    }
}
