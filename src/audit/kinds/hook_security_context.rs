//! `hook-security-context`: hooks that set no securityContext (they run as the image's user and
//! the `restricted` Pod Security level rejects them) or that may run as root. With
//! `namespace_enforces`, an upgrade reports them only when the release namespace enforces that
//! Pod Security level, as the API server reads its labels ([`super::pod_security::Enforced`]: a
//! level it cannot parse is `restricted`).

use serde::Deserialize;

use super::pod_security::Enforced;
use super::support::hook_hit;
use super::{Check, Hit};
use crate::audit::input::{ChartInput, CheckInput};
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Report only when the release namespace's `pod-security.kubernetes.io/enforce` label
    /// enforces this level (an upgrade reads it from the cluster; a chart review has none, so it
    /// stays quiet).
    #[serde(default)]
    pub namespace_enforces: Option<PodSecurityLevel>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PodSecurityLevel {
    Privileged,
    Baseline,
    Restricted,
}

impl PodSecurityLevel {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            PodSecurityLevel::Privileged => "privileged",
            PodSecurityLevel::Baseline => "baseline",
            PodSecurityLevel::Restricted => "restricted",
        }
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        if let Some(level) = self.namespace_enforces {
            let ns = input.state.of_kind("Namespace").find(|n| str_at(n, &["metadata", "name"]) == input.namespace);
            let Some(enforced) = ns.and_then(Enforced::of).filter(|e| e.level == level) else {
                return Vec::new();
            };
            // What the fix's restore puts back once the upgrade is done: the level enforced. A
            // label it could not parse is not written back: the API server refuses a changed
            // label it cannot parse (pod-security-admission v0.36.1 `admission/admission.go`
            // L276-L279), and it enforced `restricted` for it.
            return hits(&input.chart()).into_iter().map(|h| h.var("enforced", enforced.level.as_str())).collect();
        }
        hits(&input.chart())
    }

    fn review(&self, chart: &ChartInput) -> Option<Vec<Hit>> {
        Some(if self.namespace_enforces.is_some() { Vec::new() } else { hits(chart) })
    }
}

/// Whether this kind reports `hook` (no securityContext, or it may run as root): the Pod
/// Security check of the upgrade's Pods (`namespace-pod-security`) leaves such a hook to it
/// under `restricted`, one finding per Pod.
pub(super) fn reported(hook: &crate::inventory::hook::HookInfo) -> bool {
    !hook.has_security_context() || !hook.runs_as_non_root()
}

fn hits(chart: &ChartInput) -> Vec<Hit> {
    let mut out = Vec::new();
    for hook in &chart.chart.hooks {
        let name = &hook.identity.name;
        if !hook.has_security_context() {
            out.push(hook_hit(
                hook,
                format!("{name} sets no securityContext: it runs as the image's user (root for most base images) and is rejected in namespaces enforcing the `restricted` Pod Security level"),
                vec!["securityContext: <none> (pod and containers)".into()],
            ));
        } else if !hook.runs_as_non_root() {
            out.push(
                hook_hit(
                    hook,
                    format!("{name} does not set runAsNonRoot or a non-zero runAsUser; the `restricted` Pod Security level rejects it"),
                    vec!["runAsNonRoot: <unset>".into()],
                )
                .variant("may-run-as-root"),
            );
        }
    }
    out
}
