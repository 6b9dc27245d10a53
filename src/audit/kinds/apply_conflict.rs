//! `apply-conflict`: objects Helm 4 will apply server-side (field manager `helm`) whose live
//! copy another field manager applied server-side with other values. The API server refuses
//! such an apply (`Apply failed with N conflicts: conflicts with "kubectl"`) unless Helm is
//! given `--force-conflicts` (Helm ≥ 4.0.0); `--take-ownership` does not help.
//!
//! When Helm applies server-side: on install, including `helm upgrade --install` of a missing
//! release (its `--server-side` defaults to true), where the chart's `crds/` are applied too;
//! on upgrade only when the release was stored with the `ssa` apply method (helm/helm v4.2.3
//! pkg/action/install.go#L185-L220 and pkg/kube/client.go#L343-L368: CRDs from crds/ go through
//! the same apply; pkg/action/upgrade.go keeps the stored method under `--server-side=auto`).
//! The rehearsal of a kustomize 2.2.0 install moved to Helm 2.3.0 met exactly this on the
//! JobSet CRD: "failed to install CRD crds/jobset.x-k8s.io_jobsets.yaml: conflict occurred
//! while applying object … conflict with \"kubectl\": .spec.versions".
//!
//! The snapshot keeps managers and operations but not their field sets, so the prediction is
//! per object: a non-Helm `Apply` manager exists and the rendered object is not contained in the
//! live one (a value it sets differs or is missing live). Such a manager applied the object
//! whole, so it owns the differing fields in practice.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::{str_at, Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Helm's own field manager (its applies never conflict with themselves).
    #[serde(default = "helm")]
    pub manager: String,
}

fn helm() -> String {
    "helm".into()
}

/// Whether every value `want` sets is present and equal in `have` (maps by key, lists by
/// position and length): what the live object must hold for an apply of `want` to change
/// nothing another manager owns. Extra live keys (defaults, status) do not count.
pub fn contained(want: &Json, have: &Json) -> bool {
    match (want, have) {
        (Json::Object(w), Json::Object(h)) => w.iter().all(|(k, v)| v.is_null() || h.get(k).is_some_and(|hv| contained(v, hv))),
        (Json::Array(w), Json::Array(h)) => w.len() == h.len() && w.iter().zip(h).all(|(a, b)| contained(a, b)),
        (Json::Number(a), Json::Number(b)) => a.as_f64() == b.as_f64(),
        _ => want == have,
    }
}

/// What an apply compares: the body without `status` and without what the API server owns.
fn applied_part(o: &Json) -> Json {
    let mut o = o.clone();
    if let Some(map) = o.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Json::as_object_mut) {
            meta.retain(|k, _| matches!(k.as_str(), "name" | "namespace" | "labels" | "annotations"));
        }
    }
    o
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        if input.engine() != crate::engine::Engine::Helm {
            return Vec::new();
        }
        // A missing release, or a fresh install over an uninstalled one (`--install`): Helm's
        // install applies the chart's crds/ too.
        let install = input.release.is_none_or(|r| r.route().installs_afresh());
        if !install && input.release.is_some_and(|r| !r.upgrade_server_side()) {
            return Vec::new();
        }
        let mut targets: Vec<&Object> =
            input.target.objects.iter().filter(|o| o.origin == Origin::Template || (install && o.origin == Origin::CrdsDir)).collect();
        targets.sort_by_key(|o| (o.origin != Origin::CrdsDir, o.identity.kind != "CustomResourceDefinition", o.identity.to_string()));
        let mut hits = Vec::new();
        for o in targets {
            let id = &o.identity;
            let Some(live) = input.live(&id.kind, &id.namespace, &id.name) else { continue };
            let mut others: Vec<&str> = live
                .pointer("/metadata/managedFields")
                .and_then(Json::as_array)
                .map(|m| {
                    m.iter()
                        .filter(|e| str_at(e, &["operation"]) == "Apply" && str_at(e, &["manager"]) != self.manager)
                        .map(|e| str_at(e, &["manager"]))
                        .collect()
                })
                .unwrap_or_default();
            others.sort_unstable();
            others.dedup();
            if others.is_empty() || contained(&applied_part(&o.body), &applied_part(live)) {
                continue;
            }
            let managers = others.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", ");
            let when = if o.origin == Origin::CrdsDir { "installs it from crds/" } else { "applies it" };
            hits.push(
                Hit::new(
                    id.to_string(),
                    format!(
                        "{id} was applied server-side by {managers} with other values than the target renders: Helm 4 {when} server-side as {:?} and the API server refuses the conflicting fields unless it forces them",
                        self.manager
                    ),
                )
                .located(o.source.clone())
                .evidence(format!("managedFields: Apply by {managers}"))
                .evidence(if install {
                    "no release yet: helm upgrade --install installs with server-side apply (Helm 4's default)".to_string()
                } else {
                    "the release was stored with apply method ssa".to_string()
                })
                .var("managers", managers),
            );
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::contained;
    use serde_json::json;

    #[test]
    fn contained_ignores_extra_live_values_but_not_changed_ones() {
        let live = json!({"spec": {"a": 1, "b": [1, 2], "defaulted": true}, "status": {}});
        assert!(contained(&json!({"spec": {"a": 1.0, "b": [1, 2]}}), &live));
        assert!(!contained(&json!({"spec": {"a": 2}}), &live));
        assert!(!contained(&json!({"spec": {"b": [1]}}), &live));
        assert!(!contained(&json!({"spec": {"c": "x"}}), &live));
        assert!(contained(&json!({"spec": {"c": null}}), &live));
    }
}
