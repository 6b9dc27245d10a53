//! Trainer runtimes (ClusterTrainingRuntime, TrainingRuntime) in a render, however the chart
//! delivers them: as release objects (2.2) or as a YAML stream inside a ConfigMap that a hook
//! Job applies (2.3's `<fullname>-runtimes-installer`, key `runtimes.yaml`).

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::workload::{containers, ImageRef};
use crate::objects::{objects_in, Object, Origin};

pub const RUNTIME_KINDS: &[&str] = &["ClusterTrainingRuntime", "TrainingRuntime"];

/// How a runtime reaches the cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "via", rename_all = "kebab-case")]
pub enum Delivery {
    /// Rendered as a release object: Helm owns it and deletes it when a later chart drops it.
    ReleaseObject { source: String },
    /// Inside a ConfigMap's data, applied by a hook Job; never a release object.
    ConfigMap { config_map: String, key: String, source: String, applied_by: Vec<String> },
}

impl Delivery {
    pub fn describe(&self) -> String {
        match self {
            Delivery::ReleaseObject { .. } => "release object".into(),
            Delivery::ConfigMap { config_map, key, applied_by, .. } if applied_by.is_empty() => format!("ConfigMap {config_map} key {key}"),
            Delivery::ConfigMap { config_map, key, applied_by, .. } => {
                format!("ConfigMap {config_map} key {key}, applied by hook {}", applied_by.join(", "))
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Runtime {
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    pub delivery: Delivery,
    pub images: Vec<ImageRef>,
    /// The object as rendered (for diffs).
    #[serde(skip)]
    pub body: Json,
}

/// Runtimes rendered directly, then those unpacked from ConfigMaps (`hook_mounts` maps a
/// ConfigMap name to the hooks that mount it).
pub fn runtimes(objects: &[&Object], hook_mounts: &dyn Fn(&str) -> Vec<String>, namespace: &str) -> Vec<Runtime> {
    let mut out = Vec::new();
    for o in objects {
        if RUNTIME_KINDS.contains(&o.identity.kind.as_str()) && o.origin == Origin::Template {
            out.push(runtime(o, Delivery::ReleaseObject { source: o.source.clone() }));
        }
    }
    for o in objects.iter().filter(|o| o.identity.kind == "ConfigMap") {
        let Some(data) = o.body.get("data").and_then(Json::as_object) else { continue };
        for (key, text) in data {
            let Some(text) = text.as_str() else { continue };
            if !RUNTIME_KINDS.iter().any(|k| text.contains(k)) {
                continue;
            }
            for inner in objects_in(text, &o.source, Origin::Template, namespace) {
                if RUNTIME_KINDS.contains(&inner.identity.kind.as_str()) {
                    let delivery = Delivery::ConfigMap {
                        config_map: o.identity.name.clone(),
                        key: key.clone(),
                        source: o.source.clone(),
                        applied_by: hook_mounts(&o.identity.name),
                    };
                    out.push(runtime(&inner, delivery));
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.kind, &a.namespace, &a.name).cmp(&(&b.kind, &b.namespace, &b.name)));
    out
}

fn runtime(o: &Object, delivery: Delivery) -> Runtime {
    let mut images: Vec<ImageRef> = containers(&o.body).iter().filter(|c| !c.image.is_empty()).map(|c| ImageRef::parse(&c.image)).collect();
    images.sort();
    images.dedup();
    Runtime {
        kind: o.identity.kind.clone(),
        namespace: if o.identity.kind == "TrainingRuntime" { o.identity.namespace.clone() } else { String::new() },
        name: o.identity.name.clone(),
        delivery,
        images,
        body: o.body.clone(),
    }
}
