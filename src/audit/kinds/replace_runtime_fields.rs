//! `replace-runtime-fields`: under Argo CD with `Replace=true` (on the Application, or on the
//! object through `argocd.argoproj.io/sync-options`), Argo CD syncs with `kubectl replace`, which
//! writes the object exactly as rendered (argo-cd v3.3.0 docs/user-guide/sync-options.md,
//! "Replace Resource Instead Of Applying Changes"). Objects the chart renders empty for a
//! controller to fill at run time lose what the controller wrote on every sync: a Secret with no
//! data (the Trainer controller's cert-controller rotator writes the webhook certificate there)
//! and webhook configurations without a `caBundle` (the rotator injects it; kubeflow/trainer
//! v2.3.0 pkg/util/cert/cert.go). Until the controller writes them again, calls to the webhooks
//! fail TLS verification.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;
use crate::engine::Engine;
use crate::objects::{Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

const SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";

/// Whether the object is synced with replace: the Application's option, or its own annotation.
fn replaced(object: &Object, application_replaces: bool) -> bool {
    let own = object.annotation(SYNC_OPTIONS).map(|o| o.split(',').map(str::trim).find_map(|kv| kv.strip_prefix("Replace=")));
    match own.flatten() {
        Some(v) => v.eq_ignore_ascii_case("true"),
        None => application_replaces,
    }
}

/// What the chart leaves for a controller to fill, if anything.
fn filled_at_run_time(object: &Object) -> Option<String> {
    let body = &object.body;
    match object.identity.kind.as_str() {
        "Secret" => {
            let empty = |key: &str| body.get(key).is_none_or(|d| d.as_object().is_none_or(|m| m.is_empty()));
            (empty("data") && empty("stringData")).then(|| "data (rendered empty)".to_string())
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            let webhooks = body.get("webhooks").and_then(Json::as_array)?;
            let missing: Vec<&str> = webhooks
                .iter()
                .filter(|w| w.pointer("/clientConfig/service").is_some() && w.pointer("/clientConfig/caBundle").is_none())
                .map(|w| w.get("name").and_then(Json::as_str).unwrap_or("?"))
                .collect();
            (!missing.is_empty()).then(|| format!("webhooks[].clientConfig.caBundle of {}", missing.join(", ")))
        }
        _ => None,
    }
}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        if chart.engine != Engine::Argocd {
            return Vec::new();
        }
        let application_replaces = chart.gitops.is_some_and(|g| g.is_on("syncOptions.Replace"));
        let objects = chart.chart.objects.iter().filter(|o| o.origin == Origin::Template && replaced(o, application_replaces));
        objects
            .filter_map(|o| {
                let what = filled_at_run_time(o)?;
                let subject = o.identity.to_string();
                Some(
                    Hit::new(
                        subject.clone(),
                        format!(
                            "Argo CD syncs {subject} with kubectl replace (Replace=true), writing it as the chart renders it: the chart leaves {what} for the controller to fill at run time, so every sync removes it until the controller writes it again"
                        ),
                    )
                    .evidence(format!("rendered without {what}"))
                    .evidence(if application_replaces { "syncOptions: Replace=true" } else { "annotation argocd.argoproj.io/sync-options: Replace=true" })
                    .located(o.source.clone())
                    .var("object", subject),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Identity;

    fn object(kind: &str, body: Json) -> Object {
        Object {
            identity: Identity { group: String::new(), kind: kind.into(), namespace: String::new(), name: "x".into() },
            api_version: "v1".into(),
            source: "t.yaml".into(),
            origin: Origin::Template,
            json_size: 0,
            body,
        }
    }

    #[test]
    fn run_time_fields_and_the_objects_own_option() {
        let empty = object("Secret", serde_json::json!({"metadata": {}}));
        assert!(filled_at_run_time(&empty).is_some());
        assert!(filled_at_run_time(&object("Secret", serde_json::json!({"data": {"k": "dg=="}}))).is_none());
        let hook = |ca: Option<&str>| {
            let mut cc = serde_json::json!({"service": {"name": "s"}});
            if let Some(ca) = ca {
                cc["caBundle"] = ca.into();
            }
            object("ValidatingWebhookConfiguration", serde_json::json!({"webhooks": [{"name": "w", "clientConfig": cc}]}))
        };
        assert_eq!(filled_at_run_time(&hook(None)).as_deref(), Some("webhooks[].clientConfig.caBundle of w"));
        assert!(filled_at_run_time(&hook(Some("Q0E="))).is_none());
        let annotated = |v: &str| object("Secret", serde_json::json!({"metadata": {"annotations": {SYNC_OPTIONS: v}}}));
        assert!(!replaced(&annotated("Prune=false,Replace=false"), true), "the object's own option wins");
        assert!(replaced(&annotated("Replace=true"), false));
        assert!(replaced(&empty, true) && !replaced(&empty, false));
    }
}
