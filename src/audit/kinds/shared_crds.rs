//! `shared-crds`: another Trainer install in the cluster shares the cluster-scoped Trainer CRDs
//! (and, since every manager watches all namespaces, reconciles the same TrainJobs and
//! runtimes). Auditing one install (`-n`) names each other one and what this upgrade's CRD
//! change does to its controller: the CRDs it runs against move to the target's (Helm upgrades
//! templated CRDs; a `crds/` copy stays), newer or older than that controller was built for;
//! and, from 2.3, whichever release applied them last owns them, so the other release's next
//! upgrade must adopt them back.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::install::installs;
use crate::objects::{str_at, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

const TRAINER_CRD: &str = "trainjobs.trainer.kubeflow.org";

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (releases, _) = input.state.releases();
        let to = &input.to;
        let templated = input.target.crds.iter().any(|c| c.name == TRAINER_CRD && c.origin == Origin::Template);
        let live_owner = input.state.crd(TRAINER_CRD).map(|c| {
            (
                str_at(c, &["metadata", "annotations", "meta.helm.sh/release-namespace"]).to_string(),
                str_at(c, &["metadata", "annotations", "meta.helm.sh/release-name"]).to_string(),
            )
        });
        let mut hits = Vec::new();
        for other in installs(input.state, &releases) {
            let this = other.namespace == input.namespace && (!other.helm_release || other.name == input.release_name);
            if this {
                continue;
            }
            let version = other.version.clone().unwrap_or_else(|| "an unknown version".into());
            let theirs = other.version.as_deref().and_then(|v| helm_render::version::parse_lenient(v.trim_start_matches('v')));
            let effect = if !templated {
                format!(
                    "the {to} chart ships its CRDs in crds/, which helm upgrade never applies: the CRDs stay as they are, and both controllers keep running against them"
                )
            } else {
                let built = match &theirs {
                    Some(v) if (v.major, v.minor) < (to.major, to.minor) => {
                        format!("newer than the {}.{} API its {version} controller was built for: fields {to} adds are unknown to it", v.major, v.minor)
                    }
                    Some(v) if (v.major, v.minor) > (to.major, to.minor) => format!(
                        "older than the {}.{} API its {version} controller was built for: fields it writes that {to}'s CRDs lack are pruned by the API server",
                        v.major, v.minor
                    ),
                    Some(_) => format!("the {}.{} API its controller was built for", to.major, to.minor),
                    None => "an API its controller's version (unknown) may not match".to_string(),
                };
                let ownership = match (&live_owner, other.helm_release) {
                    (Some((ns, name)), true) if *ns == other.namespace && *name == other.name => {
                        "; the CRDs belong to its release today, so this upgrade must adopt them (TA-OWN-001) and its next helm upgrade must adopt them back (--take-ownership), each writing its own version of them".to_string()
                    }
                    (_, true) if theirs.as_ref().is_some_and(|v| (v.major, v.minor) >= (2, 3)) => format!(
                        "; its chart templates the CRDs too, so its next helm upgrade finds them owned by {}/{} and must adopt them back (--take-ownership), writing its own version of them",
                        input.namespace, input.release_name
                    ),
                    _ => String::new(),
                };
                format!("helm upgrade replaces the cluster-wide Trainer CRDs with {to}'s, {built}{ownership}")
            };
            hits.push(
                Hit::new(
                    format!("{}install {}/{}", if other.helm_release { "Helm " } else { "" }, other.namespace, other.name),
                    format!(
                        "another Trainer install, {other}, shares the cluster-scoped Trainer CRDs with {}/{} and its manager reconciles the same TrainJobs and runtimes (it watches every namespace): {effect}",
                        input.namespace, input.release_name
                    ),
                )
                .var("other", other.to_string())
                .var("other_namespace", other.namespace.clone())
                .var("other_version", version)
                .evidence(format!("install {other}")),
            );
        }
        hits
    }
}
