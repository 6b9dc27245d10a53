//! `configmap-quota`: from 2.3 the controller keeps one `<trainjob>-runtime-snapshot` ConfigMap
//! per TrainJob, in the TrainJob's namespace, and a snapshot that cannot be created fails the
//! TrainJob's reconcile. Upgrading from before 2.3 adds one ConfigMap per existing TrainJob; a
//! namespace whose `count/configmaps` quota (ResourceQuotas are kept as their ConfigMap limits,
//! `cluster::trim`) cannot hold them gets a hit.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::trim::{count, CONFIGMAP_QUOTA_KEYS};
use crate::kube::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut per_ns: BTreeMap<&str, usize> = BTreeMap::new();
        for tj in input.state.trainjobs() {
            *per_ns.entry(str_at(tj, &["metadata", "namespace"])).or_default() += 1;
        }
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
                            format!("{ns} has {jobs} TrainJob(s) and {used} of {hard} ConfigMaps used ({key}): the {jobs} runtime-snapshot ConfigMaps the target creates need {needed}"),
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
