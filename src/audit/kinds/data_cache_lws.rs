//! `data-cache-lws`: `dataCache.enabled` needs LeaderWorkerSet (the data-cache initializer and
//! its ClusterRole use `leaderworkerset.x-k8s.io/v1`). The chart bundles LWS as a subchart whose
//! CRD sits in the subchart's `crds/`, which Helm creates on install only: enabling the data
//! cache on an upgrade leaves the CRD missing unless the cluster already has it. A hit when the
//! CRD will be missing after the upgrade; variant `install-ignored` (info) when the user sets
//! `dataCache.lws.install=false` and the target still renders LWS: Helm takes the first condition
//! path that resolves (`dataCache.enabled`), so that switch never disables the subchart.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::compat::{self, Table};
use crate::audit::input::CheckInput;
use crate::cluster::neighbours;
use crate::objects::Origin;

pub const LWS_CRD: &str = "leaderworkersets.leaderworkerset.x-k8s.io";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

fn flag(values: &Json, path: &[&str]) -> Option<bool> {
    let mut v = values;
    for p in path {
        v = v.get(p)?;
    }
    v.as_bool()
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        if flag(&input.user_values, &["dataCache", "enabled"]) != Some(true) {
            return Vec::new();
        }
        let mut hits = Vec::new();
        let target_crd = input.target.crds.iter().find(|c| c.name == LWS_CRD);
        let live = input.state.crd(LWS_CRD).is_some();
        let renders_lws =
            input.target.objects.iter().any(|o| o.identity.kind == "Deployment" && o.identity.name.ends_with("lws-controller-manager"));
        let missing = match target_crd {
            _ if live => None,
            Some(c) if c.origin == Origin::Template => None,
            // Helm creates crds/ on install only.
            Some(c) if input.release.is_some() => Some(format!(
                "dataCache.enabled needs LeaderWorkerSet, but {LWS_CRD} is not in the cluster and the target ships it in {} (a crds/ directory), which helm upgrade never creates",
                c.source
            )),
            Some(_) => None,
            None => Some(format!("dataCache.enabled needs LeaderWorkerSet, but neither the cluster nor the target chart has {LWS_CRD}")),
        };
        let lws = neighbours::find(input.state, neighbours::LWS);
        if let Some(message) = missing {
            let bundled = compat::get().trainer(&input.to).and_then(|r| r.lws.as_ref()).map(|l| l.bundled.clone());
            let mut h = Hit::new(format!("CustomResourceDefinition/{LWS_CRD}"), message)
                .var("crd", LWS_CRD)
                .var("lws_version", bundled.unwrap_or_else(|| "<the version your Trainer chart bundles>".into()));
            h.evidence.push("user values: dataCache.enabled=true".into());
            h.evidence.extend(lws.evidence.iter().cloned());
            hits.push(h);
        }
        if flag(&input.user_values, &["dataCache", "lws", "install"]) == Some(false) && renders_lws {
            hits.push(
                Hit::new(
                    "values dataCache.lws.install",
                    "dataCache.lws.install=false does not disable the bundled LeaderWorkerSet: the chart's condition `dataCache.enabled,dataCache.lws.install` resolves at dataCache.enabled, so the target still renders the LWS controller",
                )
                .var("crd", LWS_CRD)
                .evidence("user values: dataCache.enabled=true, dataCache.lws.install=false")
                .variant("install-ignored"),
            );
        }
        hits
    }

    fn compat(&self) -> &'static [Table] {
        &[Table::Trainer]
    }
}
