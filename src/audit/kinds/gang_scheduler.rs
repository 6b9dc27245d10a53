//! `gang-scheduler`: runtimes whose `podGroupPolicy` asks for a gang scheduler that is not
//! installed — coscheduling needs scheduler-plugins' `podgroups.scheduling.x-k8s.io`, Volcano
//! `podgroups.scheduling.volcano.sh`. Trainer checks for the PodGroup CRD once, when its
//! controller starts, and skips the plugin's watches when it is missing; and it sets no
//! `schedulerName`, so a scheduler running the plugin must be there too. Runtimes are the target
//! render's and the cluster's own. A hit when the CRD is missing; variant `no-scheduler` when
//! the CRD is there but no Deployment of the scheduler was found.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::neighbours;
use crate::objects::str_at;

/// `podGroupPolicy` key → (component id, PodGroup CRD).
pub const SCHEDULERS: &[(&str, &str, &str)] = &[
    ("coscheduling", neighbours::SCHEDULER_PLUGINS, "podgroups.scheduling.x-k8s.io"),
    ("volcano", neighbours::VOLCANO, "podgroups.scheduling.volcano.sh"),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut seen = BTreeSet::new();
        let mut runtimes: Vec<(String, &Json, &str)> = Vec::new();
        for r in &input.target.runtimes {
            let id = format!("{}/{}{}", r.kind, if r.namespace.is_empty() { String::new() } else { format!("{}/", r.namespace) }, r.name);
            if seen.insert(id.clone()) {
                runtimes.push((id, &r.body, "target chart"));
            }
        }
        for r in input.state.runtimes() {
            let ns = str_at(r, &["metadata", "namespace"]);
            let id = format!(
                "{}/{}{}",
                str_at(r, &["kind"]),
                if ns.is_empty() { String::new() } else { format!("{ns}/") },
                str_at(r, &["metadata", "name"])
            );
            if seen.insert(id.clone()) {
                runtimes.push((id, r, "cluster"));
            }
        }
        let mut hits = Vec::new();
        for (id, body, from) in runtimes {
            for (policy, component, crd) in SCHEDULERS {
                if body.pointer(&format!("/spec/podGroupPolicy/{policy}")).is_none() {
                    continue;
                }
                let installed = neighbours::find(input.state, component);
                let has_crd = input.state.crd(crd).is_some();
                let has_scheduler = installed.evidence.iter().any(|e| e.starts_with("Deployment "));
                let base = |message: String| {
                    let mut h = Hit::new(id.clone(), message)
                        .var("runtime", id.clone())
                        .var("policy", *policy)
                        .var("crd", *crd)
                        .var("scheduler", installed.component.clone())
                        .evidence(format!("{id} (from the {from}) sets spec.podGroupPolicy.{policy}"));
                    h.evidence.extend(installed.evidence.iter().cloned());
                    h
                };
                if !has_crd {
                    hits.push(base(format!(
                        "{id} asks for {policy} gang scheduling, but the CRD {crd} ({}) is not installed",
                        installed.component
                    )));
                } else if !has_scheduler {
                    hits.push(
                        base(format!(
                            "{id} asks for {policy} gang scheduling; {crd} is installed but no {} scheduler Deployment was found",
                            installed.component
                        ))
                        .variant("no-scheduler"),
                    );
                }
            }
        }
        hits
    }
}
