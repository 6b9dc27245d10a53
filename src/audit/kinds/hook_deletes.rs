//! `hook-deletes`: hooks whose script deletes objects, with the label selections it deletes by (a prune loop selects in its `for … in $(kubectl get … -l X)` line).

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
            let script = hook.script();
            let mut deletes = lines_matching(&script, pattern!(r"\bkubectl\b.*\bdelete\b"));
            if deletes.is_empty() {
                return None;
            }
            let loops = lines_matching(&script, pattern!(r"^for\b.*\bkubectl\b.*\bget\b"));
            deletes.splice(0..0, loops.iter().cloned());
            let selectors: Vec<String> = deletes
                .iter()
                .flat_map(|l| pattern!(r"(?:--selector[= ]|-l\s+)(\S+)").captures_iter(l).map(|c| c[1].to_string()).collect::<Vec<_>>())
                .collect();
            let looped = !loops.is_empty();
            let what = if selectors.is_empty() { String::new() } else { format!(" selecting {}", selectors.join(", ")) };
            let message = format!(
                "{} deletes objects{what}{}: anything carrying that selection is removed, including objects you labelled yourself",
                hook.identity.name,
                if looped { " in a loop over what it finds" } else { "" }
            );
            let hit = hook_hit(hook, message, deletes);
            Some(if looped { hit.variant("loop") } else { hit })
        });
        hits.collect()
    }
}
