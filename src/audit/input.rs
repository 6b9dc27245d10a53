//! Everything one check looks at: the cluster, the release and its versions, the installed and
//! target charts as rendered, the values the upgrade will use, and the deployment engine; and
//! the smaller [`ChartInput`] a chart review (`hooks`) has: one rendered chart and an engine.

use serde_json::Value as Json;

use super::gitops::Engine;
use crate::cluster::install::{Method, Verdict};
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::inventory::Inventory;
use crate::kube::str_at;

/// One rendered chart under a deployment engine: what the kinds that need no cluster read.
#[derive(Clone, Copy)]
pub struct ChartInput<'a> {
    pub chart: &'a Inventory,
    pub engine: Engine,
    /// The Argo CD version, when known (which hook phases it runs).
    pub argocd: Option<&'a semver::Version>,
}

pub struct CheckInput<'a> {
    pub state: &'a ClusterState,
    pub release: Option<&'a Release>,
    pub release_name: String,
    pub namespace: String,
    pub from: semver::Version,
    pub to: semver::Version,
    /// The installed chart rendered with the release's own values (None when it could not be).
    pub installed: Option<&'a Inventory>,
    /// The target chart rendered with the values the upgrade will use.
    pub target: &'a Inventory,
    /// User values the upgrade applies (the release's, then `-f`/`--set`).
    pub user_values: Json,
    pub install: &'a Verdict,
    /// The chart repository the upgrade pulls from (`oci://…`), or the local chart it uses.
    pub repository: String,
    /// The target CRDs over the live objects, computed on first use (`super::schema`).
    pub derived: super::schema::Derived,
}

impl CheckInput<'_> {
    /// The engine that will run the upgrade, from the detected install method (a kubectl or
    /// kustomize install is upgraded by moving it to Helm, as `plan` proposes).
    pub fn engine(&self) -> Engine {
        match self.install.method {
            Method::ArgoCd => Engine::Argocd,
            Method::FluxHelm | Method::FluxKustomize => Engine::Flux,
            Method::Kubectl | Method::Helm | Method::Unknown => Engine::Helm,
        }
    }

    /// The target chart under the upgrade's engine, for the kinds that read only a chart.
    pub fn chart(&self) -> ChartInput<'_> {
        ChartInput { chart: self.target, engine: self.engine(), argocd: None }
    }

    /// Identities (kind, namespace, name) of the current release's objects, from its manifest.
    pub fn release_objects(&self) -> Vec<(String, String, String)> {
        match self.release {
            Some(r) => r
                .current
                .objects()
                .iter()
                .map(|o| (o.identity.kind.clone(), o.identity.namespace.clone(), o.identity.name.clone()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The live object with this kind, namespace (empty for cluster-scoped) and name.
    pub fn live(&self, kind: &str, namespace: &str, name: &str) -> Option<&Json> {
        self.state.objects.iter().find(|o| {
            str_at(o, &["kind"]) == kind && str_at(o, &["metadata", "name"]) == name && str_at(o, &["metadata", "namespace"]) == namespace
        })
    }
}
