//! What each deployment engine does with a Helm hook: Helm and Flux run Helm's lifecycle,
//! Argo CD maps hook events to sync phases (some only from a given version, some never), and
//! kustomize's `helmCharts` applies hooks as plain objects. Sources: Argo CD
//! `docs/user-guide/helm.md` at v2.10.0, v3.3.0 and v3.5.1 (hook mapping, PostDelete from 2.10.0,
//! PreDelete from 3.3.0), kustomize `api/types/helmchartargs.go` (`skipHooks` → `--no-hooks`).

use serde::Serialize;

use super::Engine;

/// One hook event under Argo CD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgoPhase {
    pub event: String,
    /// `PreSync`, `PostSync`, `PreDelete`, `PostDelete`, or None when Argo CD has no phase for it.
    pub phase: Option<&'static str>,
    /// First Argo CD version that runs it (None: every version that has the phase).
    pub since: Option<&'static str>,
    /// Whether the given Argo CD version runs it (None when no version was given).
    pub supported: Option<bool>,
}

pub fn argocd_phase(event: &str, version: Option<&semver::Version>) -> ArgoPhase {
    let (phase, since) = match event {
        "pre-install" | "pre-upgrade" => (Some("PreSync"), Some("1.3.0")),
        "post-install" | "post-upgrade" => (Some("PostSync"), Some("1.3.0")),
        "post-delete" => (Some("PostDelete"), Some("2.10.0")),
        "pre-delete" => (Some("PreDelete"), Some("3.3.0")),
        _ => (None, None),
    };
    let supported = version.map(|v| match (phase, since) {
        (Some(_), Some(since)) => semver::Version::parse(since).is_ok_and(|s| *v >= s),
        _ => false,
    });
    ArgoPhase { event: event.to_string(), phase, since, supported }
}

/// Helm delete policy → Argo CD hook delete policy.
pub fn argocd_delete_policy(policy: &str) -> Option<&'static str> {
    match policy {
        "before-hook-creation" => Some("BeforeHookCreation"),
        "hook-succeeded" => Some("HookSucceeded"),
        "hook-failed" => Some("HookFailed"),
        _ => None,
    }
}

/// One line per engine saying what happens to a hook with these events.
pub fn behaviour(engine: Engine, events: &[String], weight: i64, argocd: Option<&semver::Version>) -> String {
    let list = events.join(", ");
    match engine {
        Engine::Helm => format!("Helm runs it at {list} (weight {weight}) and does not keep it as a release object"),
        Engine::Flux => {
            format!("helm-controller runs Helm's lifecycle: at {list} (weight {weight}); spec.<action>.disableHooks turns it off")
        }
        Engine::Kustomize => {
            let deletes = events.iter().any(|e| e.ends_with("-delete"));
            if deletes {
                "kustomize helmCharts renders it as a plain object: applied at every apply, so this delete hook runs at install".into()
            } else {
                "kustomize helmCharts renders it as a plain object: applied at every apply, not only at its hook events".into()
            }
        }
        Engine::Argocd => {
            let phases: Vec<String> = events
                .iter()
                .map(|e| {
                    let p = argocd_phase(e, argocd);
                    match (p.phase, p.since, p.supported) {
                        (None, _, _) => format!("{e} → not supported"),
                        (Some(phase), _, Some(false)) => format!("{e} → {phase} (not in this version; needs ≥ {})", p.since.unwrap_or("?")),
                        (Some(phase), Some(since), _) if phase.ends_with("Sync") => format!("{e} → {phase} on every sync (since {since})"),
                        (Some(phase), Some(since), _) => format!("{e} → {phase} (since {since})"),
                        (Some(phase), None, _) => format!("{e} → {phase}"),
                    }
                })
                .collect();
            format!("Argo CD: {}; sync wave {weight}", phases.join("; "))
        }
    }
}
