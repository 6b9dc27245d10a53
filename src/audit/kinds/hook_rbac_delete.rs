//! `hook-rbac-delete`: hooks whose service account the chart grants delete rights.

use serde::Deserialize;

use super::support::hook_hit;
use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let destructive: Vec<String> = hook
                .grants
                .iter()
                .filter(|g| !g.rule.destructive_verbs().is_empty())
                .map(|g| format!("{}: {} on {}", g.role, g.rule.verbs.join(","), g.rule.resources.join(",")))
                .collect();
            (!destructive.is_empty()).then(|| {
                let message = format!(
                    "{} runs as {} which the chart grants delete rights; a wrong selector or script bug removes objects cluster-wide",
                    hook.identity.name, hook.service_account
                );
                hook_hit(hook, message, destructive)
            })
        });
        hits.collect()
    }
}
