//! `hook-force-conflicts`: hooks that server-side apply with `--force-conflicts`, taking fields other managers own.

use serde::Deserialize;

use super::support::hook_hit;
use super::support::{lines_matching, pattern};
use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let forced = lines_matching(&hook.script(), pattern!(r"--force-conflicts"));
            (!forced.is_empty()).then(|| {
                hook_hit(hook, format!("{} runs server-side apply with --force-conflicts: it takes ownership of fields other managers own, so local edits to the objects it applies are overwritten on every run", hook.identity.name), forced)
            })
        });
        hits.collect()
    }
}
