//! `configmap-quota`: from 2.3 the controller keeps one `<trainjob>-runtime-snapshot` ConfigMap
//! per TrainJob it reconciles, in the TrainJob's namespace, and a snapshot that cannot be created
//! fails the TrainJob's reconcile. Which TrainJobs get one is `cluster::legacy::no_runtime_snapshot`:
//! all but those managed by another controller, `Complete` ones and those that failed on their
//! deadline — a TrainJob `Failed` for any other reason is reconciled again, and snapshotted.
//! Upgrading from before 2.3 adds those ConfigMaps; a namespace whose ConfigMap quota
//! (`count/configmaps` or `configmaps`, unscoped: a scoped quota counts only Pods,
//! `cluster::quota`) cannot hold them gets a hit.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::legacy::no_runtime_snapshot;
use crate::cluster::quota::{Quota, NANO_PER_UNIT};
use crate::cluster::trim::CONFIGMAP_QUOTA_KEYS;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// The TrainJobs of one namespace that get a snapshot, and how many of them are Failed.
#[derive(Default)]
struct Snapshotted<'a> {
    names: Vec<&'a str>,
    failed: usize,
    /// TrainJobs left out, by why.
    left_out: BTreeMap<&'static str, usize>,
}

fn failed(tj: &Json) -> bool {
    tj.pointer("/status/conditions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .any(|c| str_at(c, &["type"]) == "Failed" && str_at(c, &["status"]) == "True")
}

/// Per namespace, the TrainJobs that get a snapshot (in the state's order) and those left out:
/// tallied in shares on the pool's cores (50,000 TrainJobs were serial time), folded in order.
fn snapshotted<'a>(input: &CheckInput<'a>) -> BTreeMap<&'a str, Snapshotted<'a>> {
    let jobs: Vec<&'a Json> = input.state.trainjobs().collect();
    let shares = crate::par::map_chunks(&jobs, |share| {
        let mut per_ns: BTreeMap<&'a str, Snapshotted<'a>> = BTreeMap::new();
        for &tj in share {
            let entry = per_ns.entry(str_at(tj, &["metadata", "namespace"])).or_default();
            match no_runtime_snapshot(tj) {
                Some(why) => *entry.left_out.entry(why).or_default() += 1,
                None => {
                    entry.names.push(str_at(tj, &["metadata", "name"]));
                    entry.failed += usize::from(failed(tj));
                }
            }
        }
        per_ns
    });
    let mut per_ns: BTreeMap<&'a str, Snapshotted<'a>> = BTreeMap::new();
    for share in shares {
        for (ns, part) in share {
            let entry = per_ns.entry(ns).or_default();
            entry.names.extend(part.names);
            entry.failed += part.failed;
            for (why, n) in part.left_out {
                *entry.left_out.entry(why).or_default() += n;
            }
        }
    }
    per_ns
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let per_ns = snapshotted(input);
        let writes = super::namespace_quota::release_namespaces(input);
        let mut made: BTreeMap<&str, Vec<super::namespace_quota::Creation>> = BTreeMap::new();
        let mut hits = Vec::new();
        for object in input.state.of_kind("ResourceQuota") {
            let quota = Quota::read(object);
            let Some(jobs) = per_ns.get(quota.namespace).filter(|s| !s.names.is_empty()) else { continue };
            if !quota.matches_object() {
                continue;
            }
            let n = jobs.names.len();
            for key in CONFIGMAP_QUOTA_KEYS {
                let Some(&hard) = quota.hard.get(*key) else { continue };
                let (hard, used) = (hard / NANO_PER_UNIT, quota.used.get(*key).copied().unwrap_or(0) / NANO_PER_UNIT);
                if used.saturating_add(n as i128) <= hard {
                    continue;
                }
                // The release's own new ConfigMaps in this namespace need room too (TA-NS-001
                // leaves a key the snapshots overflow alone to this rule): the patch covers both.
                let release: Vec<&super::namespace_quota::Creation> = if writes.contains(quota.namespace) {
                    made.entry(quota.namespace).or_insert_with(|| super::namespace_quota::creations(input, quota.namespace));
                    made[quota.namespace].iter().filter(|c| !c.snapshot && c.charged(key) > 0).collect()
                } else {
                    Vec::new()
                };
                let more: i128 = release.iter().map(|c| c.charged(key) / NANO_PER_UNIT).sum();
                let needed = used.saturating_add(n as i128).saturating_add(more);
                let (ns, name) = (quota.namespace, quota.name);
                let failed = match jobs.failed {
                    0 => String::new(),
                    f => format!(
                        " ({f} of them Failed: the 2.3 controller reconciles a Failed TrainJob again, and snapshots it, unless it failed on its deadline)"
                    ),
                };
                let sample: Vec<&str> = jobs.names.iter().take(5).copied().collect();
                let mut hit = Hit::new(
                    format!("ResourceQuota/{ns}/{name}"),
                    format!(
                        "{ns} has {} that {} a runtime snapshot{failed} and {used} of {hard} ConfigMaps used ({key}): the {} the target creates {} {needed}",
                        super::counted(n, "TrainJob"),
                        super::agree(n, "gets", "get"),
                        super::counted(n, "runtime-snapshot ConfigMap"),
                        super::agree(n, "needs", "need")
                    ),
                )
                .var("quota", name)
                .var("namespace", ns)
                .var("key", *key)
                .var("needed", needed.to_string())
                // A merge patch of this quota's own key: the fix runs unattended.
                .var("patch", serde_json::json!({"spec": {"hard": {*key: needed.to_string()}}}).to_string())
                .evidence(format!("ResourceQuota {ns}/{name}: {key} hard {hard}, used {used}{}", if quota.synced { "" } else { " (no status yet: usage taken as 0)" }))
                .evidence(format!(
                    "snapshotted: {}{}",
                    sample.join(", "),
                    if n > sample.len() { format!(" and {} more", n - sample.len()) } else { String::new() }
                ));
                if !release.is_empty() {
                    hit = hit.evidence(format!(
                        "the upgrade also creates {more} in {ns} (TA-NS-001): {}",
                        release.iter().map(|c| c.what.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
                for (why, count) in &jobs.left_out {
                    hit = hit.evidence(format!("no snapshot ({why}): {}", super::counted(*count, "TrainJob")));
                }
                hits.push(if jobs.failed > 0 { hit.variant("failed") } else { hit });
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::legacy::no_runtime_snapshot;
    use serde_json::json;

    /// Every condition shape a TrainJob can have against what the 2.3 controller does
    /// (trainjob_controller.go L89-L107, L246-L252).
    #[test]
    fn the_2_3_controller_snapshots_all_but_complete_deadline_failed_and_external_trainjobs() {
        let with = |conditions: serde_json::Value| json!({"spec": {}, "status": {"conditions": conditions}});
        let cases = [
            (json!({"spec": {}}), None),
            (json!({"spec": {"managedBy": "trainer.kubeflow.org/trainjob-controller"}}), None),
            (json!({"spec": {"managedBy": "kueue.x-k8s.io/multikueue"}}), Some("managed by another controller")),
            (with(json!([{"type": "Complete", "status": "True"}])), Some("Complete")),
            (with(json!([{"type": "Complete", "status": "False"}])), None),
            (
                with(json!([{"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}])),
                Some("Failed on its deadline (DeadlineExceeded)"),
            ),
            (with(json!([{"type": "Failed", "status": "True", "reason": "JobsFailed"}])), None),
            (with(json!([{"type": "Failed", "status": "True"}])), None),
            (with(json!([{"type": "Failed", "status": "False", "reason": "DeadlineExceeded"}])), None),
            (with(json!([{"type": "Suspended", "status": "True"}])), None),
        ];
        for (tj, want) in cases {
            assert_eq!(no_runtime_snapshot(&tj), want, "{tj}");
        }
    }
}
