//! `webhook-ca-bundle`: under Argo CD, webhook configurations the target renders without
//! `webhooks[].clientConfig.caBundle` (Trainer's controller injects it at run time through the
//! cert-controller rotator; kubeflow/trainer v2.3.0 templates/webhook/) and that the Application's
//! `spec.ignoreDifferences` does not cover. Whether Argo CD then reports the application
//! OutOfSync is not settled (its diff leaves out fields another manager set that the desired
//! state lacks; public reports disagree), so the rule is advice: the documented recipe ignores
//! `.webhooks[]?.clientConfig.caBundle` (argo-cd v3.5.1 docs/user-guide/diffing.md). Outside a
//! GitOps review the Application is not read, so its `ignoreDifferences` is unknown and said so.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;
use crate::engine::Engine;
use crate::objects::{Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

const GROUP: &str = "admissionregistration.k8s.io";
const KINDS: [&str; 2] = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"];

/// Indices and names of the webhooks that call a Service without a caBundle (absent or empty):
/// those the rotator fills. A webhook with a `url` keeps whatever trust the chart gives it.
fn without_ca_bundle(object: &Object) -> Vec<(usize, String)> {
    let webhooks = object.body.get("webhooks").and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[]);
    webhooks
        .iter()
        .enumerate()
        .filter(|(_, w)| w.pointer("/clientConfig/service").is_some())
        .filter(|(_, w)| w.pointer("/clientConfig/caBundle").and_then(Json::as_str).is_none_or(str::is_empty))
        .map(|(i, w)| (i, w.get("name").and_then(Json::as_str).unwrap_or("?").to_string()))
        .collect()
}

/// Whether one ignoreDifferences path (a jq path expression or a JSON pointer) leaves out the
/// caBundle of webhook `index`: its segments are a prefix of `webhooks.<index>.clientConfig.caBundle`,
/// `[]` (jq's iterator, `?` or not) matching every index. Filters (`select(…)`, pipes) are not
/// evaluated: such a path counts as not covering.
fn covers(path: &str, index: usize) -> bool {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    let segments: Vec<String> = if let Some(pointer) = path.strip_prefix('/') {
        pointer.split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect()
    } else if let Some(jq) = path.strip_prefix('.') {
        if jq.contains(['|', '(', ',']) {
            return false;
        }
        jq.replace("[]?", "[]").replace('[', ".[").split('.').filter(|s| !s.is_empty()).map(str::to_string).collect()
    } else {
        return false;
    };
    let index_text = index.to_string();
    let wanted = ["webhooks", index_text.as_str(), "clientConfig", "caBundle"];
    !segments.is_empty()
        && segments.len() <= wanted.len()
        && segments.iter().zip(wanted).enumerate().all(|(n, (got, want))| match n {
            1 => got == "[]" || *got == format!("[{want}]") || got == want,
            _ => got == want,
        })
}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        if chart.engine != Engine::Argocd {
            return Vec::new();
        }
        let objects = chart.chart.objects.iter().filter(|o| o.origin == Origin::Template && KINDS.contains(&o.identity.kind.as_str()));
        objects
            .filter_map(|o| {
                let missing = without_ca_bundle(o);
                let paths = chart.gitops.map(|g| g.ignored_paths(GROUP, &o.identity.kind, &o.identity.name));
                let uncovered: Vec<&str> = missing
                    .iter()
                    .filter(|(i, _)| !paths.as_ref().is_some_and(|p| p.iter().any(|path| covers(path, *i))))
                    .map(|(_, name)| name.as_str())
                    .collect();
                if uncovered.is_empty() {
                    return None;
                }
                let subject = o.identity.to_string();
                let known = match &paths {
                    None => "the Application's ignoreDifferences is not read outside a GitOps review (`trainer-audit gitops`)".to_string(),
                    Some(p) if p.is_empty() => format!("the Application's ignoreDifferences has no entry for {GROUP}/{}", o.identity.kind),
                    Some(p) => format!("the Application ignores only {} for {GROUP}/{}", p.join(", "), o.identity.kind),
                };
                Some(
                    Hit::new(
                        subject.clone(),
                        format!(
                            "{subject} is rendered without clientConfig.caBundle in {}, which is filled in at run time (Trainer's controller injects its own with the cert-controller rotator), and {known}",
                            uncovered.join(", ")
                        ),
                    )
                    .evidence(format!("webhooks without caBundle: {}", uncovered.join(", ")))
                    .evidence(known)
                    .located(o.source.clone())
                    .var("object", subject)
                    .var("kind", o.identity.kind.clone()),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Identity;

    fn webhook(kind: &str, hooks: Json) -> Object {
        Object {
            identity: Identity { group: GROUP.into(), kind: kind.into(), namespace: String::new(), name: "w".into() },
            api_version: "admissionregistration.k8s.io/v1".into(),
            source: "t.yaml".into(),
            origin: Origin::Template,
            json_size: 0,
            body: serde_json::json!({"webhooks": hooks}),
        }
    }

    #[test]
    fn webhooks_calling_a_service_without_a_ca_bundle() {
        let o = webhook(
            "ValidatingWebhookConfiguration",
            serde_json::json!([
                {"name": "a", "clientConfig": {"service": {"name": "s"}}},
                {"name": "b", "clientConfig": {"service": {"name": "s"}, "caBundle": "Q0E="}},
                {"name": "c", "clientConfig": {"service": {"name": "s"}, "caBundle": ""}},
                {"name": "d", "clientConfig": {"url": "https://x"}}
            ]),
        );
        assert_eq!(without_ca_bundle(&o), vec![(0, "a".to_string()), (2, "c".to_string())]);
        assert!(without_ca_bundle(&webhook("MutatingWebhookConfiguration", Json::Null)).is_empty());
    }

    #[test]
    fn paths_that_cover_the_ca_bundle() {
        for p in [".webhooks[]?.clientConfig.caBundle", ".webhooks[].clientConfig.caBundle", " .webhooks[]?.clientConfig ", ".webhooks"] {
            assert!(covers(p, 3), "{p}");
        }
        assert!(covers("/webhooks/3/clientConfig/caBundle", 3));
        assert!(covers(".webhooks[3].clientConfig.caBundle", 3));
        assert!(!covers("/webhooks/0/clientConfig/caBundle", 3), "a pointer names one webhook");
        assert!(!covers(".webhooks[0].clientConfig.caBundle", 3));
        assert!(!covers(".webhooks[]?.clientConfig.service", 0));
        assert!(!covers(".webhooks[] | select(.name == \"a\") | .clientConfig.caBundle", 0), "filters are not evaluated");
        assert!(!covers("managedFieldsManagers=kube-controller-manager", 0));
        assert!(!covers("", 0) && !covers(".", 0));
        assert!(!covers(".webhooks[]?.clientConfig.caBundle.x", 0), "a path below caBundle leaves it");
    }
}
