//! `ownership`: live objects the target will own that lack this release's Helm metadata (Helm
//! refuses to adopt them), with the `kubectl` commands that give it to them.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::{str_at, Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Only these kinds (all when empty).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Never these kinds.
    #[serde(default)]
    pub except: Vec<String>,
}

/// `kubectl` commands that give an object this release's ownership metadata, names quoted.
fn adopt_commands(o: &Object, release: &str, namespace: &str) -> String {
    let resource = if o.identity.group.is_empty() {
        o.identity.kind.to_ascii_lowercase()
    } else {
        format!("{}.{}", o.identity.kind.to_ascii_lowercase(), o.identity.group)
    };
    let q = crate::shell::quote;
    let ns = if o.identity.namespace.is_empty() { String::new() } else { format!(" -n {}", q(&o.identity.namespace)) };
    let (resource, name) = (q(&resource), q(&o.identity.name));
    let release_name = q(&format!("meta.helm.sh/release-name={release}"));
    let release_namespace = q(&format!("meta.helm.sh/release-namespace={namespace}"));
    format!(
        "kubectl label {resource} {name}{ns} app.kubernetes.io/managed-by=Helm --overwrite\nkubectl annotate {resource} {name}{ns} {release_name} {release_namespace} --overwrite"
    )
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        // Helm's adoption check stops only an engine that does not adopt by itself.
        if input.install.method.adopts_by_itself() {
            return Vec::new();
        }
        let (kinds, except) = (&self.kinds, &self.except);
        let owned = input.release_objects();
        let mut targets: Vec<&Object> = input
            .target
            .objects
            .iter()
            .filter(|o| {
                o.origin == Origin::Template && (kinds.is_empty() || kinds.contains(&o.identity.kind)) && !except.contains(&o.identity.kind)
            })
            .collect();
        // CRDs first: Helm creates them before anything that uses them.
        targets.sort_by_key(|o| (o.identity.kind != "CustomResourceDefinition", o.identity.kind.clone(), o.identity.name.clone()));
        let mut hits = Vec::new();
        for o in targets {
            let id = &o.identity;
            if owned.iter().any(|(k, ns, n)| k == &id.kind && ns == &id.namespace && n == &id.name) {
                continue;
            }
            let Some(live) = input.live(&id.kind, &id.namespace, &id.name) else { continue };
            let label = str_at(live, &["metadata", "labels", "app.kubernetes.io/managed-by"]);
            let rel = str_at(live, &["metadata", "annotations", "meta.helm.sh/release-name"]);
            let rel_ns = str_at(live, &["metadata", "annotations", "meta.helm.sh/release-namespace"]);
            let mut problems = Vec::new();
            if label != "Helm" {
                problems.push(format!("label app.kubernetes.io/managed-by is {:?}, must be \"Helm\"", label));
            }
            if rel != input.release_name {
                problems.push(format!("annotation meta.helm.sh/release-name is {:?}, must be {:?}", rel, input.release_name));
            }
            if rel_ns != input.namespace {
                problems.push(format!("annotation meta.helm.sh/release-namespace is {:?}, must be {:?}", rel_ns, input.namespace));
            }
            if problems.is_empty() {
                continue;
            }
            // A workload whose selector differs cannot be adopted at all: the update is refused.
            let selector = |v: &serde_json::Value| {
                let mut s = v.pointer("/spec/selector").cloned();
                if let Some(s) = s.as_mut() {
                    s.sort_all_objects();
                }
                s
            };
            if id.kind == "Deployment" && selector(&o.body) != selector(live) {
                problems.push("its spec.selector differs from the target's, so it cannot be adopted, only re-created (TA-IMM-001)".into());
            }
            let other = if !rel.is_empty() && (rel != input.release_name || rel_ns != input.namespace) {
                format!(" (it belongs to release {rel_ns}/{rel})")
            } else {
                String::new()
            };
            hits.push(
                Hit {
                    subject: id.to_string(),
                    location: o.source.clone(),
                    message: format!(
                        "{id} exists and is not part of the release{other}: Helm refuses to adopt it (\"invalid ownership metadata\")"
                    ),
                    evidence: problems,
                    ..Hit::default()
                }
                .var("commands", adopt_commands(o, &input.release_name, &input.namespace))
                .var("object", id.to_string()),
            );
        }
        hits
    }
}
