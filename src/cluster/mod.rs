//! What is installed, read without changing anything: from a live cluster (`live`) or from a
//! snapshot file (`snapshot`), normalised the same way so both give the same [`ClusterState`].
//! Only what the audit needs is kept (see `catalog`), and large, irrelevant parts are dropped
//! (TrainJob and JobSet status, managedFields bodies, last-applied copies).

pub mod catalog;
pub mod install;
pub mod legacy;
pub mod live;
pub mod neighbours;
pub mod quota;
pub mod release;
pub mod snapshot;
pub mod source;
pub mod status;
pub mod trim;

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::str_at;
use catalog::{CRD_GROUPS, PUBLIC_CONFIGMAP};
use kube_version::KubeVersion;

pub const CLUSTER_INFO_API_VERSION: &str = "trainer-audit.dev/v1alpha1";

/// Facts about the cluster itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClusterInfo {
    /// What the API server reports (`v1.33.2`), or the user's `--kube-version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<KubeVersion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_at: Option<String>,
    /// What the read that made a snapshot could not see (its `readWarnings`), carried over into
    /// [`ClusterState::warnings`] when the snapshot is read back: a check from a snapshot made
    /// without some permission knows it as a live check does.
    #[serde(skip)]
    pub read_warnings: Vec<String>,
    /// `server_version` is the user's `--kube-version`, not the cluster's own word.
    #[serde(skip)]
    pub version_given: bool,
    /// Neighbour versions the user declared (`--neighbour kueue=0.16.9`) for what the cluster
    /// does not tell; checked against the cluster by [`ClusterState::declare_neighbour`].
    #[serde(skip)]
    pub declared: std::collections::BTreeMap<String, neighbours::Declared>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClusterState {
    pub info: ClusterInfo,
    /// Kept objects, normalised, sorted by apiVersion, kind, namespace, name (lookups rely on
    /// the order: build states with [`ClusterState::from_normalised`] or `from_objects`).
    pub objects: Vec<Json>,
    /// What could not be read (missing permissions), said once each.
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("{0}")]
    Snapshot(String),
    #[error("{0}")]
    Live(String),
    #[error("{0}")]
    Release(String),
}

impl ClusterState {
    /// Builds a state from raw objects: normalises, filters and sorts them.
    pub fn from_objects(info: ClusterInfo, raw: impl IntoIterator<Item = Json>, warnings: Vec<String>) -> ClusterState {
        ClusterState::from_normalised(info, raw.into_iter().filter_map(normalise).collect(), warnings)
    }

    /// Builds a state from objects already passed through [`normalise`]: sorted, duplicates
    /// (the same object listed twice) dropped, the first one listed kept.
    pub fn from_normalised(info: ClusterInfo, objects: Vec<Json>, warnings: Vec<String>) -> ClusterState {
        // Sorted through borrowed keys: four owned Strings per object cost more than the sort
        // itself over 50,000 TrainJobs.
        // On the pool's cores (a stable sort, as before): on one core it was serial time in
        // every run over a large cluster.
        let order: Vec<usize> = {
            let keys: Vec<[&str; 4]> = crate::par::map(&objects, sort_key);
            let mut order: Vec<usize> = (0..objects.len()).collect();
            crate::par::sort_by(&mut order, |&a, &b| keys[a].cmp(&keys[b]));
            order.dedup_by(|a, b| keys[*a] == keys[*b]);
            order
        };
        let mut slots: Vec<Option<Json>> = objects.into_iter().map(Some).collect();
        let objects = order.into_iter().filter_map(|i| slots[i].take()).collect();
        ClusterState { info, objects, warnings }
    }

