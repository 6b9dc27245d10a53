//! `hook-prunes-live`: live runtimes that an upgrade hook of the target deletes. A hook whose
//! script loops over `kubectl get <kind> -l <selector>` and deletes what is not in its own
//! manifest (2.3's runtimes installer) removes every live object carrying that selection that
//! the manifest does not hold — including a runtime the user made by copying a built-in one,
//! labels and all: the upgrade deletes a runtime the user still uses, and nothing in Helm's
//! output says so.

use serde::Deserialize;

use super::support::{lines_matching, name_of, pattern};
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::inventory::hook::HookInfo;
use crate::inventory::runtime::Delivery;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Hook events that run during `helm upgrade` (and `upgrade --install` of a missing release).
const UPGRADE_EVENTS: &[&str] = &["pre-install", "post-install", "pre-upgrade", "post-upgrade"];

/// `(kind word, selector)` of each prune loop: `for r in $(kubectl get clustertrainingruntime -l a=b -o name)`.
fn prune_loops(hook: &HookInfo) -> Vec<(String, String)> {
    let script = hook.script();
    if lines_matching(&script, pattern!(r"\bkubectl\b.*\bdelete\b")).is_empty() {
        return Vec::new();
    }
    lines_matching(&script, pattern!(r"^for\b.*\bkubectl\b.*\bget\b"))
        .iter()
        .filter_map(|line| {
            let c = pattern!(r"\bget\s+([a-z0-9.]+)\s+(?:.*\s)?(?:-l|--selector)[= ]?\s*([^\s)]+)").captures(line)?;
            Some((c[1].to_string(), c[2].trim_matches(['"', '\'']).to_string()))
        })
        .collect()
}

/// `kubectl get` accepts the kind, its plural or either with the group: `clustertrainingruntime`,
/// `clustertrainingruntimes.trainer.kubeflow.org`.
fn names_kind(word: &str, kind: &str) -> bool {
    let short = word.split('.').next().unwrap_or(word);
    let kind = kind.to_lowercase();
    short == kind || short == format!("{kind}s")
}

/// Equality selectors (`a=b`, `a==b`, `a`), comma-joined; anything else matches nothing (we do
/// not guess).
fn selects(selector: &str, labels: &serde_json::Value) -> bool {
    selector.split(',').all(|term| {
        let term = term.trim();
        if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            !k.ends_with('!') && labels.get(k.trim()).and_then(|l| l.as_str()) == Some(v.trim())
        } else {
            pattern!(r"^[A-Za-z0-9./_-]+$").is_match(term) && labels.get(term).is_some()
        }
    })
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for hook in input.target.hooks.iter().filter(|h| h.events.iter().any(|e| UPGRADE_EVENTS.contains(&e.as_str()))) {
            let applied: Vec<(&str, &str)> = input
                .target
                .runtimes
                .iter()
                .filter(|r| matches!(&r.delivery, Delivery::ConfigMap { applied_by, .. } if applied_by.contains(&hook.identity.name)))
                .map(|r| (r.kind.as_str(), r.name.as_str()))
                .collect();
            for (word, selector) in prune_loops(hook) {
                for live in input.state.runtimes() {
                    let (kind, name) = (str_at(live, &["kind"]), str_at(live, &["metadata", "name"]));
                    if !names_kind(&word, kind) || applied.contains(&(kind, name)) {
                        continue;
                    }
                    if !selects(&selector, &live["metadata"]["labels"]) {
                        continue;
                    }
                    hits.push(
                        Hit::new(
                            name_of(live),
                            format!(
                                "{} carries {selector} but is not in what {} applies: the hook's prune loop deletes it during the upgrade",
                                name_of(live),
                                hook.identity.name
                            ),
                        )
                        .located(hook.source.clone())
                        .evidence(format!("label {selector}"))
                        .evidence(format!(
                            "hook {} ({}) prunes with: kubectl get {word} -l {selector}",
                            hook.identity.name,
                            hook.events.join(",")
                        ))
                        .var("kind", kind.to_lowercase())
                        .var("name", name)
                        .var("label", selector.split('=').next().unwrap_or(&selector).to_string()),
                    );
                }
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_kind_words() {
        let labels = serde_json::json!({"trainer.kubeflow.org/managed-by": "runtimes-installer", "x": "y"});
        assert!(selects("trainer.kubeflow.org/managed-by=runtimes-installer", &labels));
        assert!(selects("trainer.kubeflow.org/managed-by==runtimes-installer,x", &labels));
        assert!(!selects("trainer.kubeflow.org/managed-by=other", &labels));
        assert!(!selects("trainer.kubeflow.org/managed-by!=runtimes-installer", &labels));
        assert!(!selects("x in (y)", &labels));
        assert!(names_kind("clustertrainingruntime", "ClusterTrainingRuntime"));
        assert!(names_kind("clustertrainingruntimes.trainer.kubeflow.org", "ClusterTrainingRuntime"));
        assert!(!names_kind("trainingruntime", "ClusterTrainingRuntime"));
    }
}
