//! `hook-image-pin`: hook containers whose image is not pinned by digest (a tag can move).

use serde::Deserialize;

use super::support::hook_hit;
use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;
use crate::objects::workload::{ImageRef, Pin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for hook in &chart.chart.hooks {
            for c in &hook.containers {
                let image = ImageRef::parse(&c.image);
                if image.pin == Pin::Digest {
                    continue;
                }
                let message = format!(
                    "{} container {} uses {}: a tag can move, so the hook may run different software than was reviewed",
                    hook.identity.name, c.name, c.image
                );
                let hit = hook_hit(hook, message, vec![format!("image={} pin={:?}", c.image, image.pin).to_lowercase()]);
                hits.push(if image.pin == Pin::Tag { hit.variant("tag") } else { hit });
            }
        }
        hits
    }
}
