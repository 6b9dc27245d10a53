//! `runtime-drift`: local edits to built-in runtimes that the upgrade undoes. A local edit is a
//! field where the live runtime differs from what the installed release rendered for it (both
//! read through the live CRD's defaulting and pruning, as the API server stores them), so an
//! untouched install reports nothing however much upstream changed the runtime. An edit is
//! undone when the target's installer hook (`kubectl apply --server-side --force-conflicts`)
//! sets that field to another value, or, when the runtime is a release object now and the
//! target hands it to the installer, whenever the target's copy differs there: Helm deletes the
//! object and the installer creates it afresh (unless the live object has the keep policy).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::inventory::runtime::{Delivery, Runtime};
use crate::objects::str_at;
use kube_validate::stored::ASSUMED_KUBE;
use kube_validate::{prune, Validator};
use kube_version::KubeVersion;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// At most this many fields are named per runtime.
const SHOWN: usize = 8;

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(installed) = input.installed else { return Vec::new() };
        let mut hits = Vec::new();
        for target in input.target.runtimes.iter().filter(|r| matches!(r.delivery, Delivery::ConfigMap { .. })) {
            let Some(live) = input.live(&target.kind, &target.namespace, &target.name) else { continue };
            // Without the installed render there is nothing to call a local edit.
            let Some(before) = installed.runtimes.iter().find(|r| r.kind == target.kind && r.name == target.name) else { continue };
            let stored = |body: &Json| stored_spec(input, &target.kind, body);
            let (before_spec, live_spec, target_spec) = (stored(&before.body), stored(live), stored(&target.body));
            let (before_leaves, live_leaves, target_leaves) = (leaves(&before_spec), leaves(&live_spec), leaves(&target_spec));
            let recreated = matches!(before.delivery, Delivery::ReleaseObject { .. })
                && !str_at(live, &["metadata", "annotations", "helm.sh/resource-policy"]).contains("keep");
            let mut undone = Vec::new();
            for path in before_leaves.keys().chain(live_leaves.keys()).collect::<std::collections::BTreeSet<_>>() {
                let (was, is, will) = (before_leaves.get(path), live_leaves.get(path), target_leaves.get(path));
                if was == is {
                    continue;
                }
                // The installer's apply only takes the fields its manifest sets; a re-created
                // object has only those.
                let lost = match will {
                    Some(w) => Some(w) != is,
                    None => recreated && is.is_some(),
                };
                if lost {
                    undone.push(format!("{path}: live {}, installed {}, target {}", show(is), show(was), show(will)));
                }
            }
            if undone.is_empty() {
                continue;
            }
            hits.push(hit(target, before, recreated, undone));
        }
        hits
    }
}

fn hit(target: &Runtime, before: &Runtime, recreated: bool, undone: Vec<String>) -> Hit {
    let fields: Vec<&str> = undone.iter().filter_map(|l| l.split(": ").next()).collect();
    let how = if recreated {
        "Helm deletes the release object and the installer hook creates it afresh from the target's copy"
    } else {
        "the installer hook force-applies the target's copy over them"
    };
    let mut h = Hit::new(
        format!("{}/{}", target.kind, target.name),
        format!(
            "{} local edit{} to {}/{} the upgrade undoes: {}; {how}",
            undone.len(),
            if undone.len() == 1 { "" } else { "s" },
            target.kind,
            target.name,
            super::support::listed(&fields, SHOWN, ", ")
        ),
    )
    .var("kind", target.kind.to_ascii_lowercase())
    .var("name", target.name.clone());
    h.evidence = undone;
    h.evidence.push(format!("installed as {}; the target delivers it by {}", before.delivery.describe(), target.delivery.describe()));
    h
}

/// The spec as the API server would store `body`: pruned and defaulted by the live CRD of
/// `kind` (as written when the cluster has no such CRD).
fn stored_spec(input: &CheckInput, kind: &str, body: &Json) -> Json {
    let mut body = body.clone();
    let crd = input.state.crds().find(|c| str_at(c, &["spec", "names", "kind"]) == kind);
    let version = str_at(&body, &["apiVersion"]).rsplit('/').next().unwrap_or("").to_string();
    let kube = input.state.kube_version().map(KubeVersion::minor_version).unwrap_or(ASSUMED_KUBE);
    if let Some(validator) = crd.and_then(|c| Validator::from_crd(c, Some(&version), kube).ok()) {
        prune::prune_resource(&mut body, validator.schema());
        prune::apply_defaults(&mut body, validator.schema());
    }
    body.get("spec").cloned().unwrap_or(Json::Null)
}

