//! Helm ownership of what the target will own, and fields the API server will not change.

use serde_json::Value as Json;

use super::Hit;
use crate::audit::input::CheckInput;
use crate::audit::rules::Rule;
use crate::cluster::install::Method;
use crate::kube::{str_at, Object, Origin};

/// `kubectl` commands that give an object this release's ownership metadata.
fn adopt_commands(o: &Object, release: &str, namespace: &str) -> String {
    let resource = if o.identity.group.is_empty() {
        o.identity.kind.to_ascii_lowercase()
    } else {
        format!("{}.{}", o.identity.kind.to_ascii_lowercase(), o.identity.group)
    };
    let ns = if o.identity.namespace.is_empty() { String::new() } else { format!(" -n {}", o.identity.namespace) };
    format!(
        "kubectl label {resource} {name}{ns} app.kubernetes.io/managed-by=Helm --overwrite\nkubectl annotate {resource} {name}{ns} meta.helm.sh/release-name={release} meta.helm.sh/release-namespace={namespace} --overwrite",
        name = o.identity.name
    )
}

pub fn ownership(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    // Argo CD applies the rendered objects itself and Flux helm-controller (≥ 1.2) takes
    // ownership by default: Helm's adoption check only stops plain Helm.
    if matches!(input.install.method, Method::ArgoCd | Method::FluxHelm | Method::FluxKustomize) {
        return Vec::new();
    }
    let kinds = rule.param_strings("kinds");
    let except = rule.param_strings("except");
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

/// Deployment selectors are immutable: a target selector that differs from the live one fails
/// the upgrade.
pub fn immutable_field(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let mut hits = Vec::new();
    for o in input.target.objects.iter().filter(|o| matches!(o.identity.kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet")) {
        let Some(live) = input.live(&o.identity.kind, &o.identity.namespace, &o.identity.name) else { continue };
        let (want, have) = (o.body.pointer("/spec/selector"), live.pointer("/spec/selector"));
        let norm = |v: Option<&Json>| {
            v.cloned().map(|mut v| {
                v.sort_all_objects();
                v
            })
        };
        if norm(want) != norm(have) {
            hits.push(
                Hit {
                    subject: o.identity.to_string(),
                    location: o.source.clone(),
                    message: format!(
                        "{} has selector {} live; the target renders {}: spec.selector is immutable, so the upgrade fails",
                        o.identity,
                        compact(have),
                        compact(want)
                    ),
                    evidence: vec![format!("live: {}", compact(have)), format!("target: {}", compact(want))],
                    ..Hit::default()
                }
                .var("object", o.identity.to_string())
                .var("kind", o.identity.kind.to_ascii_lowercase())
                .var("name", o.identity.name.clone())
                .var("object_namespace", o.identity.namespace.clone()),
            );
        }
    }
    hits
}

fn compact(v: Option<&Json>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "<none>".into())
}
