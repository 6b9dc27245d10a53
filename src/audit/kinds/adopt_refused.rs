//! `adopt-refused`: in a GitOps review, objects the target renders as release objects that the
//! installed chart created outside the release (a CRD moving from `crds/` into `templates/`,
//! as Trainer's do in 2.3), while the file's engine refuses to adopt existing objects. Helm
//! refuses an object without this release's ownership metadata ("exists and cannot be imported
//! into the current release") unless it takes ownership (helm/helm v4.2.3
//! pkg/action/validate.go, upgrade.go `TakeOwnership`); helm-controller takes ownership unless
//! `spec.upgrade.disableTakeOwnership` is true (fluxcd/helm-controller
//! api/v2/helmrelease_types.go, v1.6.3). With a cluster, `ownership` reads the live objects.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::engine::Engine;
use crate::objects::Origin;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (Some(ctx), Some(installed)) = (input.gitops, input.installed) else { return Vec::new() };
        if input.from == input.to || ctx.engine != Engine::Flux || !ctx.is_on("upgrade.disableTakeOwnership") {
            return Vec::new();
        }
        let outside = |kind: &str, name: &str| {
            installed.objects.iter().any(|o| o.origin == Origin::CrdsDir && o.identity.kind == kind && o.identity.name == name)
        };
        input
            .target
            .objects
            .iter()
            .filter(|o| o.origin == Origin::Template && outside(&o.identity.kind, &o.identity.name))
            .map(|o| {
                let id = o.identity.to_string();
                Hit::new(
                    id.clone(),
                    format!(
                        "{id} was created from {}'s crds/ outside the release and {} renders it from templates/: the upgrade must adopt it, and the HelmRelease sets spec.upgrade.disableTakeOwnership: true, so helm-controller refuses (\"exists and cannot be imported into the current release\")",
                        input.from, input.to
                    ),
                )
                .evidence(format!("{}: crds/ → {}", o.identity.name, o.source))
                .located(o.source.clone())
                .var("object", id)
            })
            .collect()
    }
}
