//! `runtime-handoff`: runtimes that are release objects now and not in the target's release:
//! Helm deletes them during the upgrade (unless the live object has the keep annotation), and
//! what re-creates them, if anything. One in use (the finalizer, or TrainJobs naming it) is an
//! error: it stays Terminating, an apply while it is Terminating does not bring it back, and it
//! is gone once the new controller drops the finalizer.

use serde::Deserialize;
use serde_json::Value as Json;

use super::support::trainjobs_using;
use super::{Check, Hit};
use crate::audit::finding::Severity;
use crate::audit::input::CheckInput;
use crate::inventory::runtime::{Delivery, RUNTIME_KINDS};
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Runtimes that are release objects now and not in the target's release: Helm deletes them
/// during the upgrade (unless the live object has the keep annotation).
impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let owned: Vec<(String, String, String)> =
            input.release_objects().into_iter().filter(|(k, _, _)| RUNTIME_KINDS.contains(&k.as_str())).collect();
        let target_release: Vec<(&str, &str)> = input
            .target
            .runtimes
            .iter()
            .filter(|r| matches!(r.delivery, Delivery::ReleaseObject { .. }))
            .map(|r| (r.kind.as_str(), r.name.as_str()))
            .collect();
        let mut hits = Vec::new();
        for (kind, ns, name) in owned {
            if target_release.contains(&(kind.as_str(), name.as_str())) {
                continue;
            }
            // Gone already (an earlier upgrade that failed after its deletes, an interrupted
            // uninstall): Helm's delete finds nothing, and there is nothing to keep.
            let Some(live) = input.live(&kind, &ns, &name) else { continue };
            if str_at(live, &["metadata", "annotations", "helm.sh/resource-policy"]).contains("keep") {
                continue;
            }
            // Already being deleted: Helm's delete changes nothing, and what becomes of it is the
            // finalizer's story (TA-RT-002), not this upgrade's.
            if live.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null()) {
                continue;
            }
            let live = Some(live);
            let after = input.target.runtimes.iter().find(|r| r.kind == kind && r.name == name).map(|r| r.delivery.describe());
            let users = trainjobs_using(input, &kind, &name);
            let finalizers: Vec<&str> = live
                .and_then(|o| o.pointer("/metadata/finalizers"))
                .and_then(Json::as_array)
                .map(|f| f.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default();
            let in_use = users > 0 || !finalizers.is_empty();
            let mut hit = Hit::new(
                format!("{kind}/{name}"),
                format!(
                    "{kind}/{name} is a release object now; {} no longer renders it as one, so Helm deletes it during the upgrade{}{}",
                    input.to,
                    match &after {
                        Some(d) => format!(" and the target re-creates it via {d}"),
                        None => " and nothing re-creates it".into(),
                    },
                    match (finalizers.is_empty(), users) {
                        (false, _) => format!(
                            ". It carries {} ({} {} it), so the delete leaves it Terminating: an apply that lands meanwhile does not bring it back, and once the finalizer is removed it is gone; TrainJobs naming it then fail",
                            finalizers.join(", "),
                            super::counted(users, "TrainJob"),
                            super::agree(users, "uses", "use")
                        ),
                        (true, 0) => String::new(),
                        (true, n) => format!(". {} {} it and {} it until it is re-created", super::counted(n, "TrainJob"), super::agree(n, "uses", "use"), super::agree(n, "loses", "lose")),
                    }
                ),
            );
            if in_use {
                hit.severity = Some(Severity::Error);
            }
            if after.is_none() {
                hit = hit.variant("not-recreated");
            }
            hits.push(
                hit.evidence(format!("in the current release manifest; target delivery: {}", after.as_deref().unwrap_or("none")))
                    .var("kind", kind.to_ascii_lowercase())
                    .var("name", name.clone())
                    .var("object_namespace", ns.clone()),
            );
        }
        hits
    }
}
