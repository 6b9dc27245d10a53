//! `hook-downloads`: hooks that install packages or download software when they run (they need egress to package mirrors and fail in air-gapped clusters).

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
        let packages = pattern!(
            r"\b(apk\s+add|apt-get\s+install|apt\s+install|yum\s+install|dnf\s+install|microdnf\s+install|pip3?\s+install|curl|wget)\b"
        );
        let hits = chart.chart.hooks.iter().filter_map(|hook| {
            let downloads = lines_matching(&hook.script(), packages);
            (!downloads.is_empty()).then(|| {
                hook_hit(hook, format!("{} fetches software when it runs: it needs egress to package mirrors and fails in air-gapped clusters or behind strict egress policies", hook.identity.name), downloads)
            })
        });
        hits.collect()
    }
}
