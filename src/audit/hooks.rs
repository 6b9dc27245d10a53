//! The GitOps hook review (`trainer-audit hooks`): for every hook, when Helm runs it and what
//! each engine does with it, the CRDs' apply sizes, and the findings of the review rules
//! (`rules/hooks.yaml`: what hooks do at run time, CRD facts that matter to GitOps).

use std::collections::BTreeMap;

use serde::Serialize;

use super::finding::Finding;
use super::input::ChartInput;
use super::rules::Rule;
use crate::engine::hooks::{argocd_delete_policy, argocd_phase, behaviour, ArgoPhase};
use crate::engine::Engine;
use crate::inventory::hook::HookInfo;
use crate::inventory::Inventory;
use crate::objects::Origin;

#[derive(Debug, Clone, Serialize)]
pub struct HookReview {
    pub hook: HookInfo,
    pub helm: String,
    pub argocd: Vec<ArgoPhase>,
    pub argocd_delete_policies: Vec<String>,
    /// What the selected engine does with it.
    pub engine: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrdSize {
    pub name: String,
    pub origin: Origin,
    pub json_size: usize,
    pub over_budget: bool,
    pub keep: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct HooksReport {
    pub chart: String,
    pub version: String,
    pub engine: Engine,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argocd_version: Option<String>,
    pub hooks: Vec<HookReview>,
    pub crds: Vec<CrdSize>,
    pub findings: Vec<Finding>,
}

/// The review of one chart rendered as `release` into `namespace`: every hook under each engine,
/// the CRD sizes, and the findings of the review rules (`scope: review`).
pub fn review(
    rules: &[Rule],
    inventory: &Inventory,
    engine: Engine,
    argocd: Option<&semver::Version>,
    release: &str,
    namespace: &str,
) -> HooksReport {
    let vars: BTreeMap<String, String> =
        [("release".to_string(), release.to_string()), ("namespace".to_string(), namespace.to_string())].into_iter().collect();
    let findings = super::run::review(rules, &ChartInput { chart: inventory, engine, argocd, gitops: None }, &vars);
    let mut hooks = Vec::new();
    for hook in &inventory.hooks {
        hooks.push(HookReview {
            helm: behaviour(Engine::Helm, &hook.events, hook.weight, None),
            argocd: hook.events.iter().map(|e| argocd_phase(e, argocd)).collect(),
            argocd_delete_policies: if hook.delete_policies.is_empty() {
                vec!["BeforeHookCreation (Argo CD's default)".into()]
            } else {
                hook.delete_policies.iter().map(|p| argocd_delete_policy(p).unwrap_or("unknown").to_string()).collect()
            },
            engine: behaviour(engine, &hook.events, hook.weight, argocd),
            hook: hook.clone(),
        });
    }
    // Argo CD applies crds/ with --include-crds, so they count there; Helm and Flux never apply
    // them with client-side apply, kustomize leaves them out by default.
    let crds: Vec<CrdSize> = inventory
        .crds
        .iter()
        .filter(|c| c.origin != Origin::CrdsDir || engine == Engine::Argocd)
        .map(|c| CrdSize {
            name: c.name.clone(),
            origin: c.origin,
            json_size: c.json_size,
            over_budget: c.over_annotation_budget(),
            keep: c.keeps_on_delete(),
        })
        .collect();
    HooksReport {
        chart: inventory.chart.name.clone(),
        version: inventory.chart.version.clone(),
        engine,
        argocd_version: argocd.map(|v| v.to_string()),
        hooks,
        crds,
        findings,
    }
}

/// `--argocd-version` as a version, for a review under Argo CD only: given for another engine it
/// would be silently ignored, so it is refused (the error says which engine the run reviews for).
pub fn argocd_version(engine: Engine, given: Option<&str>) -> Result<Option<semver::Version>, String> {
    let Some(v) = given else { return Ok(None) };
    if engine != Engine::Argocd {
        return Err(format!(
            "--argocd-version {v} applies to --engine argocd, and this review is for --engine {}: drop it, or review for Argo CD",
            engine.as_str()
        ));
    }
    helm_render::version::parse_lenient(v.trim_start_matches('v'))
        .map(Some)
        .ok_or_else(|| format!("invalid --argocd-version {v:?}: expected a version like 3.2.1"))
}

#[cfg(test)]
mod engine_option_tests {
    use super::*;

    #[test]
    fn the_argocd_version_is_for_argocd_only() {
        assert_eq!(argocd_version(Engine::Argocd, Some("v3.2.1")).unwrap().map(|v| v.to_string()).as_deref(), Some("3.2.1"));
        assert_eq!(argocd_version(Engine::Helm, None).unwrap(), None);
        let refused = argocd_version(Engine::Helm, Some("3.2.1")).unwrap_err();
        assert!(refused.contains("--argocd-version 3.2.1") && refused.contains("--engine helm"), "{refused}");
        assert!(argocd_version(Engine::Flux, Some("3.2.1")).is_err());
        assert!(argocd_version(Engine::Argocd, Some("three")).unwrap_err().contains("invalid --argocd-version"));
    }
}
