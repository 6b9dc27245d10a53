//! The job-controller part of the stand-in: Pod creation from a Job's template, the
//! `FailedCreate` path when admission refuses it, and the Job status transitions the API server
//! accepts (see the module doc of `standin`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{ListParams, Patch};
use kube::Api;

use super::{kube_err, now, pod, push, Context, Record, StandInError};

/// Retry delays after a refused Pod creation: the job controller requeues with an exponential
/// rate limiter; these keep the same shape at test speed.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(15);

#[derive(Debug, Default)]
struct Track {
    next_attempt: Option<Instant>,
    delay: Duration,
    last_rejection: String,
    event_count: i32,
    /// A Pod that a node could not start: leave the Job alone, as it would be on a cluster.
    stuck: bool,
}

/// Per-Job state across polls, keyed by Job UID (a re-created hook Job is a new Job).
#[derive(Debug, Default)]
pub struct Jobs {
    tracks: HashMap<String, Track>,
}

fn condition_true(job: &Job, kind: &str) -> bool {
    job.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|cs| cs.iter().any(|c| c.type_ == kind && c.status == "True"))
}

impl Jobs {
    pub async fn tick(&mut self, client: &kube::Client, context: &Context, records: &Mutex<Vec<Record>>) -> Result<(), StandInError> {
        let api: Api<Job> = Api::namespaced(client.clone(), &context.namespace);
        let list = api.list(&ListParams::default()).await.map_err(|e| kube_err("listing Jobs", e))?;
        for job in list.items {
            let (Some(name), Some(uid)) = (job.metadata.name.clone(), job.metadata.uid.clone()) else { continue };
            if condition_true(&job, "Complete") || condition_true(&job, "Failed") || job.metadata.deletion_timestamp.is_some() {
                continue;
            }
            if job.spec.as_ref().and_then(|s| s.suspend).unwrap_or(false) {
                continue;
            }
            let track = self.tracks.entry(uid.clone()).or_default();
            if track.stuck || track.next_attempt.is_some_and(|t| Instant::now() < t) {
                continue;
            }
            if job.status.as_ref().and_then(|s| s.start_time.as_ref()).is_none() {
                let patch = serde_json::json!({"status": {"startTime": now(), "active": 0, "ready": 0, "terminating": 0}});
                api.patch_status(&name, &super::as_controller_patch(), &Patch::Merge(&patch))
                    .await
                    .map_err(|e| kube_err(&format!("starting Job {name}"), e))?;
            }
            run_job(client, context, records, &api, &job, &name, &uid, track).await?;
        }
        Ok(())
    }
}

