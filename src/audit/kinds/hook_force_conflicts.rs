//! `hook-force-conflicts`: hooks that server-side apply with `--force-conflicts`, taking fields other managers own.

use serde::Deserialize;

use super::support::hook_hit;
use super::support::{lines_matching, pattern};
use super::{Check, Hit};
use crate::audit::input::{ChartInput, CheckInput};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        self.review(&input.chart()).unwrap_or_default()
    }

    fn review(&self, chart: &ChartInput) -> Option<Vec<Hit>> {
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let forced = lines_matching(&hook.script(), pattern!(r"--force-conflicts"));
            (!forced.is_empty()).then(|| {
                hook_hit(hook, format!("{} runs server-side apply with --force-conflicts: it takes ownership of fields other managers own, so local edits to the objects it applies are overwritten on every run", hook.identity.name), forced)
            })
        });
        Some(hits.collect())
    }
}
