//! `values-removed-key`: a user value the installed chart's templates read, that the target
//! chart neither has nor renamed (no successor in the rename table): the setting it fed stops
//! applying at the upgrade, silently. The hit names what it controlled: each template line of
//! the installed chart that reads it.

use serde::Deserialize;

use super::values_unknown_key::{folded, set_keys, unknown_keys, where_and_how};
use super::{Check, Hit};
use crate::audit::input::CheckInput;

/// Template lines named in the message (all are in the evidence).
const SHOWN: usize = 3;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn reads_cluster(&self) -> bool {
        false
    }

    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        unknown_keys(input)
            .into_iter()
            .filter(|u| u.renamed.is_none() && !u.installed_uses.is_empty())
            .map(|u| {
                let r = &u.root;
                let installed = input.installed.expect("installed uses come from the installed chart");
                // One entry per template line (a line may read several of the user's paths).
                let mut lines: Vec<&crate::inventory::value_uses::ValueUse> = Vec::new();
                for x in &u.installed_uses {
                    if !lines.iter().any(|l| l.file == x.file && l.line == x.line) {
                        lines.push(x);
                    }
                }
                // What each template renders in the installed chart (helpers render nothing).
                let renders = |file: &str| -> Vec<String> {
                    let of = |source: &str| source == file || source.ends_with(&format!("/{file}"));
                    let mut out: Vec<String> = installed
                        .objects
                        .iter()
                        .filter(|o| of(&o.source))
                        .map(|o| format!("{}/{}", o.identity.kind, o.identity.name))
                        .chain(installed.hooks.iter().filter(|h| of(&h.source)).map(|h| format!("{}/{} (hook)", h.identity.kind, h.identity.name)))
                        .collect();
                    out.dedup();
                    out
                };
                let at = |l: &crate::inventory::value_uses::ValueUse| {
                    let objects = renders(&l.file);
                    let objects = if objects.is_empty() { String::new() } else { format!(" (renders {})", objects.join(", ")) };
                    format!("{}:{}{objects} `{}`", l.file, l.line, l.text)
                };
                let shown: Vec<String> = lines.iter().map(|l| at(l)).collect();
                let mut files: Vec<&str> = lines.iter().map(|x| x.file.as_str()).collect();
                files.dedup();
                let (from, how) = where_and_how(input, &r.path, &format!("Then remove {}", r.path));
                // A downgrade: the key is newer than the target, so "successor" and "before
                // upgrading" do not fit (variant `downgrade`).
                let down = input.to < input.from;
                let mut hit = Hit::new(
                    format!("values {}", r.path),
                    format!(
                        "{}, set by {from}, is read by the installed {} chart in {}; the {} chart {}, so what it set there stops applying (Helm ignores the value silently)",
                        folded(r),
                        input.from,
                        super::support::listed(&shown, SHOWN, "; "),
                        input.to,
                        if down { "is older and does not have it yet (a downgrade)" } else { "has no such key and no successor" }
                    ),
                )
                .var("path", r.path.clone())
                .var("how", how)
                .var("controlled", files.join(", "));
                for e in set_keys(r, &from) {
                    hit = hit.evidence(e);
                }
                for l in &lines {
                    hit = hit.evidence(format!("installed {} chart {}", input.from, at(l)));
                }
                if down {
                    hit = hit.variant("downgrade");
                }
                hit
            })
            .collect()
    }
}
