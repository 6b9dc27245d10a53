//! `webhook-admission`: live TrainJobs and user runtimes that the target's validating webhooks
//! would refuse, modelled by `webhook` (Trainer 2.3.0's webhooks). Once the target's
//! controller serves them, every update of such a TrainJob (a label, a finalizer, `suspend`) and
//! of such a ClusterTrainingRuntime is refused, and so is re-creating either from a backup. A
//! TrainJob's runtime is looked up as the webhook will find it after the upgrade: the target's
//! built-in runtime of that name, else the live one. Runtimes the webhooks skip (the bypass
//! label, TA-RT-004) are left out.

use serde::Deserialize;

use super::support::name_of;
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::webhook::{self, Operation, Refusal};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

fn hit(o: &serde_json::Value, refusals: &[Refusal]) -> Hit {
    let words: Vec<String> = refusals.iter().map(ToString::to_string).collect();
    let mut h = Hit::new(name_of(o), format!("{} would be refused by {}: {}", name_of(o), refusals[0].webhook, words.join("; ")));
    for w in words {
        h = h.evidence(w);
    }
    h
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for o in input.state.runtimes().filter(|o| !input.is_target_runtime(o)) {
            let refusals = webhook::runtime(o, Operation::Create);
            if !refusals.is_empty() {
                hits.push(hit(o, &refusals));
            }
        }
        // The TrainJobs' refusals come from the one pass over them (`input::trainjobs`).
        let trainjobs: Vec<&serde_json::Value> = input.state.trainjobs().collect();
        for (index, refusals) in &input.trainjob_facts().refused {
            hits.push(hit(trainjobs[*index], refusals));
        }
        hits
    }
}
