//! `kueue-queue`: TrainJobs labelled `kueue.x-k8s.io/queue-name` when Kueue is not installed (the
//! label does nothing, so the jobs run unqueued) or when their namespace has no LocalQueue of
//! that name (Kueue leaves the job suspended, its Workload inadmissible). One hit per namespace
//! and queue, counting the TrainJobs. LocalQueues are kept as names only (`cluster::trim`).

use std::collections::BTreeSet;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::trainjobs::QUEUE_LABEL;
use crate::audit::input::CheckInput;
use crate::cluster::neighbours;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let queued = &input.trainjob_facts().queued;
        if queued.is_empty() {
            return Vec::new();
        }
        let kueue = neighbours::find(input.state, neighbours::KUEUE);
        let queues: BTreeSet<(&str, &str)> =
            input.state.of_kind("LocalQueue").map(|q| (str_at(q, &["metadata", "namespace"]), str_at(q, &["metadata", "name"]))).collect();
        let mut hits = Vec::new();
        for ((ns, queue), jobs) in queued {
            let (ns, queue) = (ns.as_str(), queue.as_str());
            let all = jobs.join(", ");
            let base = |message: String| {
                Hit::new(format!("LocalQueue/{ns}/{queue}"), message)
                    .var("queue", queue)
                    .var("namespace", ns)
                    .evidence(format!("{} in {ns} labelled {QUEUE_LABEL}={queue}: {all}", super::counted(jobs.len(), "TrainJob")))
            };
            if !kueue.present {
                hits.push(base(format!(
                    "{} in {ns} {} Kueue queue {queue}, but Kueue is not installed: {} unqueued",
                    super::counted(jobs.len(), "TrainJob"),
                    super::agree(jobs.len(), "names", "name"),
                    super::agree(jobs.len(), "it runs", "they run")
                )));
            } else if !queues.contains(&(ns, queue)) {
                hits.push(
                    base(format!(
                        "{} in {ns} {} Kueue queue {queue}, which is not a LocalQueue in {ns}: Kueue keeps {} suspended",
                        super::counted(jobs.len(), "TrainJob"),
                        super::agree(jobs.len(), "names", "name"),
                        super::agree(jobs.len(), "it", "them")
                    ))
                    .variant("no-queue"),
                );
            }
        }
        hits
    }
}
