//! `values-unknown-key`: user values the target chart does not have (Helm ignores them
//! silently, so settings the release relies on stop applying), at every depth: a key under a
//! subchart's name or alias is checked against that subchart's `values.yaml`, schema and
//! templates (`inventory::values_scope`), so `jobset: {enabled: false}` is caught (the key is
//! `jobset.install`). Each finding says where the key came from (a `-f` file, a `--set`, the
//! release's stored values), names the nearest real key (variant `nearest`), and fixes it where
//! it lives. A key the target renamed is named with its successor (the printed upgrade carries
//! it); a key the installed chart's templates read and that has no successor is left to
//! `values-removed-key`, an error.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::audit::renames::Rename;
use crate::inventory::paths::Collapsed;
use crate::inventory::value_uses::ValueUse;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// One subtree of the user's values the target chart does not have.
pub struct Unknown<'a> {
    pub root: Collapsed,
    /// The rename the upgrade crosses that covers it.
    pub renamed: Option<&'static Rename>,
    /// Where the installed chart's templates read it (empty: they do not, or the installed
    /// chart is unknown).
    pub installed_uses: Vec<&'a ValueUse>,
}

/// The user's values the target chart (and the subchart each falls under) neither declares nor
/// reads, folded to the roots of the subtrees it lacks.
pub fn unknown_keys<'a>(input: &'a CheckInput) -> Vec<Unknown<'a>> {
    let mut user = BTreeMap::new();
    crate::inventory::flatten_values(&input.user_values, "", &mut user);
    let scope = &input.target.values_scope;
    let unknown: Vec<String> = user.keys().filter(|p| !scope.knows(p)).cloned().collect();
    let roots = crate::inventory::paths::collapse(&unknown.iter().cloned().collect(), &scope.paths());
    roots
        .into_iter()
        .map(|root| {
            let renamed = crate::audit::renames::crossed(&input.from, &input.to)
                .into_iter()
                .find(|n| root.path == n.from || root.path.starts_with(&format!("{}.", n.from)));
            let installed_uses = match input.installed {
                Some(installed) => installed.value_uses.iter().filter(|u| root.leaves.iter().any(|leaf| u.reads(leaf))).collect(),
                None => Vec::new(),
            };
            Unknown { root, renamed, installed_uses }
        })
        .collect()
}

/// Keys named in the message (all are in the evidence).
const SHOWN: usize = 3;

/// The subtree the target lacks, with the keys the user set under it: the root alone when it is
/// the key set, else the root and each key (`runtimes (+1 nested path: runtimes.installer.image.registry)`),
/// so the finding names what the user wrote whatever depth the target stops at (explorer seed 7:
/// a downgrade below 2.3 named only `runtimes.installer`).
pub(super) fn folded(r: &Collapsed) -> String {
    match r.leaves.as_slice() {
        [leaf] if *leaf == r.path => r.path.clone(),
        leaves => format!("{} (+{}: {})", r.path, super::counted(r.nested, "nested path"), super::support::listed(leaves, SHOWN, ", ")),
    }
}

/// One evidence line per key the user set under the root.
pub(super) fn set_keys(r: &Collapsed, from: &str) -> Vec<String> {
    r.leaves.iter().map(|leaf| format!("user value {leaf} (from {from})")).collect()
}

/// Where the key was set and how to fix it there: a values file or flag of this run is edited;
/// the release's stored values are reused by the printed upgrade, so they are saved, corrected
/// and passed back with `--reset-values`.
pub(super) fn where_and_how(input: &CheckInput, path: &str, change: &str) -> (String, String) {
    match input.value_source(path) {
        Some(label) if label.starts_with("-f ") => {
            let file = &label[3..];
            (format!("your values file {file}"), format!("{change} in {file}."))
        }
        Some(label) if label.starts_with("--set") => {
            (format!("your {label}"), format!("{change} in that {} flag.", label.split(' ').next().unwrap_or("--set")))
        }
        Some(label) if label.starts_with("the release's stored values") => {
            let (r, ns) = (crate::shell::quote(&input.release_name), crate::shell::quote(&input.namespace));
            (
                label.to_string(),
                format!(
                    "{change} in the release's stored values, which the printed upgrade reuses (--reset-then-reuse-values): save them with `helm get values {r} -n {ns} -o yaml > values.yaml`, correct the file, and upgrade with --reset-values -f values.yaml instead."
                ),
            )
        }
        Some(label) if label.starts_with("the values the GitOps file") => {
            (label.to_string(), format!("{change} in the values the GitOps file hands to Helm, at the line this finding names."))
        }
        Some(label) => (label.to_string(), format!("{change} in {label}.")),
        None => ("the values".to_string(), format!("{change}.")),
    }
}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        unknown_keys(input)
            .into_iter()
            .filter_map(|u| {
                let r = &u.root;
                match u.renamed {
                    // Carried under the new name by the printed upgrade (plan::step).
                    Some(n) => Some(
                        Hit::new(
                            format!("values {}", r.path),
                            format!(
                                "{}, set by {}: the chart renamed {} to {} ({}) in {}.{}.{}, and the printed upgrade carries each value there with --set-string",
                                folded(r),
                                where_and_how(input, &r.path, "").0,
                                n.from,
                                n.to,
                                n.controls,
                                n.since.0,
                                n.since.1,
                                n.since.2
                            ),
                        )
                        .evidence(format!("user value {}", r.path))
                        .evidence(format!("rename: {}", n.source))
                        .var("path", r.path.clone())
                        .var("new", n.to)
                        .variant("renamed"),
                    ),
                    // What the installed chart read and the target drops: values-removed-key.
                    None if !u.installed_uses.is_empty() => None,
                    None => {
                        let installed = match input.installed {
                            Some(_) => format!("; the installed {} chart does not read it either", input.from),
                            None => String::new(),
                        };
                        let scope = &input.target.values_scope;
                        let sub = match scope.subchart_of(&r.path) {
                            Some((key, chart)) if r.path.contains('.') => {
                                let rest = r.path.split_once('.').map(|(_, p)| p).unwrap_or_default();
                                format!(" (keys under {key} are the {chart} subchart's values, and it has no {rest})")
                            }
                            _ => String::new(),
                        };
                        // One key set: it and its nearest; several under one root: the root.
                        let key = match r.leaves.as_slice() {
                            [leaf] => leaf.clone(),
                            _ => r.path.clone(),
                        };
                        let near = crate::inventory::values_scope::nearest(&key, &scope.paths());
                        let change = match &near {
                            Some(n) => format!("Move {key} to {n}"),
                            None => format!("Remove {}", r.path),
                        };
                        let (from, how) = where_and_how(input, &r.path, &change);
                        let message = format!(
                            "{}, set by {from}, is not a key the {} chart has{sub}: Helm ignores it silently{installed}{}",
                            folded(r),
                            input.to,
                            near.as_ref().map(|n| format!("; the nearest key it has is {n}")).unwrap_or_default()
                        );
                        let mut hit = Hit::new(format!("values {}", r.path), message);
                        for e in set_keys(r, &from) {
                            hit = hit.evidence(e);
                        }
                        let hit = hit
                            .var("path", r.path.clone())
                            .var("how", how);
                        Some(match near {
                            Some(n) => hit.var("nearest", n).variant("nearest"),
                            None => hit,
                        })
                    }
                }
            })
            .collect()
    }
}
