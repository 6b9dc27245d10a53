//! What the real controllers did in the stand-in's namespace, kept as [`Record`]s for the tests:
//! a Job finished (its `Complete` or `Failed` condition, or the job controller's Event saying so),
//! the job controller could not create a Pod (its `FailedCreate` Warning Event: `Error creating:
//! <the API server's answer>`), a
//! Deployment became available at its generation, or its ReplicaSet could not create Pods (the
//! Deployment's `ReplicaFailure` condition).

use std::collections::HashSet;
use std::sync::Mutex;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use kube::Api;

use super::{kube_err, push, Context, Record, StandInError};

/// What was recorded already, so each happening is recorded once.
#[derive(Debug, Default)]
pub struct Observer {
    /// (kind, UID, generation or reason).
    seen: HashSet<(&'static str, String, String)>,
}

impl Observer {
    fn first(&mut self, kind: &'static str, uid: &str, detail: &str) -> bool {
        self.seen.insert((kind, uid.to_string(), detail.to_string()))
    }

    pub async fn tick(&mut self, client: &kube::Client, context: &Context, records: &Mutex<Vec<Record>>) -> Result<(), StandInError> {
        // Jobs are also read from their Events: Helm deletes a succeeded hook Job at once, often
        // before the next poll sees its `Complete` condition; the job controller's `Completed`
        // Event (or the Warning carrying the failure reason) outlives it.
        let events: Api<Event> = Api::namespaced(client.clone(), &context.namespace);
        let params = ListParams::default().fields("involvedObject.kind=Job");
        for event in events.list(&params).await.map_err(|e| kube_err("listing the Jobs' Events", e))?.items {
            let job = event.involved_object.name.clone().unwrap_or_default();
            let uid = event.involved_object.uid.clone().unwrap_or_default();
            let text = event.message.clone().unwrap_or_default();
            match event.reason.as_deref().unwrap_or_default() {
                "FailedCreate" => {
                    let message = text.strip_prefix("Error creating: ").unwrap_or(&text).to_string();
                    // Each attempt names a new generated Pod; one record per reason.
                    let reason = message.split_once(" is forbidden: ").map_or(message.as_str(), |(_, r)| r).to_string();
                    if self.first("rejected", &uid, &reason) {
                        push(records, Record::PodRejected { job, message });
                    }
                }
                "Completed" if self.first("job", &uid, "") => push(records, Record::JobComplete { job }),
                reason @ ("BackoffLimitExceeded"
                | "DeadlineExceeded"
                | "PodFailurePolicy"
                | "MaxFailedIndexesExceeded"
                | "FailedIndexes")
                    if self.first("job", &uid, "") =>
                {
                    push(records, Record::JobFailed { job, reason: reason.to_string() })
                }
                _ => {}
            }
        }

        let jobs: Api<Job> = Api::namespaced(client.clone(), &context.namespace);
        for job in jobs.list(&ListParams::default()).await.map_err(|e| kube_err("listing Jobs", e))?.items {
            let name = job.metadata.name.clone().unwrap_or_default();
            let uid = job.metadata.uid.clone().unwrap_or_default();
            let conditions = job.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
            for c in conditions.iter().filter(|c| c.status == "True") {
                match c.type_.as_str() {
                    "Complete" if self.first("job", &uid, "") => push(records, Record::JobComplete { job: name.clone() }),
                    "Failed" if self.first("job", &uid, "") => {
                        push(records, Record::JobFailed { job: name.clone(), reason: c.reason.clone().unwrap_or_default() })
                    }
                    _ => {}
                }
            }
        }

        let deployments: Api<Deployment> = Api::namespaced(client.clone(), &context.namespace);
        for deployment in deployments.list(&ListParams::default()).await.map_err(|e| kube_err("listing Deployments", e))?.items {
            let name = deployment.metadata.name.clone().unwrap_or_default();
            let uid = deployment.metadata.uid.clone().unwrap_or_default();
            let generation = deployment.metadata.generation.unwrap_or(0);
            let replicas = deployment.spec.replicas.unwrap_or(1);
            let status = deployment.status.clone().unwrap_or_default();
            let conditions = status.conditions.clone().unwrap_or_default();
            let available = status.observed_generation == Some(generation)
                && status.replicas.unwrap_or(0) == replicas
                && status.updated_replicas.unwrap_or(0) == replicas
                && status.available_replicas.unwrap_or(0) == replicas
                && conditions.iter().any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"));
            if available && self.first("available", &uid, &generation.to_string()) {
                push(records, Record::DeploymentAvailable { name: name.clone(), generation });
            }
            if let Some(failure) =
                conditions.iter().find(|c| c.type_.as_deref() == Some("ReplicaFailure") && c.status.as_deref() == Some("True"))
            {
                if self.first("replica-failure", &uid, &generation.to_string()) {
                    push(records, Record::DeploymentPodRejected { name, message: failure.message.clone().unwrap_or_default() });
                }
            }
        }
        Ok(())
    }
}