    /// The objects of each apiVersion, in order (they are contiguous, `objects` being sorted).
    fn by_api_version(&self) -> impl Iterator<Item = &[Json]> + '_ {
        let mut rest = self.objects.as_slice();
        std::iter::from_fn(move || {
            let api_version = str_at(rest.first()?, &["apiVersion"]);
            let (group, tail) = rest.split_at(rest.partition_point(|o| str_at(o, &["apiVersion"]) <= api_version));
            rest = tail;
            Some(group)
        })
    }

    /// Objects of a kind, found by binary search in each apiVersion's run (a scan of 50,000
    /// TrainJobs for every lookup made `check` spend most of its time here).
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Json> + 'a {
        self.by_api_version().flat_map(move |group| {
            let start = group.partition_point(|o| str_at(o, &["kind"]) < kind);
            let end = start + group[start..].partition_point(|o| str_at(o, &["kind"]) == kind);
            group[start..end].iter()
        })
    }

    /// The object with this kind, namespace ("" for cluster-scoped) and name, in any apiVersion.
    pub fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&Json> {
        let wanted = [kind, namespace, name];
        self.by_api_version().find_map(|group| {
            let at = group.partition_point(|o| sort_key(o)[1..] < wanted[..]);
            group.get(at).filter(|o| sort_key(o)[1..] == wanted[..])
        })
    }

    pub fn crds(&self) -> impl Iterator<Item = &Json> {
        self.of_kind("CustomResourceDefinition")
    }

    pub fn crd(&self, name: &str) -> Option<&Json> {
        self.crds().find(|c| str_at(c, &["metadata", "name"]) == name)
    }

    pub fn runtimes(&self) -> impl Iterator<Item = &Json> {
        self.objects.iter().filter(|o| matches!(str_at(o, &["kind"]), "ClusterTrainingRuntime" | "TrainingRuntime"))
    }

    pub fn trainjobs(&self) -> impl Iterator<Item = &Json> {
        self.of_kind("TrainJob")
    }

    pub fn public_configmap(&self) -> Option<&Json> {
        self.of_kind("ConfigMap").find(|c| str_at(c, &["metadata", "name"]) == PUBLIC_CONFIGMAP)
    }

    /// Every Helm release record decoded and grouped by release; records that cannot be
    /// decoded (corrupt, or a decompression bomb) come back as errors naming the record.
    pub fn releases(&self) -> (Vec<release::Release>, Vec<String>) {
        let mut records = Vec::new();
        let mut errors = Vec::new();
        // Stubs of other charts' records name their chart only (see `neighbours`).
        for o in self.objects.iter().filter(|o| str_at(o, &["metadata", "name"]).starts_with("sh.helm.release.v1.") && !release::is_stub(o))
        {
            match release::decode(o) {
                Ok(r) => records.push(r),
                Err(e) => errors.push(e.to_string()),
            }
        }
        (release::releases(records), errors)
    }

    /// `--kube-version` for a cluster that does not record its version; a cluster that records
    /// another minor contradicts it (the error names both).
    pub fn assume_kube_version(&mut self, given: &KubeVersion) -> Result<(), ClusterError> {
        match &self.info.server_version {
            None => {
                self.info.server_version = Some(given.clone());
                self.info.version_given = true;
                Ok(())
            }
            Some(recorded) if recorded.same_minor(given) => Ok(()),
            Some(recorded) => Err(ClusterError::Snapshot(format!(
                "--kube-version {given} contradicts the cluster, which reports Kubernetes {recorded}: drop --kube-version (it is for a snapshot that records no version; to ask about a Kubernetes upgrade, use --to-kube)"
            ))),
        }
    }

    /// `--neighbour ID=VERSION` for this cluster: refused when the cluster tells another version
    /// (or runs what is declared `none`), or has nothing of that component.
    pub fn declare_neighbour(&mut self, id: &str, declared: neighbours::Declared) -> Result<(), ClusterError> {
        neighbours::check_declaration(self, id, &declared).map_err(ClusterError::Snapshot)?;
        self.info.declared.insert(id.to_string(), declared);
        Ok(())
    }

    /// The cluster's Kubernetes version (its own, or `--kube-version`), when known.
    pub fn kube_version(&self) -> Option<&KubeVersion> {
        self.info.server_version.as_ref()
    }
}

fn sort_key(o: &Json) -> [&str; 4] {
    [str_at(o, &["apiVersion"]), str_at(o, &["kind"]), str_at(o, &["metadata", "namespace"]), str_at(o, &["metadata", "name"])]
}

fn labels_have(o: &Json, key: &str, value: &str) -> bool {
    str_at(o, &["metadata", "labels", key]) == value
}

/// What reading may leave out of a top-level key of an object whose apiVersion and kind are
/// known, because [`normalise`] drops it anyway: the snapshot reader consults this while
/// parsing, so 50,000 statuses and legacy specs are never built only to be thrown away.
/// `normalise` still runs on what is built and stays the reference; this only says what it
/// would drop, never more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prune {
    /// Built whole.
    Keep,
    /// Not built: `normalise` removes the key (or the whole object).
    Drop,
    /// Only `conditions[].type` and `.status` built (a TrainJob's or legacy job's status).
    Conditions,
    /// Built whole but `managedFields`, whose entries keep their manager, operation and
    /// apiVersion only (the metadata of every kept object).
    Managers,
}

