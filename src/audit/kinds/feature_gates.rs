//! `feature-gates`: feature gates the user sets that the target's controller does not know, and
//! a controller image pinned older than the chart. The manager refuses an unknown gate at
//! start-up (`unrecognized feature gate`) and decodes its configuration strictly, so a pinned
//! older controller whose Configuration lacks a key the chart renders stops at start-up too
//! (`strict decoding error: unknown field`); one that has no `--config` at all (2.0) exits on the
//! flag. A pinned controller that accepts the chart's configuration is variant `older` (it runs,
//! older than the chart's CRDs and hooks). The pin is read where it takes effect, the manager
//! container's image in the target's rendered Deployment (the Trainer charts set it from
//! `image.tag`, not `manager.image.tag`), and named by the user value that holds that tag.

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
    /// The top-level keys each controller version's Configuration declares (its strict decoding
    /// refuses any other); a version no row covers takes its settings as flags and has no
    /// `--config`.
    #[serde(default)]
    pub config: Vec<ConfigKeys>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigKeys {
    pub versions: helm_render::version::Constraint,
    pub keys: Vec<String>,
}

/// The top-level keys of the Trainer controller Configuration the target renders (a ConfigMap
/// value of `kind: Configuration`, `apiVersion: config.trainer.kubeflow.org/…`), with the ConfigMap.
fn rendered_config_keys(input: &CheckInput) -> Option<(String, Vec<String>)> {
    input.target.objects.iter().filter(|o| o.identity.kind == "ConfigMap").find_map(|o| {
        o.body.get("data")?.as_object()?.values().find_map(|text| {
            let doc: Json = serde_saphyr::from_str(text.as_str()?).ok()?;
            let trainer = doc.get("kind")?.as_str()? == "Configuration"
                && doc.get("apiVersion")?.as_str()?.starts_with("config.trainer.kubeflow.org/");
            trainer.then(|| {
                let keys =
                    doc.as_object().map(|m| m.keys().filter(|k| *k != "apiVersion" && *k != "kind").cloned().collect()).unwrap_or_default();
                (o.identity.to_string(), keys)
            })
        })
    })
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
                            "feature gate {gate} is not one the {} controller knows: it refuses it at start-up (\"unrecognized feature gate: {gate}\") and exits",
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
            let pinned = helm_render::version::parse_lenient(tag.trim_start_matches('v'));
            let set_by = value_path(&input.user_values, &tag, "");
            if let (Some(path), Some(pinned)) = (set_by, pinned.filter(|p| p < &input.to)) {
                let runs = format!("{deployment} runs …/{MANAGER_IMAGE}:{tag}");
                let hit = |message: String| {
                    Hit::new(format!("values {path}"), message)
                        .evidence(format!("{path}={tag}"))
                        .evidence(runs.clone())
                        .var("path", path.clone())
                };
                let rendered = rendered_config_keys(input);
                let accepts = self.config.iter().find(|row| row.versions.matches(&pinned)).map(|row| &row.keys);
                match (accepts, rendered) {
                    (None, _) => hits.push(hit(format!(
                        "the release pins the controller image to {tag} ({path}), older than the {} chart; that controller takes its settings as flags and has no --config, which the chart passes: it exits at start-up (\"flag provided but not defined: -config\")",
                        input.to
                    ))),
                    (Some(keys), Some((configmap, rendered))) => {
                        let unknown: Vec<&String> = rendered.iter().filter(|k| !keys.contains(k)).collect();
                        if unknown.is_empty() {
                            hits.push(
                                hit(format!(
                                    "the release pins the controller image to {tag} ({path}), older than the {} chart: that controller accepts the chart's configuration and runs, older than the chart's CRDs and hooks",
                                    input.to
                                ))
                                .variant("older"),
                            );
                        } else {
                            let names: Vec<String> = unknown.iter().map(|k| format!("{k:?}")).collect();
                            hits.push(
                                hit(format!(
                                    "the release pins the controller image to {tag} ({path}), older than the {} chart, whose configuration sets {}, which the {tag} controller's Configuration does not have: its strict decoding stops it at start-up: strict decoding error: unknown field {}",
                                    input.to,
                                    unknown.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "),
                                    names[0]
                                ))
                                .evidence(format!("{configmap} sets {}", rendered.join(", "))),
                            );
                        }
                    }
                    (Some(_), None) => hits.push(hit(format!(
                        "the release pins the controller image to {tag} ({path}), older than the {} chart, which renders no controller Configuration this check recognises: config keys it renders may be unknown to that controller",
                        input.to
                    ))),
                }
            }
        }
        hits
    }
}
