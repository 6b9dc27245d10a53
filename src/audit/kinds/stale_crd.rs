//! `stale-crd`: a CRD the target ships in a `crds/` directory (Helm installs those once and
//! never upgrades them) whose live schema lacks paths the target's copy has.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::inventory::crd::Crd;
use crate::inventory::paths::collapse;
use crate::inventory::schema_compare::compare;
use crate::kube::{Identity, Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

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
            hits.push(
                Hit {
                    subject: format!("CustomResourceDefinition/{}", crd.name),
                    location: crd.source.clone(),
                    message: format!("the live {} CRD lacks {} schema paths of the target chart's copy; Helm never upgrades CRDs from crds/, so objects using them are pruned or rejected", crd.name, schemas.added.len()),
                    evidence: roots.iter().take(6).map(|r| format!("missing {r}")).collect(),
                    ..Hit::default()
                }
                .var("crd", crd.name.clone())
                .var("source", crd.source.clone()),
            );
        }
        hits
    }
}