/// See [`Prune`]. Follows `normalise` case by case: kinds it never keeps lose everything but
/// their apiVersion and kind (which snapshot reading checks); the rest lose what it trims.
pub fn prune(kind: &str, key: &str) -> Prune {
    let legacy = catalog::LEGACY_KINDS.contains(&kind);
    // Every kind the audit lists may be kept (`normalise` decides which objects are): one list,
    // the catalog, so a kind added there is never pruned away here before normalisation sees it.
    let kept = legacy || catalog::RESOURCES.iter().any(|r| r.kind == kind);
    match key {
        // A snapshot's own ClusterInfo item is read whole (`snapshot::cluster_info`).
        _ if kind == "ClusterInfo" => Prune::Keep,
        "apiVersion" | "kind" => Prune::Keep,
        _ if !kept => Prune::Drop,
        // Helm release records may be kept as the stub they already are, metadata and all.
        "metadata" if matches!(kind, "Secret" | "ConfigMap") => Prune::Keep,
        "metadata" => Prune::Managers,
        _ if kind == "Namespace" => Prune::Drop,
        "status" if legacy || kind == "TrainJob" => Prune::Conditions,
        "status" if matches!(kind, "ClusterTrainingRuntime" | "TrainingRuntime" | "JobSet") => Prune::Drop,
        "spec" if legacy && kind != "PyTorchJob" => Prune::Drop,
        _ => Prune::Keep,
    }
}

