//! Everything one check looks at: the cluster, the release and its versions, the installed and
//! target charts as rendered, the values the upgrade will use, and the deployment engine; and
//! the smaller [`ChartInput`] a chart review (`hooks`) has: one rendered chart and an engine.

pub mod derived;
pub mod trainjobs;

use serde_json::Value as Json;

use crate::cluster::install::InstallMethod;
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::engine::storage::HelmDriver;
use crate::engine::{Engine, EngineContext};
use crate::inventory::Inventory;

/// One rendered chart under a deployment engine: what the kinds that need no cluster read.
#[derive(Clone, Copy)]
pub struct ChartInput<'a> {
    pub chart: &'a Inventory,
    pub engine: Engine,
    /// The Argo CD version, when known (which hook phases it runs).
    pub argocd: Option<&'a semver::Version>,
    /// The GitOps file's engine options, in a GitOps review.
    pub gitops: Option<&'a EngineContext>,
}

/// The value that renders the Trainer chart's templated CRDs (2.3+: each
/// `templates/crd/*.yaml` is wrapped in `if .Values.crds.enabled`, default true).
pub const CRDS_SWITCH: [&str; 2] = ["crds", "enabled"];

pub struct CheckInput<'a> {
    pub state: &'a ClusterState,
    pub release: Option<&'a Release>,
    pub release_name: String,
    pub namespace: String,
    pub from: semver::Version,
    pub to: semver::Version,
    /// The installed chart rendered with the release's own values (None when it could not be).
    pub installed: Option<&'a Inventory>,
    /// Why `installed` is None, and the rules that needed it (they did not run).
    pub installed_missing: Option<InstalledMissing>,
    /// The target chart rendered with the values the upgrade will use.
    pub target: &'a Inventory,
    /// The target chart rendered with the same values but its CRD switch on (`crds.enabled`,
    /// [`CRDS_SWITCH`]), when the user's values turn it off: the CRDs the upgrade leaves out.
    pub target_crds_on: Option<&'a Inventory>,
    /// User values the upgrade applies (the release's, then `-f`/`--set`).
    pub user_values: Json,
    /// Where they came from, in merge order (a later one wins): the release's stored values (or
    /// a GitOps file's), then each `-f`/`--set` flag as given, each with the values it sets.
    pub value_sources: Vec<(String, Json)>,
    pub install: &'a InstallMethod,
    /// The chart repository the upgrade pulls from (`oci://…`), or the local chart it uses.
    pub repository: String,
    /// The target CRDs over the live objects, computed on first use (`derived`).
    pub derived: derived::Derived,
    /// Helm flags needed to reach that repository, each with a leading space (` --plain-http`):
    /// every printed command that names the repository carries them.
    pub registry_flags: String,
    /// In a GitOps review: the engine the file deploys with and its options (the engine then
    /// is the file's, not the one detected in the cluster).
    pub gitops: Option<&'a EngineContext>,
    /// The target revision's Helm release record (None when it could not be computed).
    pub record: Option<&'a TargetRecord>,
    /// The Kubernetes version the cluster moves to (`--to-kube`).
    pub to_kube: Option<&'a kube_version::KubeVersion>,
}

/// The record Helm will write for the target revision, and where (`release-size`).
#[derive(Debug, Clone)]
pub struct TargetRecord {
    /// The record's object name (`sh.helm.release.v1.<release>.v<revision>`).
    pub name: String,
    pub size: helm_render::release_record::RecordSize,
    pub driver: HelmDriver,
    /// How the driver is known: `--helm-driver`, the release's own records, or Helm's default.
    pub driver_from: String,
}

/// The installed chart could not be read or rendered.
#[derive(Debug, Clone, Default)]
pub struct InstalledMissing {
    pub reason: String,
    /// Rule id and title of every rule of this upgrade that reads the installed chart.
    pub skipped: Vec<(String, String)>,
}

