//! `configmap-quota`: from 2.3 the controller keeps one `<trainjob>-runtime-snapshot` ConfigMap
//! per TrainJob it reconciles, in the TrainJob's namespace, and a snapshot that cannot be created
//! fails the TrainJob's reconcile. It skips a TrainJob managed by an external controller
//! (`spec.managedBy` other than its own) and builds no objects for a finished one (Complete or
//! Failed): kubeflow/trainer@v2.3.0 pkg/controller/trainjob_controller.go#L89-L107. Upgrading
//! from before 2.3 adds one ConfigMap per TrainJob that gets a snapshot; a namespace whose
//! `count/configmaps` quota (ResourceQuotas are kept as their ConfigMap limits, `cluster::trim`)
//! cannot hold them gets a hit.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::trim::{count, CONFIGMAP_QUOTA_KEYS};
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        // Which TrainJobs get a snapshot: `input::trainjobs::gets_snapshot`, in the one pass.
        let per_ns = &input.trainjob_facts().snapshots;
        let mut hits = Vec::new();
        for quota in input.state.of_kind("ResourceQuota") {
            let ns = str_at(quota, &["metadata", "namespace"]);
            let Some(&jobs) = per_ns.get(ns) else { continue };
            for key in CONFIGMAP_QUOTA_KEYS {
                let Some(hard) = quota.pointer(&format!("/spec/hard/{}", key.replace('/', "~1"))).and_then(count) else { continue };
                let used = quota.pointer(&format!("/status/used/{}", key.replace('/', "~1"))).and_then(count).unwrap_or(0);
                let needed = used.saturating_add(jobs as u64);
                if needed > hard {
                    let name = str_at(quota, &["metadata", "name"]);
                    hits.push(
                        Hit::new(
                            format!("ResourceQuota/{ns}/{name}"),
                            format!(
                                "{ns} has {} that {} a snapshot (neither finished nor managed by another controller) and {used} of {hard} ConfigMaps used ({key}): the {} the target creates {} {needed}",
                                super::counted(jobs, "TrainJob"),
                                super::agree(jobs, "gets", "get"),
                                super::counted(jobs, "runtime-snapshot ConfigMap"),
                                super::agree(jobs, "needs", "need")
                            ),
                        )
                        .var("quota", name)
                        .var("namespace", ns)
                        .var("needed", needed.to_string())
                        // A merge patch of this quota's own key: the fix runs unattended.
                        .var("patch", serde_json::json!({"spec": {"hard": {*key: needed.to_string()}}}).to_string())
                        .evidence(format!("ResourceQuota {ns}/{name}: {key} hard {hard}, used {used}")),
                    );
                }
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use crate::audit::input::trainjobs::{gets_snapshot, OWN_CONTROLLER};
    use serde_json::json;

    #[test]
    fn only_trainjobs_the_controller_reconciles_get_a_snapshot() {
        assert!(gets_snapshot(&json!({"spec": {}})));
        assert!(gets_snapshot(&json!({"spec": {"managedBy": OWN_CONTROLLER}})));
        assert!(!gets_snapshot(&json!({"spec": {"managedBy": "kueue.x-k8s.io/multikueue"}})));
        let done = |t: &str, s: &str| json!({"spec": {}, "status": {"conditions": [{"type": t, "status": s}]}});
        assert!(!gets_snapshot(&done("Complete", "True")) && !gets_snapshot(&done("Failed", "True")));
        assert!(gets_snapshot(&done("Complete", "False")) && gets_snapshot(&done("Suspended", "True")));
    }
}
