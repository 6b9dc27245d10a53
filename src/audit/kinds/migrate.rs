//! `migrate`: live objects that `trainer-audit migrate` converts for the target API (2.1 → 2.2+
//! fields), one rule per step of the rehearsed order, each in its phase: back up (a snapshot the
//! conversion reads), patch while the old CRDs are installed (`--before-crds`), apply the target
//! CRDs server-side before the chart upgrade (templated CRDs only: Helm would apply them during
//! the upgrade, after the objects needed them; `crds/` CRDs are `stale-crd`'s), and apply the
//! converted List. The printed commands name the same target as the check (`--to` with the
//! repository, or the local chart by absolute path), so they run as printed.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::derived::subject;
use crate::audit::input::CheckInput;
use crate::migrate::FIELD_MANAGER;
use crate::objects::Origin;
use crate::shell::quote;

/// Where the runbook's steps keep what they write (the runbook's backups go there too).
pub const DIR: &str = "trainer-backup";
const SNAPSHOT: &str = "trainer-backup/trainer-audit-snapshot.yaml";
const BEFORE_CRDS: &str = "trainer-backup/before-crds.sh";
const LIST: &str = "trainer-backup/migrated.yaml";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Snapshot the objects while they still hold every field (conversion reads it later).
    Backup,
    /// Patches that must land while the old CRDs are installed.
    BeforeCrds,
    /// The target's templated CRDs, server-side, before the converted objects are applied.
    Crds,
    /// The converted objects, server-side.
    Apply,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub step: Step,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let m = input.migration();
        // Conversions by their place in `m.conversions` (the evidence lines share it).
        let live: Vec<usize> = (0..m.conversions.len()).filter(|&i| !m.conversions[i].refused()).collect();
        let patched: Vec<usize> = live.iter().copied().filter(|&i| !m.conversions[i].before_crds.is_empty()).collect();
        let written: Vec<usize> = live.iter().copied().filter(|&i| m.conversions[i].write).collect();
        let (objects, commands) = match self.step {
            Step::Backup if !patched.is_empty() || !written.is_empty() => {
                let mut all = patched.clone();
                all.extend(written.iter().filter(|&&i| m.conversions[i].before_crds.is_empty()));
                (all, vec![format!("mkdir -p {DIR}"), format!("trainer-audit snapshot -o {SNAPSHOT}")])
            }
            Step::BeforeCrds if !patched.is_empty() => (
                patched,
                vec![
                    format!("trainer-audit migrate --snapshot {SNAPSHOT} {} --before-crds -o {BEFORE_CRDS}", target_flags(input)),
                    format!("sh {BEFORE_CRDS}"),
                ],
            ),
            Step::Crds if !written.is_empty() => match render_crds(input) {
                Some(render) => (written, vec![format!("{render} | kubectl apply --server-side --force-conflicts -f -")]),
                None => return Vec::new(),
            },
            Step::Apply if !written.is_empty() => (
                written,
                vec![
                    format!("trainer-audit migrate --snapshot {SNAPSHOT} {} -o {LIST}", target_flags(input)),
                    format!("kubectl apply --server-side --field-manager={FIELD_MANAGER} -f {LIST}"),
                ],
            ),
            _ => return Vec::new(),
        };
        // Per kind: how many, and the first (named alone when it is the only one).
        let mut per_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for &i in &objects {
            per_kind.entry(m.conversions[i].id.kind.as_str()).or_insert((0, i)).0 += 1;
        }
        let subjects = per_kind
            .iter()
            .map(|(k, &(n, first))| if n == 1 { subject(&m.conversions[first]) } else { format!("{k} ({n} objects)") })
            .collect::<Vec<_>>();
        let one = objects.len() == 1;
        let (verb, them) = if one { ("holds", "it") } else { ("hold", "them") };
        let (is, object) = if one { ("is", "object") } else { ("are", "objects") };
        let what = match self.step {
            Step::Backup => format!("{verb} fields the target API drops or rejects; snapshot {them} before anything changes: the conversion reads the snapshot, because once the target CRDs are applied the API server no longer returns those fields"),
            Step::BeforeCrds => format!("{verb} values the target CRDs reject on every update (spec.trainer is immutable from 2.2): patch {them} while the old CRDs are still installed"),
            Step::Crds => format!("{is} rewritten for the target API, which needs the target CRDs in place first; Helm would apply these templated CRDs only during the upgrade"),
            Step::Apply => format!("{is} rewritten for the target API: apply the converted {object} after the target CRDs and before the chart upgrade"),
        };
        let mut hit = Hit::new(subjects.join(", "), format!("{} {what}", super::counted(objects.len(), "object")))
            .var("commands", commands.join("\n"));
        let lines = input.migration_evidence();
        for &i in &objects {
            hit = hit.evidence(lines[i].clone());
        }
        let refused = m.conversions.iter().filter(|c| c.refused()).count();
        if refused > 0 {
            hit = hit.evidence(format!(
                "{} refused by the conversion (the schema rules say why): {} a decision by hand",
                super::counted(refused, "object"),
                super::agree(refused, "it needs", "they need")
            ));
        }
        vec![hit]
    }
}

/// The target chart as a local path (absolute, so the command runs from anywhere), when the
/// check used one.
pub(super) fn local_chart(input: &CheckInput) -> Option<String> {
    if input.repository.starts_with("oci://") || input.repository.is_empty() {
        return None;
    }
    let path = std::path::Path::new(&input.repository);
    Some(std::fs::canonicalize(path).map(|p| p.display().to_string()).unwrap_or_else(|_| input.repository.clone()))
}

/// `--to V --repo oci://…`, or `--chart /abs/path`: the check's own target.
fn target_flags(input: &CheckInput) -> String {
    match local_chart(input) {
        Some(path) => format!("--chart {}", quote(&path)),
        None => format!("--to {} --repo {}{}", quote(&input.to.to_string()), quote(&input.repository), input.registry_flags),
    }
}

/// `trainer-audit render` of the target's templated Trainer CRDs; None when it has none (they
/// come from `crds/`).
fn render_crds(input: &CheckInput) -> Option<String> {
    let chart_prefix = format!("{}/", input.target.chart.name);
    let templates: Vec<String> = input
        .target
        .crds
        .iter()
        .filter(|c| c.origin == Origin::Template && c.group == crate::cluster::catalog::TRAINER_GROUP)
        .map(|c| c.source.strip_prefix(&chart_prefix).unwrap_or(&c.source).to_string())
        .collect();
    if templates.is_empty() {
        return None;
    }
    let chart = match local_chart(input) {
        Some(path) => quote(&path),
        None => format!("{} --version {}{}", quote(&input.repository), quote(&input.to.to_string()), input.registry_flags),
    };
    let shows: Vec<String> = templates.iter().map(|t| format!("-s {}", quote(t))).collect();
    Some(format!(
        "trainer-audit render {chart} --release {} -n {} {}",
        quote(&input.release_name),
        quote(&input.namespace),
        shows.join(" ")
    ))
}