/// Leaf paths of a JSON value: scalars, lists of scalars (atomic lists) and empty containers.
/// List items that are objects are keyed by their `name` when every item has a distinct one
/// (`replicatedJobs[node]`), else by index.
fn leaves(v: &Json) -> BTreeMap<String, Json> {
    fn walk(v: &Json, path: String, out: &mut BTreeMap<String, Json>) {
        match v {
            Json::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    walk(child, if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out);
                }
            }
            Json::Array(items) if !items.is_empty() && items.iter().all(Json::is_object) => {
                let names: Vec<&str> = items.iter().map(|i| i.get("name").and_then(Json::as_str).unwrap_or("")).collect();
                let mut distinct = names.clone();
                distinct.sort_unstable();
                distinct.dedup();
                let by_name = !names.contains(&"") && distinct.len() == names.len();
                for (i, item) in items.iter().enumerate() {
                    let key = if by_name { names[i].to_string() } else { i.to_string() };
                    walk(item, format!("{path}[{key}]"), out);
                }
            }
            _ => {
                out.insert(if path.is_empty() { "spec".into() } else { path }, v.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out.into_iter().map(|(k, v)| (if k == "spec" { k } else { format!("spec.{k}") }, v)).collect()
}

/// A value as evidence prints it: compact JSON, cut at 60 characters; `<unset>` when absent.
fn show(v: Option<&Json>) -> String {
    match v {
        None => "<unset>".into(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 60 {
                format!("{}…", text.chars().take(60).collect::<String>())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_key_named_items_by_name_and_keep_scalar_lists_whole() {
        let spec = json!({"a": {"b": 1}, "jobs": [{"name": "node", "x": [1, 2]}, {"name": "init", "x": []}], "plain": [{"y": 1}]});
        let l = leaves(&spec);
        assert_eq!(l.get("spec.a.b"), Some(&json!(1)));
        assert_eq!(l.get("spec.jobs[node].x"), Some(&json!([1, 2])));
        assert_eq!(l.get("spec.jobs[init].x"), Some(&json!([])));
        assert_eq!(l.get("spec.plain[0].y"), Some(&json!(1)));
        assert_eq!(l.get("spec.jobs[node].name"), Some(&json!("node")));
        assert_eq!(l.len(), 6);
        assert_eq!(leaves(&json!(null)).get("spec"), Some(&Json::Null));
    }

    #[test]
    fn long_values_are_cut() {
        assert_eq!(show(None), "<unset>");
        assert!(show(Some(&json!("x".repeat(100)))).ends_with('…'));
    }
}

#[cfg(test)]
mod every_edit {
    use super::*;

    #[test]
    fn the_message_says_how_many_it_leaves_out_and_the_evidence_lists_every_edit() {
        let runtime = |delivery| Runtime {
            kind: "ClusterTrainingRuntime".into(),
            namespace: String::new(),
            name: "deepspeed-distributed".into(),
            delivery,
            images: vec![],
            body: Json::Null,
        };
        let before = runtime(Delivery::ReleaseObject { source: "templates/x.yaml".into() });
        let target = runtime(Delivery::ConfigMap { config_map: "c".into(), key: "k".into(), source: "s".into(), applied_by: vec![] });
        let undone: Vec<String> = (0..18).map(|i| format!("spec.f{i}: live 1, installed 2, target 3")).collect();
        let h = hit(&target, &before, true, undone);
        assert!(
            h.message.starts_with("18 local edits to ClusterTrainingRuntime/deepspeed-distributed the upgrade undoes: spec.f0,"),
            "{}",
            h.message
        );
        assert!(h.message.contains("spec.f7 and 10 more (the evidence lists every one);"), "{}", h.message);
        assert_eq!(h.evidence.iter().filter(|e| e.starts_with("spec.f")).count(), 18, "{:?}", h.evidence);
        assert!(!h.evidence.iter().any(|e| e.contains(" more")), "{:?}", h.evidence);
    }
}
