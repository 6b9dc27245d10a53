//! `field-removed`: live objects use fields the target's CRD schema no longer declares (pruned
//! when the objects are next read or written) or hold values its new type rejects, derived from
//! the installed and target charts' CRD schemas.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::support::examples;
use super::{Check, Hit};
use crate::audit::input::{json_paths, CheckInput};
use crate::inventory::crd::Crd;
use crate::inventory::schema_compare::compare;
use crate::kube::str_at;

const DEFAULT_KINDS: &[&str] = &["TrainJob", "ClusterTrainingRuntime", "TrainingRuntime"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Kinds whose objects are read (default: TrainJob and the two runtime kinds).
    #[serde(default)]
    pub kinds: Vec<String>,
}

fn crd_by_kind<'a>(crds: &'a [Crd], kind: &str) -> Option<&'a Crd> {
    crds.iter().find(|c| c.kind == kind)
}

/// Whether a schema type accepts a JSON value of this type.
fn accepts(schema_type: &str, json_type: &str) -> bool {
    match schema_type {
        "int-or-string" => matches!(json_type, "integer" | "string"),
        "number" => matches!(json_type, "integer" | "number"),
        "" => true,
        t => t == json_type,
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(installed) = input.installed else { return Vec::new() };
        let kinds: Vec<&str> = if self.kinds.is_empty() { DEFAULT_KINDS.to_vec() } else { self.kinds.iter().map(String::as_str).collect() };
        let mut hits = Vec::new();
        for kind in kinds {
            let (Some(old), Some(new)) = (crd_by_kind(&installed.crds, kind), crd_by_kind(&input.target.crds, kind)) else { continue };
            let (Some(old_schema), Some(new_schema)) = (old.storage_schema(), new.storage_schema()) else { continue };
            let schemas = compare(old_schema, new_schema);
            // path → objects using it, for removed paths and for retyped ones.
            let mut removed: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut retyped: BTreeMap<String, (String, String, Vec<String>)> = BTreeMap::new();
            for o in input.state.of_kind(kind) {
                let name = match str_at(o, &["metadata", "namespace"]) {
                    "" => str_at(o, &["metadata", "name"]).to_string(),
                    ns => format!("{ns}/{}", str_at(o, &["metadata", "name"])),
                };
                let mut paths = Vec::new();
                if let Some(spec) = o.get("spec") {
                    json_paths(spec, "spec", &mut paths);
                }
                let mut seen_removed = BTreeSet::new();
                for (path, json_type) in &paths {
                    if schemas.removed.contains(path) {
                        // Report the outermost removed path only.
                        let root = schemas.removed_root(path);
                        if seen_removed.insert(root.clone()) {
                            removed.entry(root).or_default().push(name.clone());
                        }
                    } else if let Some(change) = schemas.change_at(path).filter(|c| c.retyped() && !accepts(&c.new.kind, json_type)) {
                        let e =
                            retyped.entry(path.clone()).or_insert_with(|| (change.old.kind.clone(), change.new.kind.clone(), Vec::new()));
                        e.2.push(name.clone());
                    }
                }
            }
            for (path, users) in removed {
                hits.push(
                    Hit::new(format!("{kind} {path}"), format!("{} {kind}(s) set {path}, which the {} CRD no longer declares: the field is pruned when the objects are read or rewritten", users.len(), input.to))
                        .evidence(format!("used by {}", examples(&users)))
                        .evidence(format!("declared by the {} CRD, absent from {}", input.from, input.to))
                        .var("path", path.clone())
                        .var("kind", kind),
                );
            }
            for (path, (from_type, to_type, users)) in retyped {
                hits.push(
                    Hit::new(
                        format!("{kind} {path}"),
                        format!(
                            "{} {kind}(s) hold a value at {path} that {}'s type ({to_type}, was {from_type}) rejects",
                            users.len(),
                            input.to
                        ),
                    )
                    .evidence(format!("used by {}", examples(&users)))
                    .var("path", path.clone())
                    .var("kind", kind),
                );
            }
        }
        hits
    }
}
