//! `values-unknown-key`: user values the target chart does not have (Helm ignores them
//! silently, so settings the release relies on stop applying). A key the target renamed is
//! named with its successor (the printed upgrade carries it); a key the installed chart's
//! templates read and that has no successor is left to `values-removed-key`, an error.

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

/// The user's values the target chart neither declares in `values.yaml` nor reads in a
/// template, folded to the roots of the subtrees it lacks.
pub fn unknown_keys<'a>(input: &'a CheckInput) -> Vec<Unknown<'a>> {
    let mut user = BTreeMap::new();
    crate::inventory::flatten_values(&input.user_values, "", &mut user);
    let defaults = &input.target.values;
    let subcharts: Vec<&String> = input.target.chart.subcharts.keys().collect();
    let known = |path: &str| {
        let top = path.split('.').next().unwrap_or(path);
        top == "global"
            || subcharts.iter().any(|s| s.as_str() == top)
            || defaults.keys().any(|d| d == path || path.starts_with(&format!("{d}.")) || d.starts_with(&format!("{path}.")))
            || input.target.value_uses.iter().any(|u| u.reads(path))
    };
    let unknown: Vec<String> = user.keys().filter(|p| !known(p)).cloned().collect();
    let roots = crate::inventory::paths::collapse(&unknown.iter().cloned().collect(), &defaults.keys().cloned().collect());
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
                                "the release sets {r}; the chart renamed {} to {} ({}) in {}.{}.{}, and the printed upgrade carries each value there with --set-string",
                                n.from, n.to, n.controls, n.since.0, n.since.1, n.since.2
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
                        Some(
                            Hit::new(
                                format!("values {}", r.path),
                                format!(
                                    "the release sets {r}, which the {} chart does not have: Helm ignores it silently{installed}",
                                    input.to
                                ),
                            )
                            .evidence(format!("user value {}", r.path))
                            .var("path", r.path.clone()),
                        )
                    }
                }
            })
            .collect()
    }
}
