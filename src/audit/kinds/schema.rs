//! CRD-schema checks: fields live objects use that the target drops or retypes (derived from
//! the two charts' schemas), stale CRDs from `crds/`, and the keep policy.

use std::collections::BTreeMap;

use super::Hit;
use crate::audit::input::{json_paths, CheckInput};
use crate::audit::rules::Rule;
use crate::inventory::crd::Crd;
use crate::kube::{str_at, Origin};

fn crd_by_kind<'a>(crds: &'a [Crd], kind: &str) -> Option<&'a Crd> {
    crds.iter().find(|c| c.kind == kind)
}

pub fn field_removed(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let Some(installed) = input.installed else { return Vec::new() };
    let mut kinds = rule.param_strings("kinds");
    if kinds.is_empty() {
        kinds = vec!["TrainJob".into(), "ClusterTrainingRuntime".into(), "TrainingRuntime".into()];
    }
    let mut hits = Vec::new();
    for kind in &kinds {
        let (Some(old), Some(new)) = (crd_by_kind(&installed.crds, kind), crd_by_kind(&input.target.crds, kind)) else { continue };
        let (Some(old_schema), Some(new_schema)) = (old.storage_schema(), new.storage_schema()) else { continue };
        // path → (objects using it, example names), for removed paths and for retyped ones.
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
            let mut seen_removed = std::collections::BTreeSet::new();
            for (path, json_type) in &paths {
                if old_schema.contains_key(path) && !new_schema.contains_key(path) {
                    // Report the outermost removed path only.
                    let root = outermost_removed(path, old_schema, new_schema);
                    if seen_removed.insert(root.clone()) {
                        removed.entry(root).or_default().push(name.clone());
                    }
                } else if let (Some(a), Some(b)) = (old_schema.get(path), new_schema.get(path)) {
                    if a.kind != b.kind && !accepts(&b.kind, json_type) {
                        let e = retyped.entry(path.clone()).or_insert_with(|| (a.kind.clone(), b.kind.clone(), Vec::new()));
                        e.2.push(name.clone());
                    }
                }
            }
        }
        for (path, users) in removed {
            hits.push(
                Hit::new(format!("{kind} {path}"), format!("{} {kind}(s) set {path}, which the {} CRD no longer declares: the field is pruned when the objects are read or rewritten", users.len(), input.to))
                    .evidence(format!("used by {}", examples(&users)))
                    .evidence(format!("declared by the {} CRD, absent from {}", input.from, input.to))
                    .var("path", path.clone())
                    .var("kind", kind.clone()),
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
                .var("kind", kind.clone()),
            );
        }
    }
    hits
}

fn outermost_removed(
    path: &str,
    old: &BTreeMap<String, crate::inventory::crd::SchemaField>,
    new: &BTreeMap<String, crate::inventory::crd::SchemaField>,
) -> String {
    let mut current = path.to_string();
    while let Some(parent) = crate::inventory::paths::parent(&current) {
        if old.contains_key(parent) && !new.contains_key(parent) {
            current = parent.to_string();
        } else {
            break;
        }
    }
    current
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

fn examples(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    if names.len() > shown.len() {
        format!("{} and {} more", shown.join(", "), names.len() - shown.len())
    } else {
        shown.join(", ")
    }
}

/// CRDs the target ships in a `crds/` directory (Helm never upgrades those) whose live schema
/// lacks paths the target's has.
pub fn stale_crd(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let mut hits = Vec::new();
    for crd in input.target.crds.iter().filter(|c| c.origin == Origin::CrdsDir) {
        let Some(live) = input.state.crd(&crd.name) else { continue };
        // A permissive live schema (unknown fields preserved at the root) prunes nothing.
        let permissive = live.pointer("/spec/versions").and_then(|v| v.as_array()).is_some_and(|vs| {
            vs.iter()
                .any(|v| v.pointer("/schema/openAPIV3Schema/x-kubernetes-preserve-unknown-fields").and_then(|b| b.as_bool()) == Some(true))
        });
        if permissive {
            continue;
        }
        let Some(target_schema) = crd.storage_schema() else { continue };
        let live_crd = crate::kube::Object {
            identity: crate::kube::Identity {
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
        let live_schema = live_info.storage_schema().unwrap_or(&empty);
        let missing: Vec<&String> = target_schema.keys().filter(|p| !live_schema.contains_key(*p)).collect();
        if missing.is_empty() {
            continue;
        }
        let roots =
            crate::inventory::paths::collapse(&missing.iter().map(|s| s.to_string()).collect(), &live_schema.keys().cloned().collect());
        hits.push(
            Hit {
                subject: format!("CustomResourceDefinition/{}", crd.name),
                location: crd.source.clone(),
                message: format!("the live {} CRD lacks {} schema paths of the target chart's copy; Helm never upgrades CRDs from crds/, so objects using them are pruned or rejected", crd.name, missing.len()),
                evidence: roots.iter().take(6).map(|r| format!("missing {r}")).collect(),
                ..Hit::default()
            }
            .var("crd", crd.name.clone())
            .var("source", crd.source.clone()),
        );
    }
    hits
}

pub fn crd_keep(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    input
        .target
        .crds
        .iter()
        .filter(|c| c.origin == Origin::Template && !c.keeps_on_delete())
        .filter(|c| input.state.crd(&c.name).is_none_or(|live| !str_at(live, &["metadata", "annotations", "helm.sh/resource-policy"]).contains("keep")))
        .map(|c| {
            Hit {
                subject: format!("CustomResourceDefinition/{}", c.name),
                location: c.source.clone(),
                message: format!("{} becomes a release object without helm.sh/resource-policy: keep: uninstall, a rollback past {} (also --atomic/--rollback-on-failure) or crds.enabled=false deletes it and every {}", c.name, input.to, c.kind),
                evidence: vec!["resource-policy: <none> in the chart and on the live CRD".into()],
                ..Hit::default()
            }
            .var("crd", c.name.clone())
        })
        .collect()
}
