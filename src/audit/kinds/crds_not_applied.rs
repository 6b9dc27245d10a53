//! `crds-not-applied`: in a GitOps review, CRDs the target ships in a `crds/` directory (its own
//! or a subchart's) that the engine, with the options the file sets, will not create or will not
//! update on this upgrade, while the target's copy differs from the installed chart's: the live
//! CRD keeps the old schema (or never exists), so objects the new controller writes with the new
//! fields or enum values are rejected or pruned. Which engine does what with `crds/`:
//! - Helm never touches `crds/` on upgrade (helm/helm v4.2.3 installs them at install only).
//! - Flux helm-controller follows `spec.upgrade.crds`: `Skip` (the default), `Create` (new CRDs
//!   only) or `CreateReplace` (fluxcd/helm-controller api/v2/helmrelease_types.go, v1.6.3).
//! - Argo CD renders with `--include-crds` unless `helm.skipCrds` and applies them on every sync
//!   (argo-cd v3.3.0 util/helm/cmd.go).
//! - kustomize `helmCharts` passes `--include-crds` only with `includeCRDs: true` (default
//!   false; kubernetes-sigs/kustomize api/types/helmchartargs.go, kustomize/v5.8.1).
//!
//! Outside a GitOps review the kind says nothing: there the cluster is read, and `stale-crd`
//! compares the live CRD itself.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::engine::{Engine, EngineContext};
use crate::inventory::crd::Crd;
use crate::inventory::paths::collapse;
use crate::inventory::schema_compare::compare;
use crate::inventory::Inventory;
use crate::objects::Origin;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// What the engine does with `crds/` on an upgrade, and why, in the file's words.
struct Policy {
    /// At install (a reference reviewed as installed: no earlier version).
    install_creates: bool,
    install_why: String,
    creates: bool,
    updates: bool,
    why: String,
    /// What to change in the file so the engine does apply them.
    remedy: &'static str,
}

fn policy(ctx: &EngineContext) -> Policy {
    let set = |name: &str| ctx.option(name).unwrap_or("").to_string();
    match ctx.engine {
        Engine::Helm => Policy {
            install_creates: true,
            install_why: String::new(),
            creates: false,
            updates: false,
            why: "helm upgrade never creates or updates CRDs from crds/ directories".into(),
            remedy: "apply the CRDs before the upgrade (below)",
        },
        Engine::Flux => {
            let value = set("upgrade.crds");
            let (creates, updates) = match value.as_str() {
                "CreateReplace" => (true, true),
                "Create" => (true, false),
                _ => (false, false),
            };
            let install = set("install.crds");
            Policy {
                install_creates: install != "Skip",
                install_why: format!("the HelmRelease's spec.install.crds is {}", ctx.describe("install.crds")),
                creates,
                updates,
                why: format!("the HelmRelease's spec.upgrade.crds is {}", ctx.describe("upgrade.crds")),
                remedy: "set spec.upgrade.crds: CreateReplace (and leave spec.install.crds at Create) on the HelmRelease: helm-controller then creates and replaces the CRDs from crds/; or apply them before merging (below)",
            }
        }
        Engine::Argocd if ctx.is_on("helm.skipCrds") => Policy {
            install_creates: false,
            install_why: "the Application sets helm.skipCrds: true, so Argo CD renders without crds/".into(),
            creates: false,
            updates: false,
            why: "the Application sets helm.skipCrds: true, so Argo CD renders without crds/".into(),
            remedy: "drop helm.skipCrds from the Application, or apply the CRDs before merging (below)",
        },
        Engine::Argocd => Policy::applies(),
        Engine::Kustomize if ctx.is_on("includeCRDs") => Policy::applies(),
        Engine::Kustomize => Policy {
            install_creates: false,
            install_why: "the helmCharts entry does not set includeCRDs: true (kustomize's default is false), so crds/ is left out".into(),
            creates: false,
            updates: false,
            why: "the helmCharts entry does not set includeCRDs: true (kustomize's default is false), so crds/ is left out".into(),
            remedy: "set includeCRDs: true in the helmCharts entry, or apply the CRDs before merging (below)",
        },
    }
}

