//! `feature-gates`: feature gates the user sets that the target's controller does not know,
//! and a controller image pinned older than the chart. The manager decodes its configuration
//! strictly, so either stops it at start-up.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The gates the target's controller knows.
    pub known: Vec<String>,
    /// Where the values set the gates.
    #[serde(default = "default_gates_path")]
    pub values_path: String,
    /// Where the values pin the controller image's tag.
    #[serde(default = "default_tag_path")]
    pub image_tag_path: String,
}

fn default_gates_path() -> String {
    "manager.config.featureGates".into()
}

fn default_tag_path() -> String {
    "manager.image.tag".into()
}

/// Feature gates the user sets that the target's controller does not know, and a controller
/// image pinned older than the chart (the chart's config keys may be unknown to it). The
/// manager decodes its configuration strictly, so either stops it at start-up.
impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let known = &self.known;
        let (gates_path, tag_path) = (self.values_path.as_str(), self.image_tag_path.as_str());
        let at = |path: &str| path.split('.').try_fold(&input.user_values, |v, k| v.get(k));
        let mut hits = Vec::new();
        if let Some(gates) = at(gates_path).and_then(|g| g.as_object()) {
            for gate in gates.keys().filter(|g| !known.contains(g)) {
                hits.push(
                    Hit::new(
                        format!("values {gates_path}.{gate}"),
                        format!(
                            "feature gate {gate} is not one the {} controller knows: its strict config decoding stops it at start-up",
                            input.to
                        ),
                    )
                    .evidence(format!("known gates: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") }))
                    .var("path", format!("{gates_path}.{gate}")),
                );
            }
        }
        if let Some(tag) = at(tag_path).and_then(|t| t.as_str()) {
            let pinned = helm_render::version::parse_lenient(tag.trim_start_matches('v'));
            if pinned.as_ref().is_some_and(|p| p < &input.to) {
                hits.push(
                Hit::new(format!("values {tag_path}"), format!("the release pins the controller image to {tag}, older than the {} chart: config keys the chart renders may be unknown to it", input.to))
                    .evidence(format!("{tag_path}={tag}"))
                    .var("path", tag_path.to_string()),
            );
            }
        }
        hits
    }
}
