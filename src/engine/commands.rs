//! The commands of one upgrade step under each install method: the upgrade itself (a Helm
//! command, or the edit a GitOps engine reconciles), how it adopts objects another owner holds,
//! the engine's own view for verifying it, and what going back would do. `plan` adds what holds
//! for every engine (the findings to settle first, the Trainer checks, the downgrade guard).

use super::{Adoption, Method};

/// The release a step upgrades and how the tool reached its chart.
pub struct Step<'a> {
    pub release: &'a str,
    pub namespace: &'a str,
    /// The chart repository (or local chart) as commands name it.
    pub repository: &'a str,
    /// Flags that reach the repository (` --plain-http`), written after it in Helm commands.
    pub registry_flags: &'a str,
    /// The value flags as the shell takes them, each with a leading space.
    pub values: &'a str,
    pub from: &'a semver::Version,
    pub to: &'a semver::Version,
    /// How a Helm release is reached (Helm's own start, `cluster::release::Route`).
    pub start: HelmStart,
    /// The GitOps object that owns the release, as its engine labels the objects it applies
    /// (Flux: `helm.toolkit.fluxcd.io/name` and `/namespace`, the HelmRelease, which may be named
    /// and placed otherwise than the Helm release): (namespace, name).
    pub owner: Option<(&'a str, &'a str)>,
}

/// What the Helm command of a step does with the release.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HelmStart {
    /// `helm upgrade` of a release Helm upgrades (or one a fix rolled back first).
    #[default]
    Upgrade,
    /// `helm upgrade --install` over an uninstalled release: Helm installs afresh and reuses no
    /// values, so the values of revision `values_from` are saved and passed with `-f` (None: it
    /// had none).
    Reinstall { values_from: Option<i64> },
}

impl Method {
    /// What a person does (edit a GitOps object, remove a kustomization) and the shell commands
    /// that run the step; `adoption` is what the step's findings need to take objects over.
    pub fn upgrade(self, s: &Step, adoption: Option<Adoption>) -> (Vec<String>, Vec<String>) {
        let q = crate::shell::quote;
        let (release, ns, version) = (q(s.release), q(s.namespace), q(&s.to.to_string()));
        let repo = format!("{}{}", q(s.repository), s.registry_flags);
        let (to, values) = (s.to, s.values);
        match self {
            Method::ArgoCd => (
                vec![
                    format!("Set spec.source.targetRevision: {to} (chart kubeflow-trainer from {}) in the Argo CD Application, with syncOptions ServerSideApply=true (the runtime CRDs exceed the client-side apply annotation budget)", s.repository),
                    "Sync the Application and wait for Healthy".to_string(),
                ],
                Vec::new(),
            ),
            Method::FluxHelm => {
                // The HelmRelease the objects name, else one named as the release.
                let (hr_ns, hr) = s.owner.unwrap_or((s.namespace, s.release));
                (
                    vec![format!("Set spec.chart.spec.version: \"{to}\" in the HelmRelease {hr_ns}/{hr} and commit (helm-controller ≥ 1.1.0 takes ownership of existing objects by default; spec.upgrade.disableTakeOwnership, from 1.2.0, must not be true)")],
                    vec![format!("flux reconcile helmrelease {} -n {} --with-source", q(hr), q(hr_ns))],
                )
            }
            // Helm 4 installs a missing release with server-side apply, and the objects kubectl or
            // kustomize applied have fields other managers own: taking them over needs
            // --force-conflicts (Helm ≥ 4.0.0; Helm 3 applies client-side and has no such flag).
            Method::Kubectl | Method::FluxKustomize | Method::Unknown => (
                vec![
                    "Remove Trainer from the kustomization that installed it, so it stops re-applying the objects Helm now owns".to_string(),
                    "The command is for Helm ≥ 4.0.0 (server-side apply; --force-conflicts takes the fields kubectl or kustomize own); with Helm 3 (≥ 3.17 for --take-ownership) leave --force-conflicts out".to_string(),
                ],
                vec![format!("helm upgrade --install {release} {repo} --version {version} -n {ns}{values} --take-ownership --force-conflicts --wait --timeout 10m")],
            ),
            Method::Helm => {
                // Server-side apply conflicts with another field manager: only forcing them gets
                // through, --take-ownership does not (rehearsed: kustomize 2.2.0 → Helm 2.3.0).
                let take = match adoption {
                    Some(Adoption::ForceConflicts) => " --take-ownership --force-conflicts",
                    Some(Adoption::TakeOwnership) => " --take-ownership",
                    None => "",
                };
                match s.start {
                    HelmStart::Upgrade => (
                        Vec::new(),
                        vec![format!("helm upgrade {release} {repo} --version {version} -n {ns} --reset-then-reuse-values{values}{take} --wait --timeout 10m")],
                    ),
                    // The CLI installs (Replace) and hands the install no reused values: they go
                    // in a file first (`helm get values` reads any revision Helm keeps).
                    HelmStart::Reinstall { values_from } => {
                        let mut commands = Vec::new();
                        let mut file = String::new();
                        if let Some(revision) = values_from {
                            let name = q(&format!("{}-revision-{revision}-values.yaml", s.release));
                            commands.push(format!("helm get values {release} -n {ns} --revision {revision} -o yaml > {name}"));
                            file = format!(" -f {name}");
                        }
                        commands.push(format!("helm upgrade --install {release} {repo} --version {version} -n {ns}{file}{values}{take} --wait --timeout 10m"));
                        (
                            vec![format!("Helm installs {to} afresh over what the uninstall left (TA-REL-003): install hooks run, nothing is deleted")],
                            commands,
                        )
                    }
                }
            }
        }
    }

