//! Runtime checks: finalizers, runtimes changing hands between the release and a hook, local
//! changes a forced apply will overwrite, and validation-bypass labels on user runtimes.

use serde_json::Value as Json;

use super::Hit;
use crate::audit::input::CheckInput;
use crate::audit::rules::Rule;
use crate::inventory::runtime::{Delivery, RUNTIME_KINDS};
use crate::kube::str_at;

fn name_of(o: &Json) -> String {
    match str_at(o, &["metadata", "namespace"]) {
        "" => format!("{}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "name"])),
        ns => format!("{}/{ns}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "name"])),
    }
}

fn trainjobs_using(input: &CheckInput, kind: &str, name: &str) -> usize {
    input
        .state
        .trainjobs()
        .filter(|t| str_at(t, &["spec", "runtimeRef", "name"]) == name && str_at(t, &["spec", "runtimeRef", "kind"]) == kind)
        .count()
}

pub fn finalizer(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let finalizer = rule.param_str("finalizer").unwrap_or("");
    input
        .state
        .runtimes()
        .filter(|o| o.pointer("/metadata/finalizers").and_then(Json::as_array).is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer))))
        .map(|o| {
            let deleting = o.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null());
            let (kind, name) = (str_at(o, &["kind"]), str_at(o, &["metadata", "name"]));
            let users = trainjobs_using(input, kind, name);
            let message = if deleting {
                format!("{} is being deleted and stuck on {finalizer} ({users} TrainJob(s) use it)", name_of(o))
            } else {
                format!("{} carries {finalizer} ({users} TrainJob(s) use it): deleting it leaves it Terminating until a controller removes the finalizer", name_of(o))
            };
            Hit::new(name_of(o), message)
                .evidence(format!("finalizers: {finalizer}{}", if deleting { ", deletionTimestamp set" } else { "" }))
                .var("kind", kind.to_ascii_lowercase())
                .var("name", name)
                .var("finalizer", finalizer)
        })
        .collect()
}

/// Runtimes that are release objects now and not in the target's release: Helm deletes them
/// during the upgrade (unless the live object has the keep annotation).
pub fn handoff(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let owned: Vec<(String, String, String)> =
        input.release_objects().into_iter().filter(|(k, _, _)| RUNTIME_KINDS.contains(&k.as_str())).collect();
    let target_release: Vec<(&str, &str)> = input
        .target
        .runtimes
        .iter()
        .filter(|r| matches!(r.delivery, Delivery::ReleaseObject { .. }))
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    let mut hits = Vec::new();
    for (kind, ns, name) in owned {
        if target_release.contains(&(kind.as_str(), name.as_str())) {
            continue;
        }
        let live = input.live(&kind, &ns, &name);
        if live.is_some_and(|o| str_at(o, &["metadata", "annotations", "helm.sh/resource-policy"]).contains("keep")) {
            continue;
        }
        let after = input.target.runtimes.iter().find(|r| r.kind == kind && r.name == name).map(|r| r.delivery.describe());
        let users = trainjobs_using(input, &kind, &name);
        let in_use = live.and_then(|o| o.pointer("/metadata/finalizers")).and_then(Json::as_array).is_some_and(|f| !f.is_empty());
        hits.push(
            Hit::new(
                format!("{kind}/{name}"),
                format!(
                    "{kind}/{name} is a release object now; {} no longer renders it as one, so Helm deletes it during the upgrade{}{}",
                    input.to,
                    match &after {
                        Some(d) => format!(" and the target re-creates it via {d}"),
                        None => " and nothing re-creates it".into(),
                    },
                    if in_use {
                        format!(" ({users} TrainJob(s) use it; its finalizer keeps it Terminating until the new controller removes it)")
                    } else {
                        String::new()
                    }
                ),
            )
            .evidence(format!("in the current release manifest; target delivery: {}", after.as_deref().unwrap_or("none")))
            .var("kind", kind.to_ascii_lowercase())
            .var("name", name.clone()),
        );
    }
    hits
}

/// Runtimes the target's hook force-applies that differ live: local changes are overwritten.
pub fn drift(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let mut hits = Vec::new();
    for r in input.target.runtimes.iter().filter(|r| matches!(r.delivery, Delivery::ConfigMap { .. })) {
        let Some(live) = input.live(&r.kind, &r.namespace, &r.name) else { continue };
        let (mut want, mut have) = (r.body.get("spec").cloned().unwrap_or(Json::Null), live.get("spec").cloned().unwrap_or(Json::Null));
        want.sort_all_objects();
        have.sort_all_objects();
        if want != have {
            hits.push(
                Hit::new(
                    format!("{}/{}", r.kind, r.name),
                    format!(
                        "live {}/{} differs from what the installer hook applies with --force-conflicts: the live spec is overwritten",
                        r.kind, r.name
                    ),
                )
                .evidence(format!("delivered by {}", r.delivery.describe()))
                .var("kind", r.kind.to_ascii_lowercase())
                .var("name", r.name.clone()),
            );
        }
    }
    hits
}

/// User runtimes (not rendered by the target) carrying a label that skips webhook validation.
pub fn label_bypass(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let label = rule.param_str("label").unwrap_or("");
    let (key, value) = label.split_once('=').unwrap_or((label, ""));
    input
        .state
        .runtimes()
        .filter(|o| str_at(o, &["metadata", "labels", key]) == value)
        .filter(|o| !input.target.runtimes.iter().any(|r| r.kind == str_at(o, &["kind"]) && r.name == str_at(o, &["metadata", "name"])))
        .map(|o| {
            Hit::new(name_of(o), format!("{} is not a built-in runtime but carries {label}: the validating webhooks skip it", name_of(o)))
                .evidence(format!("label {label}"))
                .var("name", str_at(o, &["metadata", "name"]))
        })
        .collect()
}
