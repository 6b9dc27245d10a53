//! `feature-gates`: feature gates the user sets that the target's controller does not know,
//! and a controller image pinned older than the chart. The manager rejects an unknown gate and
//! decodes its configuration strictly, so either stops it at start-up. The pin is read where it
//! takes effect, the manager container's image in the target's rendered Deployment (the Trainer
//! charts set it from `image.tag`, not `manager.image.tag`), and named by the user value that
//! holds that tag.

use serde::Deserialize;
use serde_json::Value as Json;

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
}

fn default_gates_path() -> String {
    "manager.config.featureGates".into()
}

/// The image repository's last segment of the Trainer controller manager.
const MANAGER_IMAGE: &str = "trainer-controller-manager";

/// The tag of the manager container's image in the rendered target (`…/trainer-controller-manager:v2.2.1`),
/// with the Deployment it is in.
fn rendered_manager_tag(input: &CheckInput) -> Option<(String, String)> {
    input.target.objects.iter().filter(|o| o.identity.kind == "Deployment").find_map(|o| {
        let containers = o.body.pointer("/spec/template/spec/containers")?.as_array()?;
        containers.iter().find_map(|c| {
            let image = c.get("image")?.as_str()?;
            let image = image.split('@').next().unwrap_or(image);
            let (repository, tag) = image.rsplit_once(':').filter(|(r, _)| !r.ends_with('/') && !r.contains("://"))?;
            (repository.rsplit('/').next() == Some(MANAGER_IMAGE)).then(|| (o.identity.to_string(), tag.to_string()))
        })
    })
}

/// The dotted path of the first user value (depth first, keys in order) that is the string `wanted`.
fn value_path(values: &Json, wanted: &str, prefix: &str) -> Option<String> {
    match values {
        Json::String(s) if s == wanted => Some(prefix.to_string()),
        Json::Object(map) => {
            map.iter().find_map(|(k, v)| value_path(v, wanted, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }))
        }
        _ => None,
    }
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
        let gates_path = self.values_path.as_str();
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
        // Only a tag the user set pins the image: the chart's own default follows its version.
        if let Some((deployment, tag)) = rendered_manager_tag(input) {
            let pinned = crate::version::parse_lenient(tag.trim_start_matches('v'));
            let set_by = value_path(&input.user_values, &tag, "");
            if let (Some(path), true) = (set_by, pinned.as_ref().is_some_and(|p| p < &input.to)) {
                hits.push(
                    Hit::new(
                        format!("values {path}"),
                        format!(
                            "the release pins the controller image to {tag} ({path}), older than the {} chart: config keys the chart renders may be unknown to it",
                            input.to
                        ),
                    )
                    .evidence(format!("{path}={tag}"))
                    .evidence(format!("{deployment} runs …/{MANAGER_IMAGE}:{tag}"))
                    .var("path", path),
                );
            }
        }
        hits
    }
}
