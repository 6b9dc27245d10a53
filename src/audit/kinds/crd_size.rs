//! `crd-size`: CRDs whose compact JSON exceeds the annotation budget, so client-side apply
//! (kubectl's default, Argo CD's default) cannot store `last-applied-configuration`. CRDs from
//! `crds/` count only under Argo CD, which applies them with the chart (Helm and Flux create
//! them without client-side apply; kustomize leaves them out by default). In a GitOps review, an
//! Argo CD Application that syncs with `ServerSideApply=true` or `Replace=true` (or a CRD
//! annotated so) stores no such annotation (argo-cd v3.3.0 docs/user-guide/sync-options.md).

use serde::Deserialize;

use super::{ChartKind, Hit};
use crate::audit::input::ChartInput;
use crate::engine::Engine;
use crate::inventory::crd::ANNOTATION_BUDGET;
use crate::objects::Origin;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Argo CD options that avoid the last-applied annotation.
const AVOIDS_ANNOTATION: [&str; 2] = ["ServerSideApply", "Replace"];

/// Whether Argo CD syncs this CRD without client-side apply: its own sync-options annotation
/// decides, then the Application's.
fn argocd_avoids_annotation(chart: &ChartInput, name: &str) -> bool {
    let own = chart.chart.object("CustomResourceDefinition", name).and_then(|o| o.annotation("argocd.argoproj.io/sync-options"));
    let own: Vec<(&str, bool)> = own
        .map(|o| o.split(',').filter_map(|kv| kv.trim().split_once('=')).map(|(k, v)| (k, v.eq_ignore_ascii_case("true"))).collect())
        .unwrap_or_default();
    AVOIDS_ANNOTATION.iter().any(|option| match own.iter().find(|(k, _)| k == option) {
        Some((_, on)) => *on,
        None => chart.gitops.is_some_and(|g| g.is_on(&format!("syncOptions.{option}"))),
    })
}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let engine = chart.engine;
        let hits = chart
            .chart
            .crds
            .iter()
            .filter(|c| (c.origin != Origin::CrdsDir || engine == Engine::Argocd) && c.over_annotation_budget())
            .filter(|c| engine != Engine::Argocd || !argocd_avoids_annotation(chart, &c.name))
            .map(|crd| {
                let hit = Hit {
                    subject: format!("CustomResourceDefinition/{}", crd.name),
                    location: crd.source.clone(),
                    message: format!(
                        "{} is {} bytes as compact JSON, over the {ANNOTATION_BUDGET}-byte annotation budget: client-side `kubectl apply` and Argo CD's default apply fail with \"metadata.annotations: Too long\" (Helm's own apply is not affected)",
                        crd.name, crd.json_size
                    ),
                    evidence: vec![format!("json_size={} budget={ANNOTATION_BUDGET}", crd.json_size)],
                    ..Hit::default()
                };
                match engine {
                    Engine::Argocd => hit.variant("argocd"),
                    Engine::Kustomize => hit.variant("kustomize"),
                    Engine::Helm | Engine::Flux => hit,
                }
            });
        hits.collect()
    }
}