impl Policy {
    /// The engine applies `crds/` with the rest of the chart, every time.
    fn applies() -> Policy {
        Policy { install_creates: true, install_why: String::new(), creates: true, updates: true, why: String::new(), remedy: "" }
    }
}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (Some(ctx), Some(installed)) = (input.gitops, input.installed) else { return Vec::new() };
        let policy = policy(ctx);
        if input.from == input.to {
            return installing(input, &policy);
        }
        if policy.creates && policy.updates {
            return Vec::new();
        }
        let mut hits = Vec::new();
        for crd in input.target.crds.iter().filter(|c| c.origin == Origin::CrdsDir) {
            let subject = format!("CustomResourceDefinition/{}", crd.name);
            let hit = match installed.crds.iter().find(|c| c.name == crd.name) {
                None if !policy.creates => Hit::new(
                    subject,
                    format!(
                        "{} is new in {}'s crds/ ({}) and {}: it is not created, so every {} object is refused (no such kind)",
                        crd.name, input.to, crd.source, policy.why, crd.kind
                    ),
                )
                .variant("not-created"),
                Some(old) if !policy.updates => {
                    let Some(stale) = staleness(old, crd, input.target) else { continue };
                    let used = !stale.accepted_elsewhere.is_empty();
                    let hit = Hit::new(
                        subject,
                        format!(
                            "{} changes between {}'s and {}'s crds/ ({}) and {}: the live CRD keeps the {} schema, so the API server rejects or prunes what is new in objects written against {}{}",
                            crd.name,
                            input.from,
                            input.to,
                            stale.summary,
                            policy.why,
                            input.from,
                            input.to,
                            if used { ", and the target's own CRDs already accept it (evidence)" } else { "" }
                        ),
                    );
                    let mut hit = stale.evidence.into_iter().chain(stale.accepted_elsewhere).fold(hit, Hit::evidence);
                    if used {
                        hit = hit.variant("used");
                    }
                    hit
                }
                _ => continue,
            };
            hits.push(hit.located(crd.source.clone()).var("crd", crd.name.clone()).var("remedy", policy.remedy));
        }
        hits
    }
}

/// A reference reviewed as installed: the `crds/` CRDs the engine will not create at install.
fn installing(input: &CheckInput, policy: &Policy) -> Vec<Hit> {
    if policy.install_creates {
        return Vec::new();
    }
    let crds = input.target.crds.iter().filter(|c| c.origin == Origin::CrdsDir);
    crds.map(|crd| {
        Hit::new(
            format!("CustomResourceDefinition/{}", crd.name),
            format!(
                "{} ships in {}'s crds/ ({}) and {}: it is not created, so every {} object is refused (no such kind)",
                crd.name, input.to, crd.source, policy.install_why, crd.kind
            ),
        )
        .variant("not-created")
        .located(crd.source.clone())
        .var("crd", crd.name.clone())
        .var("remedy", policy.remedy)
    })
    .collect()
}

struct Staleness {
    summary: String,
    evidence: Vec<String>,
    /// Places where another CRD of the target (applied with the release) accepts what is new.
    accepted_elsewhere: Vec<String>,
}

