//! `stale-crd`: a CRD the target ships in a `crds/` directory (Helm installs those once and
//! never upgrades them) whose live schema lacks paths the target's copy has. It is an error
//! when something the target brings writes those paths: an object the target renders (directly,
//! or embedded, as a runtime's `spec.template` is a JobSet), or the target's own controller and
//! clients for the CRD groups the rule names; otherwise the rule's severity.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::finding::Severity;
use crate::audit::input::{json_paths, CheckInput};
use crate::inventory::crd::Crd;
use crate::inventory::paths::collapse;
use crate::inventory::schema_compare::compare;
use crate::objects::{Identity, Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// CRD groups whose stale copy is always an error: the target's controller and clients
    /// write the new fields.
    #[serde(default)]
    pub error_groups: Vec<String>,
    /// CRDs whose objects other kinds embed (a runtime's `spec.template` is a JobSet).
    #[serde(default)]
    pub embedded: Vec<Embedded>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embedded {
    /// The embedded CRD (`jobsets.jobset.x-k8s.io`).
    pub crd: String,
    /// Kinds that embed it.
    #[serde(rename = "in")]
    pub kinds: Vec<String>,
    /// Where (`spec.template`): the embedding object's `<at>.spec` is the embedded object's `spec`.
    pub at: String,
}

impl Params {
    /// Paths of `crd`'s schema that objects the target renders use: its own objects, and the
    /// embedded parts of the kinds that embed it.
    fn used_paths(&self, input: &CheckInput, crd: &Crd) -> BTreeSet<String> {
        let mut bodies: Vec<(&str, &Json)> = input.target.objects.iter().map(|o| (o.identity.kind.as_str(), &o.body)).collect();
        bodies.extend(input.target.runtimes.iter().map(|r| (r.kind.as_str(), &r.body)));
        let mut used = BTreeSet::new();
        for (kind, body) in bodies {
            let mut paths = Vec::new();
            if kind == crd.kind {
                json_paths(body, "", &mut paths);
            }
            for e in self.embedded.iter().filter(|e| e.crd == crd.name && e.kinds.iter().any(|k| k == kind)) {
                if let Some(part) = body.pointer(&format!("/{}", e.at.replace('.', "/"))) {
                    json_paths(part, "", &mut paths);
                }
            }
            used.extend(paths.into_iter().map(|(p, _)| p));
        }
        used
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for crd in input.target.crds.iter().filter(|c| c.origin == Origin::CrdsDir) {
            let Some(live) = input.state.crd(&crd.name) else { continue };
            // A permissive live schema (unknown fields preserved at the root) prunes nothing.
            let permissive = live.pointer("/spec/versions").and_then(|v| v.as_array()).is_some_and(|vs| {
                vs.iter().any(|v| {
                    v.pointer("/schema/openAPIV3Schema/x-kubernetes-preserve-unknown-fields").and_then(|b| b.as_bool()) == Some(true)
                })
            });
            if permissive {
                continue;
            }
            let Some(target_schema) = crd.storage_schema() else { continue };
            let live_crd = Object {
                identity: Identity {
                    group: String::new(),
                    kind: "CustomResourceDefinition".into(),
                    namespace: String::new(),
                    name: crd.name.clone(),
                },
                api_version: String::new(),
                source: String::new(),
                origin: Origin::Template,
                json_size: 0,
                body: live.clone(),
            };
            let Some(live_info) = Crd::from_object(&live_crd) else { continue };
            let empty = BTreeMap::new();
            let schemas = compare(live_info.storage_schema().unwrap_or(&empty), target_schema);
            if schemas.added.is_empty() {
                continue;
            }
            let roots = collapse(&schemas.added, &schemas.old_paths());
            let used: Vec<String> = self.used_paths(input, crd).into_iter().filter(|p| schemas.added.contains(p)).collect();
            let mut evidence: Vec<String> = roots.iter().take(6).map(|r| format!("missing {r}")).collect();
            let (severity, effect) = if !used.is_empty() {
                evidence.insert(
                    0,
                    format!("used by objects the target renders: {}", used.iter().take(3).cloned().collect::<Vec<_>>().join(", ")),
                );
                (Some(Severity::Error), "the target's own objects use them, so the upgrade fails (strict decoding or server-side apply rejects the unknown fields)")
            } else if self.error_groups.contains(&crd.group) {
                (Some(Severity::Error), "the target's controller and clients write them: writes that set them are rejected (strict decoding, server-side apply) or have them silently pruned")
            } else {
                (None, "objects that set them are rejected or have them pruned")
            };
            hits.push(
                Hit {
                    subject: format!("CustomResourceDefinition/{}", crd.name),
                    location: crd.source.clone(),
                    message: format!(
                        "the live {} CRD lacks {} schema path{} of the target chart's copy and Helm never upgrades CRDs from crds/; {effect}",
                        crd.name,
                        schemas.added.len(),
                        if schemas.added.len() == 1 { "" } else { "s" }
                    ),
                    evidence,
                    severity,
                    ..Hit::default()
                }
                .var("crd", crd.name.clone())
                .var("source", crd.source.clone()),
            );
        }
        hits
    }
}
