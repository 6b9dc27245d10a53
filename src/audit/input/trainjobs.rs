//! One pass over the live TrainJobs for every check kind that reads them (issue 33): the
//! facts each kind needs, gathered per TrainJob on the pool's cores (`crate::par`) and folded
//! into per-check tallies once, instead of one walk of 50,000 TrainJobs per kind. A kind that
//! needs something new from every TrainJob adds a field here (and a line to [`Facts::add`]),
//! not a loop of its own. The schema survey (`CheckInput::survey`) is the other per-object pass:
//! it validates the objects of every kind the target CRDs define.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::CheckInput;
use crate::objects::str_at;
use crate::webhook::{self, Refusal, Runtimes};

/// The label Kueue reads a TrainJob's LocalQueue from.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// What the kinds read from the live TrainJobs, gathered once per check.
#[derive(Debug, Default)]
pub struct TrainJobFacts {
    /// TrainJobs per runtime they name: (runtimeRef kind, runtimeRef name, namespace) → count.
    pub by_runtime: BTreeMap<(String, String, String), usize>,
    /// TrainJobs labelled for a Kueue queue: (namespace, queue) → their names, in the state's order.
    pub queued: BTreeMap<(String, String), Vec<String>>,
    /// TrainJobs the target's TrainJob webhook refuses, by their place in `state.trainjobs()`,
    /// in that order.
    pub refused: Vec<(usize, Vec<Refusal>)>,
}

/// One share's part, under keys borrowed from the objects (made owned once per key, at the fold).
#[derive(Default)]
struct Share<'a> {
    by_runtime: BTreeMap<(&'a str, &'a str, &'a str), usize>,
    queued: BTreeMap<(&'a str, &'a str), Vec<&'a str>>,
    refused: Vec<(usize, Vec<Refusal>)>,
}

impl<'a> Share<'a> {
    /// The part of the TrainJob at `index` of `state.trainjobs()`.
    fn add(&mut self, index: usize, tj: &'a Json, runtimes: &Runtimes) {
        let ns = str_at(tj, &["metadata", "namespace"]);
        let runtime = (str_at(tj, &["spec", "runtimeRef", "kind"]), str_at(tj, &["spec", "runtimeRef", "name"]), ns);
        *self.by_runtime.entry(runtime).or_default() += 1;
        let queue = str_at(tj, &["metadata", "labels", QUEUE_LABEL]);
        if !queue.is_empty() {
            self.queued.entry((ns, queue)).or_default().push(str_at(tj, &["metadata", "name"]));
        }
        let refusals = webhook::trainjob(tj, runtimes);
        if !refusals.is_empty() {
            self.refused.push((index, refusals));
        }
    }
}

impl TrainJobFacts {
    /// Folds the next share (shares come in the state's order).
    fn fold(&mut self, share: Share) {
        for ((kind, name, ns), n) in share.by_runtime {
            *self.by_runtime.entry((kind.to_string(), name.to_string(), ns.to_string())).or_default() += n;
        }
        for ((ns, queue), names) in share.queued {
            self.queued.entry((ns.to_string(), queue.to_string())).or_default().extend(names.into_iter().map(str::to_string));
        }
        self.refused.extend(share.refused);
    }

    /// TrainJobs naming the runtime `kind`/`name` (in `namespace` only, when given).
    pub fn using(&self, kind: &str, name: &str, namespace: Option<&str>) -> usize {
        self.by_runtime
            .iter()
            .filter(|((k, n, ns), _)| k == kind && n == name && namespace.is_none_or(|want| ns == want))
            .map(|(_, c)| c)
            .sum()
    }
}

impl<'a> CheckInput<'a> {
    /// The runtimes the target's TrainJob webhook finds a TrainJob's in after the upgrade: the
    /// target's built-in runtime of that name, else the live one.
    pub fn webhook_runtimes(&self) -> Runtimes<'a> {
        let (target, state): (&'a crate::inventory::Inventory, &'a crate::cluster::ClusterState) = (self.target, self.state);
        let mut known: Vec<&'a Json> = target.runtimes.iter().map(|r| &r.body).collect();
        known.extend(state.runtimes().filter(|o| !self.is_target_runtime(o)));
        Runtimes(known)
    }

    /// Whether a live runtime is one the target chart renders (same kind, namespace and name).
    pub fn is_target_runtime(&self, o: &Json) -> bool {
        self.target.runtimes.iter().any(|r| {
            r.kind == str_at(o, &["kind"])
                && r.name == str_at(o, &["metadata", "name"])
                && r.namespace == str_at(o, &["metadata", "namespace"])
        })
    }

    /// Every TrainJob's facts, gathered in one pass on first use.
    pub fn trainjob_facts(&self) -> &TrainJobFacts {
        self.derived.trainjobs.get_or_init(|| {
            let jobs: Vec<(usize, &Json)> = self.state.trainjobs().enumerate().collect();
            let runtimes = self.webhook_runtimes();
            let mut facts = TrainJobFacts::default();
            for share in crate::par::map_chunks(&jobs, |jobs| {
                let mut share = Share::default();
                for &(index, tj) in jobs {
                    share.add(index, tj, &runtimes);
                }
                share
            }) {
                facts.fold(share);
            }
            facts
        })
    }
}
