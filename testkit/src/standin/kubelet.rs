//! The scheduler's and kubelet's part of the stand-in, for the Pods of one namespace that the
//! real controllers (kube-controller-manager's job and ReplicaSet controllers) create: bind each
//! unbound Pod to the stand-in node, run a Pod that runs to completion in the sandbox
//! ([`pod::run`]), report a long-running one started and ready ([`pod::serve`]), and finish the
//! deletion of a Pod that is being deleted (what a kubelet does once its containers are stopped:
//! delete with grace period 0).

use std::collections::HashSet;
use std::sync::Mutex;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams};
use kube::Api;

use super::{controller, kube_err, pod, push, Context, Record, StandInError, NODE_NAME};

/// Per-Pod state across polls, keyed by Pod UID.
#[derive(Debug, Default)]
pub struct Kubelet {
    /// Pods started (or run to their end) already.
    started: HashSet<String>,
    /// Pods whose deletion was completed already (they may linger while a finalizer is on them).
    deleted: HashSet<String>,
    /// Pods left Pending, with the reason already recorded.
    pending: HashSet<(String, String)>,
    /// Controller processes run for their Pods (webhooks on).
    controllers: controller::Controllers,
}

/// The Job owning a Pod, else the Pod's own name: what the records name.
fn owner_job(pod: &Pod, name: &str) -> String {
    pod.metadata.owner_references.iter().flatten().find(|o| o.kind == "Job").map(|o| o.name.clone()).unwrap_or_else(|| name.to_string())
}

impl Kubelet {
    pub async fn tick(&mut self, client: &kube::Client, context: &Context, records: &Mutex<Vec<Record>>) -> Result<(), StandInError> {
        let api: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
        let list = api.list(&ListParams::default()).await.map_err(|e| kube_err("listing Pods", e))?;
        for pod in list.items {
            let (Some(name), Some(uid)) = (pod.metadata.name.clone(), pod.metadata.uid.clone()) else { continue };
            let spec = pod.spec.clone().unwrap_or_default();
            let node = spec.node_name.clone().filter(|n| !n.is_empty());
            if node.as_deref().is_some_and(|n| n != NODE_NAME) {
                continue;
            }
            if pod.metadata.deletion_timestamp.is_some() {
                if self.deleted.insert(uid.clone()) {
                    self.controllers.stop(&uid, records);
                    match api.delete(&name, &DeleteParams { grace_period_seconds: Some(0), ..Default::default() }).await {
                        Ok(_) => {}
                        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => {}
                        Err(e) => return Err(kube_err(&format!("completing the deletion of Pod {name}"), e)),
                    }
                }
                continue;
            }
            if self.started.contains(&uid) {
                continue;
            }
            let phase = pod.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
            if phase == "Succeeded" || phase == "Failed" {
                self.started.insert(uid);
                continue;
            }
            if node.is_none() {
                bind(&api, &name).await?;
            }
            let job = owner_job(&pod, &name);
            let runs_to_completion = spec.restart_policy.as_deref().is_some_and(|p| p != "Always");
            if runs_to_completion {
                self.started.insert(uid);
                if let pod::Outcome::Stuck(reason) = pod::run(client, context, records, &job, &pod).await? {
                    push(records, Record::PodStuck { job, pod: name, reason });
                }
            } else if let Some((container, binary)) = controller::runnable(context, &pod) {
                match self.controllers.start(client, context, records, &pod, &container, &binary).await? {
                    None => {
                        self.started.insert(uid);
                    }
                    Some(reason) => {
                        if self.pending.insert((uid, reason.clone())) {
                            push(records, Record::PodStuck { job, pod: name, reason });
                        }
                    }
                }
            } else {
                match pod::serve(client, context, &pod).await? {
                    None => {
                        self.started.insert(uid);
                    }
                    // Left Pending; asked again on the next poll (the Secret may be created).
                    Some(reason) => {
                        if self.pending.insert((uid, reason.clone())) {
                            push(records, Record::PodStuck { job, pod: name, reason });
                        }
                    }
                }
            }
        }
        self.controllers.tick(client, context, records).await
    }
}

/// The scheduler's binding of a Pod to the stand-in node.
async fn bind(api: &Api<Pod>, name: &str) -> Result<(), StandInError> {
    let binding = serde_json::json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": NODE_NAME}});
    match api.create_subresource::<_, serde_json::Value>("binding", name, &super::as_scheduler_post(), &binding).await {
        Ok(_) => Ok(()),
        // Deleted meanwhile, or bound by an earlier poll whose list was stale.
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(kube_err(&format!("binding Pod {name}"), e)),
    }
}