impl CheckInput<'_> {
    /// The engine that will run the upgrade, from the detected install method (a kubectl or
    /// kustomize install is upgraded by moving it to Helm, as `plan` proposes).
    pub fn engine(&self) -> Engine {
        if let Some(g) = self.gitops {
            return g.engine;
        }
        self.install.method.engine()
    }

    /// The target chart under the upgrade's engine, for the kinds that read only a chart.
    pub fn chart(&self) -> ChartInput<'_> {
        ChartInput { chart: self.target, engine: self.engine(), argocd: self.gitops.and_then(|g| g.argocd.as_ref()), gitops: self.gitops }
    }

    /// Identities (kind, namespace, name) of the release's objects the upgrade diffs against:
    /// the manifest of the revision Helm starts from (`Release::upgrade_objects`: the deployed one
    /// under a failed revision, a pending one's rollback target), none for a fresh install over an
    /// uninstalled release.
    pub fn release_objects(&self) -> Vec<(String, String, String)> {
        match self.release {
            Some(r) => r
                .upgrade_objects()
                .iter()
                .map(|o| (o.identity.kind.clone(), o.identity.namespace.clone(), o.identity.name.clone()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Where the user's value at `path` (`a.b.c`) came from: the last source that sets it (or a
    /// map above it). None when no source sets it.
    pub fn value_source(&self, path: &str) -> Option<&str> {
        let keys: Vec<&str> = path.split('.').collect();
        self.value_sources
            .iter()
            .rev()
            .find(|(_, v)| {
                let mut cur = v;
                for k in &keys {
                    match cur.get(k) {
                        Some(next) => cur = next,
                        None => return false,
                    }
                }
                true
            })
            .map(|(label, _)| label.as_str())
    }

    /// The live object with this kind, namespace (empty for cluster-scoped) and name.
    pub fn live(&self, kind: &str, namespace: &str, name: &str) -> Option<&Json> {
        self.state.find(kind, namespace, name)
    }
}

/// Paths present in a JSON object (`spec.trainer.numProcPerNode`, `[]` for list items), with the
/// JSON type of the value there.
pub fn json_paths(v: &Json, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    fn kind(v: &Json) -> &'static str {
        match v {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
    // One path buffer for the whole walk, cloned once per path reported: field checks walk
    // every TrainJob's spec, and a fresh string per level doubled the allocations.
    fn walk(v: &Json, path: &mut String, out: &mut Vec<(String, &'static str)>) {
        let len = path.len();
        match v {
            Json::Object(map) => {
                for (k, child) in map {
                    if len > 0 {
                        path.push('.');
                    }
                    path.push_str(k);
                    out.push((path.clone(), kind(child)));
                    walk(child, path, out);
                    path.truncate(len);
                }
            }
            Json::Array(items) => {
                path.push_str("[]");
                for item in items {
                    out.push((path.clone(), kind(item)));
                    walk(item, path, out);
                }
                path.truncate(len);
            }
            _ => {}
        }
    }
    walk(v, &mut prefix.to_string(), out);
}

#[cfg(test)]
mod tests {
    use super::json_paths;

    #[test]
    fn json_paths_lists_every_path_in_order_with_its_type() {
        let v = serde_json::json!({"a": {"b": [1, {"c": "x"}], "": null}, "d": 1.5, "e": [[true]]});
        let mut out = Vec::new();
        json_paths(&v, "spec", &mut out);
        let want = [
            ("spec.a", "object"),
            ("spec.a.b", "array"),
            ("spec.a.b[]", "integer"),
            ("spec.a.b[]", "object"),
            ("spec.a.b[].c", "string"),
            ("spec.a.", "null"),
            ("spec.d", "number"),
            ("spec.e", "array"),
            ("spec.e[]", "array"),
            ("spec.e[][]", "boolean"),
        ];
        assert_eq!(out, want.map(|(p, t)| (p.to_string(), t)));
        let mut out = Vec::new();
        json_paths(&serde_json::json!({"x": {"y": 1}}), "", &mut out);
        assert_eq!(out, [("x".to_string(), "object"), ("x.y".to_string(), "integer")]);
    }
}
