//! `volcano-priority-rbac`: runtimes with `podGroupPolicy.volcano` whose pod templates name a
//! PriorityClass, under a target chart whose rendered RBAC does not let the controller manager's
//! ServiceAccount list and watch `priorityclasses.scheduling.k8s.io`. The Volcano plugin of the
//! TrainJob webhook looks the class up through the manager's cached client, whose informer cannot
//! list them and never syncs: the lookup waits until the API server gives up on the webhook, and
//! every create or update of a TrainJob on such a runtime is refused after the timeout. The
//! prediction is `webhook::trainjob_call_fails`, which the webhook differential checks
//! against the real webhooks. Runtimes are the target render's and the cluster's own; grants are
//! the rendered ClusterRoles and Roles bound to the manager's ServiceAccount (a role applied
//! outside the release is not read).

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::inventory::rbac::{grants_for, manager_account, reads_priority_classes};
use crate::objects::{str_at, Object};
use crate::webhook;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let objects: Vec<&Object> = input.target.objects.iter().collect();
        let Some((namespace, account)) = manager_account(&objects) else { return Vec::new() };
        let grants = grants_for(&objects, &input.target.roles, &namespace, &account);
        if reads_priority_classes(&grants) {
            return Vec::new();
        }
        let mut seen = BTreeSet::new();
        let mut runtimes: Vec<(String, &str, String, &Json, &str)> = Vec::new();
        for r in &input.target.runtimes {
            runtimes.push((r.kind.clone(), r.namespace.as_str(), r.name.clone(), &r.body, "target chart"));
        }
        for r in input.state.runtimes() {
            let (kind, ns, name) = (str_at(r, &["kind"]), str_at(r, &["metadata", "namespace"]), str_at(r, &["metadata", "name"]));
            runtimes.push((kind.to_string(), ns, name.to_string(), r, "cluster"));
        }
        let mut hits = Vec::new();
        for (kind, ns, name, body, from) in runtimes {
            let id = if ns.is_empty() { format!("{kind}/{name}") } else { format!("{kind}/{ns}/{name}") };
            if !seen.insert(id.clone()) {
                continue;
            }
            let classes = webhook::priority_lookups(body);
            let Some(class) = classes.first() else { continue };
            let using = input.trainjob_facts().using(&kind, &name, (kind != "ClusterTrainingRuntime").then_some(ns));
            let jobs = match using {
                0 => String::new(),
                1 => "; 1 TrainJob uses it (its next update is refused too)".to_string(),
                n => format!("; {n} TrainJobs use it (their next updates are refused too)"),
            };
            let mut h = Hit::new(
                id.clone(),
                format!(
                    "{id} is gang-scheduled by Volcano and names PriorityClass {class}, which the {to} manager may not list: every new TrainJob on it is refused after the webhook's timeout{jobs}",
                    to = input.to
                ),
            )
            .var("runtime", id.clone())
            .var("priority_class", class.clone())
            .var("service_account", account.clone())
            .var("manager_namespace", namespace.clone())
            .evidence(format!("{id} (from the {from}) sets spec.podGroupPolicy.volcano and priorityClassName {}", classes.join(", ")))
            .evidence(format!(
                "the {} render binds ServiceAccount {namespace}/{account} to no rule granting list and watch on priorityclasses.scheduling.k8s.io",
                input.to
            ));
            if using > 0 {
                h = h.evidence(format!("TrainJobs on {id}: {using}"));
            }
            hits.push(h);
        }
        hits
    }
}
