//! The deployment (and ReplicaSet) controller part of the stand-in: admission asked about each
//! Deployment's Pod template by a dry-run Pod create, then the Deployment status the controllers
//! would write (see the module doc of `standin`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, Patch, PostParams};
use kube::Api;

use super::{as_controller_patch, kube_err, now, push, Context, Record, StandInError, CONTROLLER_MANAGER};

/// How often a refused template is offered to admission again (the ReplicaSet controller keeps
/// retrying; a namespace label may have changed meanwhile).
const RETRY: Duration = Duration::from_secs(2);

/// Refused Deployments, keyed by UID and generation, with when to ask again.
#[derive(Debug, Default)]
pub struct Deployments {
    refused: HashMap<(String, i64), Instant>,
}

impl Deployments {
    pub async fn tick(&mut self, client: &kube::Client, context: &Context, records: &Mutex<Vec<Record>>) -> Result<(), StandInError> {
        let api: Api<Deployment> = Api::namespaced(client.clone(), &context.namespace);
        let list = api.list(&ListParams::default()).await.map_err(|e| kube_err("listing Deployments", e))?;
        for deployment in list.items {
            let name = deployment.metadata.name.clone().unwrap_or_default();
            let uid = deployment.metadata.uid.clone().unwrap_or_default();
            let generation = deployment.metadata.generation.unwrap_or(0);
            let replicas = deployment.spec.replicas.unwrap_or(1);
            let status = deployment.status.clone().unwrap_or_default();
            let done = status.observed_generation == Some(generation)
                && status.replicas.unwrap_or(0) == replicas
                && status.updated_replicas.unwrap_or(0) == replicas
                && status.available_replicas.unwrap_or(0) == replicas;
            if deployment.metadata.deletion_timestamp.is_some() {
                orphan(&api, &deployment, &name).await?;
                continue;
            }
            if done {
                continue;
            }
            let key = (uid, generation);
            if self.refused.get(&key).is_some_and(|next| Instant::now() < *next) {
                continue;
            }
            let now = now();
            let patch = match admit(client, context, &deployment, &name).await? {
                None => {
                    self.refused.remove(&key);
                    push(records, Record::DeploymentAvailable { name: name.clone(), generation });
                    serde_json::json!({"status": {
                        "observedGeneration": generation,
                        "replicas": replicas,
                        "updatedReplicas": replicas,
                        "readyReplicas": replicas,
                        "availableReplicas": replicas,
                        "unavailableReplicas": 0,
                        "conditions": [
                            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                             "message": "Deployment has minimum availability.", "lastUpdateTime": now, "lastTransitionTime": now},
                            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                             "message": format!("ReplicaSet \"{name}\" has successfully progressed."), "lastUpdateTime": now, "lastTransitionTime": now},
                        ],
                    }})
                }
                Some(message) => {
                    if !self.refused.contains_key(&key) {
                        push(records, Record::DeploymentPodRejected { name: name.clone(), message: message.clone() });
                    }
                    self.refused.insert(key, Instant::now() + RETRY);
                    serde_json::json!({"status": {
                        "observedGeneration": generation,
                        "replicas": 0,
                        "updatedReplicas": 0,
                        "readyReplicas": 0,
                        "availableReplicas": 0,
                        "unavailableReplicas": replicas,
                        "conditions": [
                            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                             "message": "Deployment does not have minimum availability.", "lastUpdateTime": now, "lastTransitionTime": now},
                            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                             "message": message, "lastUpdateTime": now, "lastTransitionTime": now},
                            {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                             "message": format!("ReplicaSet \"{name}\" is progressing."), "lastUpdateTime": now, "lastTransitionTime": now},
                        ],
                    }})
                }
            };
            api.patch_status(&name, &as_controller_patch(), &Patch::Merge(&patch))
                .await
                .map_err(|e| kube_err(&format!("writing Deployment {name} status"), e))?;
        }
        Ok(())
    }
}

/// The garbage collector's part of `kubectl delete --cascade=orphan` (propagationPolicy
/// Orphan): the API server parks the Deployment with the `orphan` finalizer; the collector
/// strips its dependents' owner references (the stand-in makes no ReplicaSets, so there are
/// none) and removes the finalizer, and the delete completes.
async fn orphan(api: &Api<Deployment>, deployment: &Deployment, name: &str) -> Result<(), StandInError> {
    let finalizers = deployment.metadata.finalizers.clone().unwrap_or_default();
    if !finalizers.iter().any(|f| f == "orphan") {
        return Ok(());
    }
    let rest: Vec<&String> = finalizers.iter().filter(|f| *f != "orphan").collect();
    let patch = serde_json::json!({"metadata": {"finalizers": rest, "resourceVersion": deployment.metadata.resource_version}});
    match api.patch(name, &as_controller_patch(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        // Gone or changed meanwhile: the next tick sees the current object.
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(kube_err(&format!("removing the orphan finalizer of Deployment {name}"), e)),
    }
}

/// Offers the Deployment's Pod template to admission with a dry-run create: `None` when admitted,
/// the API server's message when refused.
async fn admit(client: &kube::Client, context: &Context, deployment: &Deployment, name: &str) -> Result<Option<String>, StandInError> {
    let template = deployment.spec.template.clone();
    let meta = template.metadata.unwrap_or_default();
    let pod = Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: Some(context.namespace.clone()),
            labels: meta.labels,
            annotations: meta.annotations,
            ..Default::default()
        },
        spec: template.spec,
        status: None,
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
    let params = PostParams { dry_run: true, field_manager: Some(CONTROLLER_MANAGER.into()) };
    match pods.create(&params, &pod).await {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status)) => Ok(Some(status.message.clone())),
        Err(e) => Err(kube_err(&format!("dry-run Pod for Deployment {name}"), e)),
    }
}
