//! The trimmed forms of the objects kept for the neighbour and legacy checks, so a state (and a
//! snapshot) holds what they read and no more: Kueue LocalQueues as names, ResourceQuotas that
//! limit ConfigMaps as those limits, and Training Operator v1 jobs as their conditions — except
//! PyTorchJobs, whose spec `migrate --legacy` converts.

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

/// A TrainJob's or legacy job's status as normalisation keeps it: condition types and states.
pub static CONDITIONS: Shape =
    Shape::Only(&[("conditions", Shape::Each(&Shape::Only(&[("type", Shape::Whole), ("status", Shape::Whole)])))]);
/// Metadata with managedFields reduced to their managers.
pub static MANAGERS: Shape = Shape::Except(&[(
    "managedFields",
    Shape::Each(&Shape::Only(&[("manager", Shape::Whole), ("operation", Shape::Whole), ("apiVersion", Shape::Whole)])),
)]);

/// ResourceQuota keys that count ConfigMaps (the object-count quota and its short form).
pub const CONFIGMAP_QUOTA_KEYS: &[&str] = &["count/configmaps", "configmaps"];

/// Whether a ResourceQuota limits the number of ConfigMaps.
pub fn limits_configmaps(quota: &Json) -> bool {
    quota.pointer("/spec/hard").and_then(Json::as_object).is_some_and(|h| CONFIGMAP_QUOTA_KEYS.iter().any(|k| h.contains_key(*k)))
}

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

/// A ResourceQuota as its ConfigMap limit and usage.
pub fn resource_quota(o: &Json) -> Json {
    let mut out = identity(o);
    out["spec"] = json!({"hard": pick(o.pointer("/spec/hard"), CONFIGMAP_QUOTA_KEYS)});
    let (hard, used) = (pick(o.pointer("/status/hard"), CONFIGMAP_QUOTA_KEYS), pick(o.pointer("/status/used"), CONFIGMAP_QUOTA_KEYS));
    if hard.as_object().is_some_and(|m| !m.is_empty()) || used.as_object().is_some_and(|m| !m.is_empty()) {
        out["status"] = json!({"hard": hard, "used": used});
    }
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

/// A quantity as a count (`100`, `1k`); None for what a count quota cannot hold.
pub fn count(v: &Json) -> Option<u64> {
    let text = match v {
        Json::String(s) => s.trim().to_string(),
        Json::Number(n) => return n.as_u64(),
        _ => return None,
    };
    let (digits, factor) = match text.strip_suffix('k') {
        Some(d) => (d, 1_000),
        None => match text.strip_suffix('M') {
            Some(d) => (d, 1_000_000),
            None => (text.as_str(), 1),
        },
    };
    digits.parse::<u64>().ok().and_then(|n| n.checked_mul(factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_keep_only_their_configmap_counts() {
        let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a", "uid": "u"},
            "spec": {"hard": {"count/configmaps": "10", "pods": "5"}},
            "status": {"hard": {"count/configmaps": "10", "pods": "5"}, "used": {"count/configmaps": "9", "pods": "1"}}});
        assert!(limits_configmaps(&q));
        assert_eq!(
            resource_quota(&q),
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a"},
                "spec": {"hard": {"count/configmaps": "10"}}, "status": {"hard": {"count/configmaps": "10"}, "used": {"count/configmaps": "9"}}})
        );
        assert_eq!(resource_quota(&resource_quota(&q)), resource_quota(&q), "trimming twice changes nothing");
        assert!(!limits_configmaps(&json!({"spec": {"hard": {"pods": "5"}}})));
        assert_eq!(count(&json!("10")), Some(10));
        assert_eq!(count(&json!("2k")), Some(2000));
        assert_eq!(count(&json!(7)), Some(7));
        assert_eq!(count(&json!("1.5")), None);
        assert_eq!(count(&json!("99999999999999999999M")), None);
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