/// What the target's copy adds over the installed one: schema paths and enum values.
fn staleness(old: &Crd, new: &Crd, target: &Inventory) -> Option<Staleness> {
    let (Some(a), Some(b)) = (old.storage_schema(), new.storage_schema()) else { return None };
    let schemas = compare(a, b);
    let mut enums: Vec<(String, Vec<String>)> = Vec::new();
    for change in &schemas.changed {
        let before: BTreeSet<String> = change.old.enumeration.iter().map(enum_text).collect();
        let added: Vec<String> = change.new.enumeration.iter().map(enum_text).filter(|v| !before.contains(v)).collect();
        if !added.is_empty() && !before.is_empty() {
            enums.push((change.path.to_string(), added));
        }
    }
    let roots = collapse(&schemas.added, &schemas.old_paths());
    if roots.is_empty() && enums.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !schemas.added.is_empty() {
        parts.push(format!("{} schema paths added", schemas.added.len()));
    }
    if !enums.is_empty() {
        parts.push(format!("enum values added at {} path{}", enums.len(), if enums.len() == 1 { "" } else { "s" }));
    }
    let mut evidence: Vec<String> = enums.iter().map(|(p, v)| format!("new enum values at {p}: {}", v.join(", "))).collect();
    evidence.extend(roots.iter().take(6).map(|r| format!("new path {r}")));
    let others: Vec<&Crd> = target.crds.iter().filter(|c| c.name != new.name && c.origin == Origin::Template).collect();
    let mut accepted = Vec::new();
    for (path, values) in &enums {
        for other in &others {
            let Some(schema) = other.storage_schema() else { continue };
            for (p, field) in schema.iter().filter(|(p, _)| p.ends_with(&format!(".{path}"))) {
                let there: BTreeSet<String> = field.enumeration.iter().map(enum_text).collect();
                let shared: Vec<&String> = values.iter().filter(|v| there.contains(*v)).collect();
                if !shared.is_empty() {
                    let list: Vec<&str> = shared.iter().map(|s| s.as_str()).collect();
                    accepted.push(format!("{} accepts {} at {p}", other.kind, list.join(", ")));
                }
            }
        }
    }
    for root in &roots {
        for other in &others {
            let Some(schema) = other.storage_schema() else { continue };
            if let Some(p) = schema.keys().find(|p| p.ends_with(&format!(".{}", root.path))) {
                accepted.push(format!("{} accepts {p}", other.kind));
            }
        }
    }
    accepted.sort();
    accepted.dedup();
    accepted.truncate(6);
    Some(Staleness { summary: parts.join(", "), evidence, accepted_elsewhere: accepted })
}

fn enum_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(engine: Engine, options: &[(&str, &str)], defaulted: &[&str]) -> EngineContext {
        EngineContext {
            engine,
            argocd: None,
            options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            defaulted: defaulted.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn what_each_engine_does_with_crds_dir() {
        let cases: [(EngineContext, (bool, bool, bool)); 9] = [
            (ctx(Engine::Helm, &[], &[]), (true, false, false)),
            (
                ctx(Engine::Flux, &[("install.crds", "Create"), ("upgrade.crds", "Skip")], &["install.crds", "upgrade.crds"]),
                (true, false, false),
            ),
            (ctx(Engine::Flux, &[("install.crds", "Skip"), ("upgrade.crds", "Create")], &[]), (false, true, false)),
            (ctx(Engine::Flux, &[("install.crds", "Create"), ("upgrade.crds", "CreateReplace")], &[]), (true, true, true)),
            (ctx(Engine::Argocd, &[("helm.skipCrds", "false")], &["helm.skipCrds"]), (true, true, true)),
            (ctx(Engine::Argocd, &[("helm.skipCrds", "true")], &[]), (false, false, false)),
            (ctx(Engine::Kustomize, &[("includeCRDs", "false")], &["includeCRDs"]), (false, false, false)),
            (ctx(Engine::Kustomize, &[("includeCRDs", "true")], &[]), (true, true, true)),
            (ctx(Engine::Kustomize, &[("includeCRDs", "True")], &[]), (true, true, true)),
        ];
        for (c, want) in cases {
            let p = policy(&c);
            assert_eq!((p.install_creates, p.creates, p.updates), want, "{:?} {:?}", c.engine, c.options);
        }
        let flux = policy(&ctx(Engine::Flux, &[("upgrade.crds", "Skip")], &["upgrade.crds"]));
        assert!(flux.why.contains("Skip (unset: the engine's default)"), "{}", flux.why);
    }
}
