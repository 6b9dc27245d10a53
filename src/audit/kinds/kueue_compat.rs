//! `kueue-compat`: the installed Kueue's TrainJob integration against the Trainer the upgrade
//! lands on, from the `kueue` table of `rules/compat.yaml`. Kueue writes one TrainJob field
//! (`podSpecOverrides`, `podTemplateOverrides`, `runtimePatches`, by release); a TrainJob CRD
//! without it prunes what Kueue writes. A hit when the table says the target Trainer breaks with
//! this Kueue; variant `stale-crd` when the TrainJob CRD the cluster keeps after the upgrade (the
//! live one, when the target does not template it) lacks the field; variant `untested` (info)
//! when no public source says the pair works.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::compat::{self, KueueRow, Path, Table};
use crate::audit::input::CheckInput;
use crate::cluster::neighbours::{self, Neighbour};
use crate::kube::Origin;

const TRAINJOB_CRD: &str = "trainjobs.trainer.kubeflow.org";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Whether the TrainJob CRD the cluster has after the upgrade declares `writes`, and which copy
/// was read (None when neither the target nor the cluster has one).
fn crd_after(input: &CheckInput, writes: &Path) -> Option<(bool, &'static str)> {
    let key = writes.to_string();
    let target = input.target.crds.iter().find(|c| c.name == TRAINJOB_CRD);
    let live = input.state.crd(TRAINJOB_CRD);
    match (target, live) {
        // Helm upgrades templated CRDs; a `crds/` copy only lands when none is installed.
        (Some(t), _) if t.origin == Origin::Template => Some((t.versions.iter().any(|v| v.schema.contains_key(&key)), "target chart")),
        (_, Some(l)) => {
            let has = l
                .pointer("/spec/versions")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.pointer("/schema/openAPIV3Schema"))
                .any(|s| writes.schema(s).is_some());
            Some((has, "live cluster"))
        }
        (Some(t), None) => Some((t.versions.iter().any(|v| v.schema.contains_key(&key)), "target chart")),
        (None, None) => None,
    }
}

fn hit(kueue: &Neighbour, v: &semver::Version, row: &KueueRow, input: &CheckInput, message: String) -> Hit {
    let fits: Vec<String> = compat::get()
        .kueue
        .iter()
        .filter(|r| r.works.as_ref().is_some_and(|w| w.matches(&input.to)))
        .map(|r| match r.evidence {
            compat::Evidence::Announced => format!("{} (announced; in no release yet)", r.kueue),
            _ => r.kueue.to_string(),
        })
        .collect();
    let mut h = Hit::new("Kueue", message)
        .var("kueue", v.to_string())
        .var("writes", row.writes.clone())
        .var("built", row.built_against.clone())
        .var("works", row.works.as_ref().map(|w| w.to_string()).unwrap_or_else(|| "none known".into()))
        .var("kueue_fit", if fits.is_empty() { "none known".to_string() } else { fits.join(" or ") });
    h.evidence.extend(kueue.evidence.iter().cloned());
    h.evidence.push(format!("{}: Kueue {} ({}) — {}", compat::FILE, row.kueue, row.evidence.as_str(), row.source));
    h
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let kueue = neighbours::find(input.state, neighbours::KUEUE);
        let Some(v) = kueue.semver() else { return Vec::new() };
        let Some(row) = compat::get().kueue(&v) else { return Vec::new() };
        let to = &input.to;
        if row.breaks.as_ref().is_some_and(|b| b.matches(to)) {
            let message = format!("Kueue {v} (built against Trainer {}) with Trainer {to}: {}", row.built_against, row.effect.trim());
            return vec![hit(&kueue, &v, row, input, message)];
        }
        let Ok(writes) = Path::parse(&row.writes) else { return Vec::new() };
        if let Some((false, copy)) = crd_after(input, &writes) {
            let message = format!(
                "Kueue {v} writes {writes}, which the TrainJob CRD the cluster keeps after the upgrade (from the {copy}) does not declare: {}",
                row.effect.trim()
            );
            return vec![hit(&kueue, &v, row, input, message).variant("stale-crd")];
        }
        if row.works.as_ref().is_some_and(|w| !w.matches(to)) {
            let message = format!("no public source says Kueue {v} (built against Trainer {}) works with Trainer {to}", row.built_against);
            return vec![hit(&kueue, &v, row, input, message).variant("untested")];
        }
        Vec::new()
    }

    fn compat(&self) -> &'static [Table] {
        &[Table::Kueue]
    }
}
