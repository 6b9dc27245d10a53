//! `crd-present`: CRDs of a group (and version) exist in the cluster (leftovers, neighbours).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub group: String,
    #[serde(default)]
    pub version: Option<String>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (group, version) = (self.group.as_str(), self.version.as_deref());
        input
            .state
            .crds()
            .filter(|c| str_at(c, &["spec", "group"]) == group)
            .filter(|c| {
                version.is_none_or(|v| {
                    c.pointer("/spec/versions").and_then(|vs| vs.as_array()).is_some_and(|vs| vs.iter().any(|x| str_at(x, &["name"]) == v))
                })
            })
            .map(|c| {
                let name = str_at(c, &["metadata", "name"]);
                Hit::new(
                    format!("CustomResourceDefinition/{name}"),
                    format!("{name} is installed ({group}{})", version.map(|v| format!("/{v}")).unwrap_or_default()),
                )
                .var("crd", name)
            })
            .collect()
    }
}
