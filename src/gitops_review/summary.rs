//! The chart diff of a reviewed change in short (`trainer-audit diff` has the whole of it): what
//! changes in CRDs, runtimes, default values, RBAC, images, hooks and subcharts, with names
//! where a reviewer wants them and counts elsewhere.

use serde::Serialize;

use crate::diff::{ChartDiff, Status};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DiffSummary {
    /// `name (what changed)`, e.g. `jobsets.jobset.x-k8s.io (schema +3 −1, enums 1)`.
    pub crds: Vec<String>,
    pub runtimes_changed: usize,
    pub values_added: usize,
    pub values_removed: usize,
    pub values_changed: usize,
    pub rbac_added: usize,
    pub rbac_removed: usize,
    /// `repository a → b`.
    pub images: Vec<String>,
    pub hooks_added: Vec<String>,
    pub hooks_removed: Vec<String>,
    /// `name a → b`.
    pub subcharts: Vec<String>,
}

pub fn summarise(d: &ChartDiff) -> DiffSummary {
    let crds = d
        .crds
        .iter()
        .map(|c| {
            let what = match c.status {
                Status::Added => "added".to_string(),
                Status::Removed => "removed".to_string(),
                Status::Changed => {
                    let mut parts = Vec::new();
                    if let Some(m) = &c.moved {
                        parts.push(format!("moves {} → {}", origin(&m.from), origin(&m.to)));
                    }
                    if !c.schema_added.is_empty() || !c.schema_removed.is_empty() {
                        parts.push(format!("schema +{} −{}", c.schema_added.len(), c.schema_removed.len()));
                    }
                    for (n, what) in [(c.types.len(), "types"), (c.enums.len(), "enums"), (c.validation.len(), "validation")] {
                        if n > 0 {
                            parts.push(format!("{what} {n}"));
                        }
                    }
                    if c.keep.is_some() {
                        parts.push("keep policy".into());
                    }
                    if parts.is_empty() {
                        "changed".into()
                    } else {
                        parts.join(", ")
                    }
                }
            };
            format!("{} ({what})", c.name)
        })
        .collect();
    let join = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    DiffSummary {
        crds,
        runtimes_changed: d.runtimes.len(),
        values_added: d.values.added.len(),
        values_removed: d.values.removed.len(),
        values_changed: d.values.changed.len(),
        rbac_added: d.rbac.added.len(),
        rbac_removed: d.rbac.removed.len(),
        images: d.images.iter().map(|i| format!("{} {} → {}", i.repository, join(&i.from), join(&i.to))).collect(),
        hooks_added: d.hooks.added.clone(),
        hooks_removed: d.hooks.removed.clone(),
        subcharts: d
            .subcharts
            .iter()
            .map(|s| format!("{} {} → {}", s.name, s.from.as_deref().unwrap_or("-"), s.to.as_deref().unwrap_or("-")))
            .collect(),
    }
}

fn origin(o: &crate::objects::Origin) -> &'static str {
    match o {
        crate::objects::Origin::Template => "templates/",
        crate::objects::Origin::Hook => "a hook",
        crate::objects::Origin::CrdsDir => "crds/",
    }
}

impl DiffSummary {
    /// One line per part that changes.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.crds.is_empty() {
            out.push(format!("CRDs: {}", self.crds.join("; ")));
        }
        if self.runtimes_changed > 0 {
            out.push(format!("runtimes: {} changed", self.runtimes_changed));
        }
        if self.values_added + self.values_removed + self.values_changed > 0 {
            out.push(format!(
                "default values: {} added, {} removed, {} changed",
                self.values_added, self.values_removed, self.values_changed
            ));
        }
        if self.rbac_added + self.rbac_removed > 0 {
            out.push(format!("RBAC grants: {} added, {} removed", self.rbac_added, self.rbac_removed));
        }
        if !self.images.is_empty() {
            out.push(format!("images: {}", self.images.join("; ")));
        }
        if !self.hooks_added.is_empty() || !self.hooks_removed.is_empty() {
            let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
            out.push(format!("hooks: added {}; removed {}", list(&self.hooks_added), list(&self.hooks_removed)));
        }
        if !self.subcharts.is_empty() {
            out.push(format!("subcharts: {}", self.subcharts.join("; ")));
        }
        out
    }
}