/// Keeps what the audit reads and trims the rest; None drops the object.
pub fn normalise(mut o: Json) -> Option<Json> {
    let kind = str_at(&o, &["kind"]).to_string();
    let name = str_at(&o, &["metadata", "name"]).to_string();
    let helm_record = name.starts_with("sh.helm.release.v1.")
        && match kind.as_str() {
            "Secret" => str_at(&o, &["type"]) == "helm.sh/release.v1",
            "ConfigMap" => labels_have(&o, "owner", "helm"),
            _ => false,
        };
    if helm_record {
        // Trainer's records whole; the neighbours' as stubs naming their chart; no others.
        match release::kept_record_of(&o, neighbours::CHARTS)? {
            release::Kept::Whole => {}
            release::Kept::Stub(stub) => return Some(stub),
        }
    }
    let neighbour_crd = kind == "CustomResourceDefinition" && neighbours::CRD_GROUPS.contains(&str_at(&o, &["spec", "group"]));
    let keep = match kind.as_str() {
        "CustomResourceDefinition" => CRD_GROUPS.contains(&str_at(&o, &["spec", "group"])) || neighbour_crd,
        "ClusterTrainingRuntime" | "TrainingRuntime" | "TrainJob" | "Namespace" => true,
        "Deployment" => neighbours::keep_deployment(&o),
        "LocalQueue" => return str_at(&o, &["apiVersion"]).starts_with("kueue.x-k8s.io/").then(|| trim::local_queue(&o)),
        "ResourceQuota" => return Some(trim::resource_quota(&o)),
        "LimitRange" => return Some(trim::limit_range(&o)),
        k if catalog::LEGACY_KINDS.contains(&k) => str_at(&o, &["apiVersion"]).starts_with("kubeflow.org/"),
        "JobSet" => str_at(&o, &["apiVersion"]).starts_with("jobset.x-k8s.io/"),
        "Secret" => helm_record,
        "ConfigMap" => name == PUBLIC_CONFIGMAP || helm_record,
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            name.contains("trainer")
                || o.get("webhooks")
                    .and_then(Json::as_array)
                    .is_some_and(|w| w.iter().any(|h| str_at(h, &["name"]).contains(catalog::TRAINER_GROUP)))
        }
        _ => false,
    };
    if !keep {
        return None;
    }
    let meta = o.get_mut("metadata").and_then(Json::as_object_mut)?;
    if let Some(fields) = meta.get_mut("managedFields").and_then(Json::as_array_mut) {
        for f in fields.iter_mut() {
            if let Some(entry) = f.as_object_mut() {
                entry.retain(|k, _| matches!(k.as_str(), "manager" | "operation" | "apiVersion"));
            }
        }
    }
    if let Some(annotations) = meta.get_mut("annotations").and_then(Json::as_object_mut) {
        if let Some(last) = annotations.get_mut("kubectl.kubernetes.io/last-applied-configuration") {
            let size = last.as_str().map(str::len).unwrap_or(0);
            *last = Json::String(format!("<dropped: {size} bytes>"));
        }
    }
    if kind == "Namespace" {
        meta.retain(|k, _| matches!(k.as_str(), "name" | "labels"));
    }
    if neighbour_crd {
        neighbours::trim_crd(&mut o);
    }
    match kind.as_str() {
        "Deployment" => neighbours::trim_deployment(&mut o),
        k if catalog::LEGACY_KINDS.contains(&k) => trim::legacy_job(&mut o),
        _ => {}
    }
    if let Some(obj) = o.as_object_mut() {
        match kind.as_str() {
            // Validation of the main resource never reads status (a status subresource).
            "ClusterTrainingRuntime" | "TrainingRuntime" | "JobSet" => {
                obj.remove("status");
            }
            // A TrainJob or legacy job keeps only its condition types and states (enough to tell
            // running ones), and a TrainJob's `Failed` its reason: the 2.3 controller reconciles a
            // Failed TrainJob again unless it failed on its deadline (`legacy::gets_runtime_snapshot`).
            k if k == "TrainJob" || catalog::LEGACY_KINDS.contains(&k) => {
                let trainjob = k == "TrainJob";
                let conditions: Vec<Json> = obj
                    .get("status")
                    .and_then(|s| s.get("conditions"))
                    .and_then(Json::as_array)
                    .map(|cs| {
                        cs.iter()
                            .map(|c| match c.get("reason") {
                                Some(reason) if trainjob && c.get("type").and_then(Json::as_str) == Some("Failed") => small_map([
                                    ("type", c.get("type").cloned()),
                                    ("status", c.get("status").cloned()),
                                    ("reason", Some(reason.clone())),
                                ]),
                                _ => small_map([("type", c.get("type").cloned()), ("status", c.get("status").cloned())]),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                obj.remove("status");
                if !conditions.is_empty() {
                    obj.insert("status".into(), small_map([("conditions", Some(Json::Array(conditions)))]));
                }
            }
            "Namespace" => obj.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata")),
            _ => {}
        }
    }
    Some(o)
}

/// A map of exactly these entries (absent values as null), allocated at its size: 50,000
/// TrainJobs keep one such summary each.
fn small_map<const N: usize>(entries: [(&str, Option<Json>); N]) -> Json {
    let mut m = serde_json::Map::with_capacity(N);
    for (k, v) in entries {
        m.insert(k.to_string(), v.unwrap_or(Json::Null));
    }
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(api_version: &str, kind: &str, namespace: &str, name: &str, mark: u32) -> Json {
        let mut metadata = json!({"name": name});
        if !namespace.is_empty() {
            metadata["namespace"] = json!(namespace);
        }
        json!({"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": {"mark": mark}})
    }

    /// Parse-time pruning never drops a kind the audit lists before normalisation decides on it
    /// (a LimitRange fixture once read as nothing: the pruner kept a list of its own).
    #[test]
    fn pruning_keeps_every_listed_kind_for_normalisation() {
        for r in catalog::RESOURCES {
            assert_ne!(prune(r.kind, "metadata"), Prune::Drop, "{} is listed but pruned before normalisation", r.kind);
        }
        let trim::Shape::Only([("conditions", trim::Shape::Each(trim::Shape::Only(keys)))]) = &trim::CONDITIONS else {
            panic!("CONDITIONS is conditions' elements, some of their keys")
        };
        assert!(keys.iter().any(|(k, _)| *k == "reason"), "a TrainJob Failed condition's reason must reach normalisation");
        assert_eq!(prune("NotAKind", "spec"), Prune::Drop);
    }

    #[test]
    fn lookups_find_every_kind_across_api_versions_and_keep_the_first_duplicate() {
        let state = ClusterState::from_normalised(
            ClusterInfo::default(),
            vec![
                object("v1", "Namespace", "", "b", 0),
                object("trainer.kubeflow.org/v1alpha1", "TrainJob", "team-b", "job-1", 1),
                object("kubeflow.org/v1", "TrainJob", "team-a", "job-0", 2),
                object("apps/v1", "Deployment", "kubeflow-system", "kubeflow-trainer-controller-manager", 3),
                object("trainer.kubeflow.org/v1alpha1", "TrainJob", "team-a", "job-0", 4),
                object("v1", "Namespace", "", "a", 5),
                object("trainer.kubeflow.org/v1alpha1", "TrainJob", "team-b", "job-1", 6),
                object("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", "", "torch", 7),
            ],
            Vec::new(),
        );
        let marks = |it: &mut dyn Iterator<Item = &Json>| it.map(|o| o["spec"]["mark"].as_u64().unwrap_or(99)).collect::<Vec<_>>();
        assert_eq!(state.objects.len(), 7, "the second team-b/job-1 is a duplicate");
        assert_eq!(marks(&mut state.objects.iter()), [3, 2, 7, 4, 1, 5, 0]);
        assert_eq!(marks(&mut state.of_kind("TrainJob")), [2, 4, 1]);
        assert_eq!(marks(&mut state.of_kind("Namespace")), [5, 0]);
        assert_eq!(marks(&mut state.of_kind("Pod")), Vec::<u64>::new());
        assert_eq!(state.find("TrainJob", "team-a", "job-0").map(|o| o["spec"]["mark"].clone()), Some(json!(2)));
        assert_eq!(state.find("TrainJob", "team-b", "job-1").map(|o| o["spec"]["mark"].clone()), Some(json!(1)));
        assert_eq!(state.find("ClusterTrainingRuntime", "", "torch").map(|o| o["spec"]["mark"].clone()), Some(json!(7)));
        assert!(state.find("TrainJob", "team-a", "job-1").is_none());
        assert!(state.find("Namespace", "", "c").is_none());
        assert!(ClusterState::default().find("Namespace", "", "a").is_none());
        assert_eq!(ClusterState::default().of_kind("Namespace").count(), 0);
    }
}
