//! The trimmed forms of the objects kept for the neighbour and legacy checks, so a state (and a
//! snapshot) holds what they read and no more: Kueue LocalQueues as names, ResourceQuotas as
//! their limits, scopes and usage, LimitRanges as their limits, and Training Operator v1 jobs as
//! their conditions — except PyTorchJobs, whose spec `migrate --legacy` converts.

use serde_json::{json, Map, Value as Json};

use crate::objects::str_at;

/// How much of a value the cluster readers build while parsing (`snapshot::fast`, `live::page`):
/// all of it, or, where normalisation keeps only part (`cluster::Prune`), some keys of a mapping
/// or each element of a sequence in a shape. What is left out is still read and checked as the
/// reader checks everything else.
pub enum Shape {
    Whole,
    /// A mapping of which only these keys are built (the others are read past).
    Only(&'static [(&'static str, Shape)]),
    /// A mapping built whole, but for these keys, which take their own shape.
    Except(&'static [(&'static str, Shape)]),
    /// A sequence whose elements take this shape.
    Each(&'static Shape),
}

/// A TrainJob's or legacy job's status as normalisation keeps it: condition types and states,
/// and the reasons (normalisation keeps a TrainJob `Failed` condition's: the 2.3 controller
/// snapshots a Failed TrainJob unless it failed on its deadline, `legacy::no_runtime_snapshot`).
pub static CONDITIONS: Shape = Shape::Only(&[(
    "conditions",
    Shape::Each(&Shape::Only(&[("type", Shape::Whole), ("status", Shape::Whole), ("reason", Shape::Whole)])),
)]);
/// Metadata with managedFields reduced to their managers.
pub static MANAGERS: Shape = Shape::Except(&[(
    "managedFields",
    Shape::Each(&Shape::Only(&[("manager", Shape::Whole), ("operation", Shape::Whole), ("apiVersion", Shape::Whole)])),
)]);

/// ResourceQuota keys that count ConfigMaps (the object-count quota and its legacy name).
pub const CONFIGMAP_QUOTA_KEYS: &[&str] = &["count/configmaps", "configmaps"];

fn pick(map: Option<&Json>, keys: &[&str]) -> Json {
    let mut out = Map::new();
    if let Some(m) = map.and_then(Json::as_object) {
        for k in keys {
            if let Some(v) = m.get(*k) {
                out.insert(k.to_string(), v.clone());
            }
        }
    }
    Json::Object(out)
}

fn identity(o: &Json) -> Json {
    let mut meta = json!({"name": str_at(o, &["metadata", "name"])});
    let ns = str_at(o, &["metadata", "namespace"]);
    if !ns.is_empty() {
        meta["namespace"] = json!(ns);
    }
    json!({"apiVersion": str_at(o, &["apiVersion"]), "kind": str_at(o, &["kind"]), "metadata": meta})
}

/// A ResourceQuota as admission reads it: its limits, scopes and usage (`cluster::quota`).
pub fn resource_quota(o: &Json) -> Json {
    let mut out = identity(o);
    out["spec"] = pick(o.get("spec"), &["hard", "scopes", "scopeSelector"]);
    let status = pick(o.get("status"), &["hard", "used"]);
    if status.as_object().is_some_and(|m| !m.is_empty()) {
        out["status"] = status;
    }
    out
}

/// A LimitRange as its limits.
pub fn limit_range(o: &Json) -> Json {
    let mut out = identity(o);
    out["spec"] = pick(o.get("spec"), &["limits"]);
    out
}

/// A LocalQueue as its name and ClusterQueue.
pub fn local_queue(o: &Json) -> Json {
    let mut out = identity(o);
    let cq = str_at(o, &["spec", "clusterQueue"]);
    if !cq.is_empty() {
        out["spec"] = json!({"clusterQueue": cq});
    }
    out
}

/// A legacy job without its spec (PyTorchJobs keep theirs, for `migrate --legacy`).
pub fn legacy_job(o: &mut Json) {
    if str_at(o, &["kind"]) == "PyTorchJob" {
        return;
    }
    if let Some(obj) = o.as_object_mut() {
        obj.remove("spec");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_and_limit_ranges_keep_what_admission_reads() {
        let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a", "uid": "u"},
            "spec": {"hard": {"count/configmaps": "10", "pods": "5"}, "scopes": ["NotTerminating"]},
            "status": {"hard": {"count/configmaps": "10", "pods": "5"}, "used": {"count/configmaps": "9", "pods": "1"}}});
        assert_eq!(
            resource_quota(&q),
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a"},
                "spec": {"hard": {"count/configmaps": "10", "pods": "5"}, "scopes": ["NotTerminating"]},
                "status": {"hard": {"count/configmaps": "10", "pods": "5"}, "used": {"count/configmaps": "9", "pods": "1"}}})
        );
        assert_eq!(resource_quota(&resource_quota(&q)), resource_quota(&q), "trimming twice changes nothing");
        let lr = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "a", "uid": "u"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}});
        assert_eq!(limit_range(&lr)["spec"], lr["spec"]);
        assert!(limit_range(&lr)["metadata"].get("uid").is_none());
    }

    #[test]
    fn legacy_jobs_lose_their_spec_but_pytorchjobs() {
        let mut tf = json!({"kind": "TFJob", "metadata": {"name": "t"}, "spec": {"tfReplicaSpecs": {}}});
        legacy_job(&mut tf);
        assert!(tf.get("spec").is_none());
        let pt = json!({"kind": "PyTorchJob", "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {}}});
        let mut kept = pt.clone();
        legacy_job(&mut kept);
        assert_eq!(kept, pt);
    }
}
