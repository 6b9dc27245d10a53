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
use crate::audit::gitops::Engine;
use crate::audit::input::ChartInput;
use crate::kube::{Object, Origin};

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
