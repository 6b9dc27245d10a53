//! `values-unknown-key`: user values the target chart does not have (Helm ignores them
//! silently, so settings the release relies on stop applying).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let mut user = BTreeMap::new();
        crate::inventory::flatten_values(&input.user_values, "", &mut user);
        let defaults = &input.target.values;
        let subcharts: Vec<&String> = input.target.chart.subcharts.keys().collect();
        let known = |path: &str| {
            let top = path.split('.').next().unwrap_or(path);
            top == "global"
                || subcharts.iter().any(|s| s.as_str() == top)
                || defaults.keys().any(|d| d == path || path.starts_with(&format!("{d}.")) || d.starts_with(&format!("{path}.")))
        };
        let unknown: Vec<String> = user.keys().filter(|p| !known(p)).cloned().collect();
        let roots = crate::inventory::paths::collapse(&unknown.iter().cloned().collect(), &defaults.keys().cloned().collect());
        roots
            .into_iter()
            .map(|r| {
                let renamed = crate::audit::renames::crossed(&input.from, &input.to)
                    .into_iter()
                    .find(|n| r.path == n.from || r.path.starts_with(&format!("{}.", n.from)));
                match renamed {
                    // Carried under the new name by the printed upgrade (plan::step).
                    Some(n) => Hit::new(
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
                    None => Hit::new(
                        format!("values {}", r.path),
                        format!("the release sets {r}, which the {} chart does not have: Helm ignores it silently", input.to),
                    )
                    .evidence(format!("user value {}", r.path))
                    .var("path", r.path.clone()),
                }
            })
            .collect()
    }
}
