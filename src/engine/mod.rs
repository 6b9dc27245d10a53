//! One place per deployment engine: how Trainer was installed ([`Method`], detected by
//! `cluster::install`), the engine that runs its upgrade ([`Engine`]: Helm, Argo CD, Flux,
//! kustomize), and what each engine does: the options a GitOps file sets ([`context`]), what it
//! does with a Helm hook ([`hooks`]), and the commands of an upgrade step under it — the
//! upgrade, how to adopt objects another owner holds, how to verify and what a rollback does
//! ([`commands`]).

pub mod commands;
pub mod context;
pub mod hooks;
pub mod storage;

use serde::Serialize;

pub use context::EngineContext;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    Helm,
    /// Spelt `argocd` as everywhere else (the `argocd` CLI, `--engine argocd`, the rules).
    #[serde(rename = "argocd")]
    ArgoCd,
    FluxHelm,
    FluxKustomize,
    /// `kubectl apply` / kustomize (client- or server-side).
    Kubectl,
    Unknown,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Helm => "Helm",
            Method::ArgoCd => "Argo CD",
            Method::FluxHelm => "Flux helm-controller",
            Method::FluxKustomize => "Flux kustomize-controller",
            Method::Kubectl => "kubectl / kustomize",
            Method::Unknown => "unknown",
        }
    }

    /// How a sentence says it: `installed with Helm`, `install method unknown`.
    pub fn installed(self) -> String {
        match self {
            Method::Unknown => "install method unknown".into(),
            m => format!("installed with {}", m.describe()),
        }
    }

    /// The engine that runs the upgrade of an install made this way (a kubectl or kustomize
    /// install is upgraded by moving it to Helm, as `plan` proposes).
    pub fn engine(self) -> Engine {
        match self {
            Method::ArgoCd => Engine::Argocd,
            Method::FluxHelm | Method::FluxKustomize => Engine::Flux,
            Method::Kubectl | Method::Helm | Method::Unknown => Engine::Helm,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Helm,
    Argocd,
    Flux,
    Kustomize,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Helm => "helm",
            Engine::Argocd => "argocd",
            Engine::Flux => "flux",
            Engine::Kustomize => "kustomize",
        }
    }
}

/// What an upgrade command must do to take over objects that exist without the release's
/// ownership, as the rule that finds them declares (`adopt:` in its YAML): Helm's
/// `--take-ownership`, or also `--force-conflicts` when another server-side apply manager owns
/// fields (only forcing gets through). The stronger need wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Adoption {
    TakeOwnership,
    ForceConflicts,
}