fn pod_for(job: &Job, name: &str, uid: &str, namespace: &str) -> Pod {
    let spec = job.spec.clone().unwrap_or_default();
    let meta = spec.template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: Some(namespace.to_string()),
            labels: meta.labels,
            annotations: meta.annotations,
            // The job controller also adds the `batch.kubernetes.io/job-tracking` finalizer; without
            // a controller to remove it, such Pods could never be deleted, so it is left out.
            owner_references: Some(vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name: name.to_string(),
                uid: uid.to_string(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: spec.template.spec,
        status: None,
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_job(
    client: &kube::Client,
    context: &Context,
    records: &Mutex<Vec<Record>>,
    api: &Api<Job>,
    job: &Job,
    name: &str,
    uid: &str,
    track: &mut Track,
) -> Result<(), StandInError> {
    let spec = job.spec.clone().unwrap_or_default();
    let backoff_limit = spec.backoff_limit.unwrap_or(6);
    let completions = spec.completions.unwrap_or(1);
    let status = job.status.clone().unwrap_or_default();
    let (mut succeeded, mut failed) = (status.succeeded.unwrap_or(0), status.failed.unwrap_or(0));
    let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
    while succeeded < completions && failed <= backoff_limit {
        let created = match pods.create(&super::as_controller_post(), &pod_for(job, name, uid, &context.namespace)).await {
            Ok(pod) => pod,
            Err(kube::Error::Api(status)) => {
                let message = status.message.clone();
                // Each attempt names a new generated Pod; record a rejection once per reason.
                let reason = message.split_once(" is forbidden: ").map_or(message.as_str(), |(_, r)| r).to_string();
                if reason != track.last_rejection {
                    push(records, Record::PodRejected { job: name.to_string(), message: message.clone() });
                    track.last_rejection = reason;
                }
                track.event_count += 1;
                failed_create_event(client, context, name, uid, &message, track.event_count).await?;
                track.delay = if track.delay.is_zero() { FIRST_RETRY } else { (track.delay * 2).min(MAX_RETRY) };
                track.next_attempt = Some(Instant::now() + track.delay);
                return Ok(());
            }
            Err(e) => return Err(kube_err(&format!("creating a Pod for Job {name}"), e)),
        };
        track.delay = Duration::ZERO;
        let pod_name = created.metadata.name.clone().unwrap_or_default();
        let patch = serde_json::json!({"status": {"active": 1, "ready": 0}});
        api.patch_status(name, &super::as_controller_patch(), &Patch::Merge(&patch))
            .await
            .map_err(|e| kube_err(&format!("Job {name} active"), e))?;
        match pod::run(client, context, records, name, &created).await? {
            pod::Outcome::Stuck(reason) => {
                push(records, Record::PodStuck { job: name.to_string(), pod: pod_name, reason });
                track.stuck = true;
                return Ok(());
            }
            pod::Outcome::Succeeded => succeeded += 1,
            pod::Outcome::Failed => failed += 1,
        }
        let patch = serde_json::json!({"status": {"active": 0, "ready": 0, "succeeded": succeeded, "failed": failed}});
        api.patch_status(name, &super::as_controller_patch(), &Patch::Merge(&patch))
            .await
            .map_err(|e| kube_err(&format!("Job {name} counts"), e))?;
    }
    let now = now();
    let (conditions, record, extra) = if succeeded >= completions {
        let reason = "CompletionsReached";
        let message = "Reached expected number of succeeded pods";
        (
            serde_json::json!([
                {"type": "SuccessCriteriaMet", "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
            ]),
            Record::JobComplete { job: name.to_string() },
            serde_json::json!({"completionTime": now}),
        )
    } else {
        let reason = "BackoffLimitExceeded";
        let message = "Job has reached the specified backoff limit";
        (
            serde_json::json!([
                {"type": "FailureTarget", "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
                {"type": "Failed", "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
            ]),
            Record::JobFailed { job: name.to_string(), reason: reason.into() },
            serde_json::json!({}),
        )
    };
    let mut status = serde_json::json!({"active": 0, "ready": 0, "terminating": 0, "conditions": conditions});
    if let (Some(status), Some(extra)) = (status.as_object_mut(), extra.as_object()) {
        status.extend(extra.clone());
    }
    api.patch_status(name, &super::as_controller_patch(), &Patch::Merge(&serde_json::json!({"status": status})))
        .await
        .map_err(|e| kube_err(&format!("finishing Job {name}"), e))?;
    push(records, record);
    Ok(())
}

/// The Warning Event the job controller records when it cannot create a Pod.
async fn failed_create_event(
    client: &kube::Client,
    context: &Context,
    job: &str,
    uid: &str,
    message: &str,
    count: i32,
) -> Result<(), StandInError> {
    let events: Api<Event> = Api::namespaced(client.clone(), &context.namespace);
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    let event = Event {
        metadata: ObjectMeta { generate_name: Some(format!("{job}.")), namespace: Some(context.namespace.clone()), ..Default::default() },
        involved_object: ObjectReference {
            api_version: Some("batch/v1".into()),
            kind: Some("Job".into()),
            name: Some(job.to_string()),
            namespace: Some(context.namespace.clone()),
            uid: Some(uid.to_string()),
            ..Default::default()
        },
        reason: Some("FailedCreate".into()),
        message: Some(format!("Error creating: {message}")),
        type_: Some("Warning".into()),
        count: Some(count),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        source: Some(k8s_openapi::api::core::v1::EventSource { component: Some("job-controller".into()), host: None }),
        reporting_component: Some("job-controller".into()),
        ..Default::default()
    };
    events.create(&super::as_controller_post(), &event).await.map_err(|e| kube_err(&format!("recording FailedCreate for Job {job}"), e))?;
    Ok(())
}