    /// Whether the install is a Helm release, with values and a history to save (`helm get
    /// values` of one that is not fails with "Error: release: not found": rehearsed).
    pub fn has_helm_release(self) -> bool {
        matches!(self, Method::Helm | Method::FluxHelm)
    }

    /// Whether the engine takes over objects that lack the release's ownership by itself: Argo
    /// CD applies the rendered objects itself and Flux helm-controller takes ownership by default
    /// from v1.1.0 (internal/action/upgrade.go sets TakeOwnership), so Helm's adoption check
    /// stops only plain Helm (and the Helm release a kubectl install moves to).
    pub fn adopts_by_itself(self) -> bool {
        matches!(self, Method::ArgoCd | Method::FluxHelm | Method::FluxKustomize)
    }

    /// Whether the engine hands the values to Helm itself (so a renamed value is renamed in the
    /// engine's object, not passed on a command line).
    pub fn hands_values_to_helm(self) -> bool {
        matches!(self, Method::ArgoCd | Method::FluxHelm)
    }

    /// The engine's own view of the change: an Argo CD install has no Helm release (Argo CD
    /// renders the chart itself), and Flux reports the HelmRelease's Ready condition.
    pub fn status(self, s: &Step) -> String {
        let q = crate::shell::quote;
        match self {
            Method::ArgoCd => "kubectl get applications.argoproj.io -A -o custom-columns=NAME:.metadata.name,REVISION:.spec.source.targetRevision,SYNC:.status.sync.status,HEALTH:.status.health.status".to_string(),
            Method::FluxHelm => "flux get helmreleases -A".to_string(),
            _ => format!("helm status {} -n {}", q(s.release), q(s.namespace)),
        }
    }

    /// What going back to `from` would do, and whether it is dangerous. `crds_move`: the CRDs
    /// become release objects in this step (templated in `to`, not in `from`); `from_templated`:
    /// `from` already templates them.
    pub fn rollback(self, s: &Step, crds_move: bool, from_templated: bool) -> (String, bool) {
        let q = crate::shell::quote;
        let (release, ns) = (q(s.release), q(s.namespace));
        let (from, to) = (s.from, s.to);
        // Helm reads the live object before deleting on upgrade and rollback (v4.2.3
        // pkg/kube/client.go, Update): the live keep annotation protects those, not uninstall.
        match self {
            // Nothing of the old install is a Helm revision: the first Helm revision is the target.
            Method::Kubectl | Method::FluxKustomize | Method::Unknown if crds_move => (format!("there is no {from} Helm revision to roll back to; helm uninstall {release} -n {ns} would DELETE the CRDs (release objects in {to}) and with them every TrainJob and runtime, whatever the live CRDs' keep annotation says (uninstall reads the stored manifest) — go back by re-applying the {from} manifests over the release's objects"), true),
            Method::Kubectl | Method::FluxKustomize | Method::Unknown => (format!("there is no {from} Helm revision to roll back to: go back by re-applying the {from} manifests"), false),
            Method::FluxHelm if crds_move => (format!("setting the HelmRelease version back to {from} makes helm-controller upgrade to it, which DELETES the CRDs (release objects in {to}, not in {from}) and with them every TrainJob and runtime, unless the live CRDs carry helm.sh/resource-policy: keep"), true),
            Method::FluxHelm => (format!("set the HelmRelease version back to {from}; helm-controller applies the older chart"), false),
            Method::ArgoCd => (format!("set the Application's targetRevision back to {from} and sync; review what Argo CD would prune first (argocd app diff)"), false),
            Method::Helm if crds_move => (format!("helm rollback {release} -n {ns} to the {from} revision would DELETE the CRDs (they are release objects in {to} and not in {from}) and with them every TrainJob and runtime, unless the live CRDs carry helm.sh/resource-policy: keep — annotate them before the upgrade, and use no --atomic/--rollback-on-failure until they carry it"), true),
            Method::Helm if from_templated => (format!("helm rollback {release} -n {ns} restores the previous revision's objects, its CRD templates (older schemas) included"), false),
            Method::Helm => (format!("helm rollback {release} -n {ns} restores the previous revision's objects; CRDs from crds/ are not downgraded"), false),
        }
    }
}
