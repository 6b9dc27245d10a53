//! `crd-size`: CRDs whose compact JSON exceeds the annotation budget, so client-side apply
//! (kubectl's default, Argo CD's default) cannot store `last-applied-configuration`. CRDs from
//! `crds/` count only under Argo CD, which applies them with the chart (Helm and Flux create
//! them without client-side apply; kustomize leaves them out by default).

use serde::Deserialize;

use super::{ChartKind, Hit};
use crate::audit::gitops::Engine;
use crate::audit::input::ChartInput;
use crate::inventory::crd::ANNOTATION_BUDGET;
use crate::kube::Origin;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl ChartKind for Params {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit> {
        let engine = chart.engine;
        let hits = chart
            .chart
            .crds
            .iter()
            .filter(|c| (c.origin != Origin::CrdsDir || engine == Engine::Argocd) && c.over_annotation_budget())
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
