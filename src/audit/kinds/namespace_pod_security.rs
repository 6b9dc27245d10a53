//! `namespace-pod-security`: every Pod the upgrade creates, against the Pod Security level the
//! namespace it lands in enforces ([`super::pod_security`]). The Pods are the ones the upgrade
//! makes ([`super::namespace_quota::creations`]: a Deployment the target adds, one whose Pod
//! template Helm's patch changes — its rollout — and each hook Job's Pod). PodSecurity admission
//! only warns when a Deployment or Job is written (`ValidatePodController` evaluates it with
//! `enforce=false`) and refuses the Pod its controller then creates (`ValidatePod`): the
//! Deployment is admitted, its ReplicaSet never gets a Pod, and `helm upgrade --wait` fails at
//! its --timeout (a hook Job's Pod: the hook fails). A Deployment whose template does not change
//! makes no Pod, so nothing is refused during the upgrade (its Pods are refused only when they
//! are next re-created): not reported. A hook Pod that TA-HOOK-101 (`hook-security-context`)
//! already reports under `restricted` is left to it: one finding per Pod. At the installed
//! version the hits stand only beside another error, as TA-NS-001's
//! ([`super::namespace_quota::created_if_upgrade_runs`]).

use serde::Deserialize;
use serde_json::Value as Json;

use super::hook_security_context::{self, PodSecurityLevel};
use super::namespace_quota::{created_if_upgrade_runs, creations, release_namespaces, Creation, PodOwner};
use super::pod_security::{violations, Enforced};
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::{str_at, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Whether the upgrade creates a Pod of `owner` (in the namespace `made` is of).
fn makes_pod(made: &[Creation], owner: &PodOwner) -> bool {
    made.iter().any(|c| c.owner.as_ref() == Some(owner))
}

/// The values key a template of the chart itself (`<chart>/templates/…`) reads and whose path
/// ends with `suffix` (`manager.securityContext` for `securityContext`); None for a subchart's
/// template or a chart that reads none (`namespace_quota` asks it for `resources`).
pub(super) fn chart_value(input: &CheckInput, source: &str, suffix: &str) -> Option<String> {
    let file = source.split_once('/').map_or(source, |(_, f)| f);
    input.target.value_uses.iter().find(|u| u.file == file && u.path.ends_with(suffix)).map(|u| u.path.clone())
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let if_upgrade_runs = created_if_upgrade_runs(input);
        let mut hits = Vec::new();
        for ns in release_namespaces(input) {
            let Some(policy) = input.state.of_kind("Namespace").find(|n| str_at(n, &["metadata", "name"]) == ns).and_then(Enforced::of)
            else {
                continue;
            };
            let made = creations(input, ns);
            // (subject, the Pod as the message names it, its spec, its template, a hook's)
            let mut pods: Vec<(String, String, &Json, String, bool)> = Vec::new();
            for o in input.target.objects.iter().filter(|o| o.origin == Origin::Template && o.identity.namespace == ns) {
                if o.identity.kind != "Deployment" || !makes_pod(&made, &PodOwner::Deployment(o.identity.name.clone())) {
                    continue;
                }
                let Some(spec) = o.body.pointer("/spec/template/spec") else { continue };
                let pod = if input.live("Deployment", ns, &o.identity.name).is_some() {
                    format!("the rollout Pod of Deployment {ns}/{}", o.identity.name)
                } else {
                    format!("the Pods of the new Deployment {ns}/{}", o.identity.name)
                };
                pods.push((o.identity.to_string(), pod, spec, o.source.clone(), false));
            }
            for h in input.target.hooks.iter().filter(|h| h.identity.namespace == ns && h.identity.kind == "Job") {
                if !makes_pod(&made, &PodOwner::HookJob(h.identity.name.clone())) {
                    continue;
                }
                // TA-HOOK-101 reports it under restricted.
                if policy.level == PodSecurityLevel::Restricted && hook_security_context::reported(h) {
                    continue;
                }
                let Some(spec) = h.body.pointer("/spec/template/spec") else { continue };
                pods.push((h.identity.to_string(), format!("the Pod of hook Job {ns}/{}", h.identity.name), spec, h.source.clone(), true));
            }
            for (subject, pod, spec, source, hook) in pods {
                let failed = violations(spec, &policy);
                if failed.is_empty() {
                    continue;
                }
                let consequence = if hook {
                    "the Job is admitted with a warning, its Pod is refused, the hook never completes and helm upgrade fails at its --timeout"
                } else {
                    "the Deployment is admitted with a warning, its ReplicaSet's Pods are refused, and helm upgrade --wait fails at its --timeout"
                };
                let fields = failed.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                let mut h = Hit::new(
                    subject.clone(),
                    format!(
                        "{ns} enforces Pod Security \"{shown}\" and refuses {pod} (violates PodSecurity \"{shown}\": {fields}); {consequence}",
                        shown = policy.shown
                    ),
                )
                .located(source.clone())
                .var("namespace", ns)
                .var("enforced", policy.label.clone())
                .var("pod", pod.clone())
                .var(
                    "security_context",
                    chart_value(input, &source, "ecurityContext")
                        .map(|v| format!("the release's values, {v} (the printed helm upgrade then carries it)"))
                        .unwrap_or_else(|| "a post-renderer (the chart reads no securityContext value for it)".into()),
                )
                ;
                h.if_upgrade_runs = if_upgrade_runs;
                if !failed.iter().all(|v| v.restricted) {
                    h = h.variant("baseline");
                }
                h.evidence.push(format!("Namespace {ns}: {}={}", super::pod_security::ENFORCE, policy.label));
                h.evidence.extend(failed.iter().map(|v| format!("{subject}: {}: {}", v.reason, v.detail)));
                hits.push(h);
            }
        }
        hits
    }
}
