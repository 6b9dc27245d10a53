//! `kube-version`: the cluster is older than the target needs (no Trainer chart sets
//! `kubeVersion`, so Helm does not check it).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `MAJOR.MINOR`, e.g. `1.31`.
    #[serde(deserialize_with = "minor_version")]
    pub min: (String, u64),
}

fn minor_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(String, u64), D::Error> {
    let text = String::deserialize(d)?;
    match text.split_once('.').and_then(|(major, minor)| Some((major.parse::<u64>().ok()?, minor.parse::<u64>().ok()?))) {
        Some((1, minor)) => Ok((text, minor)),
        _ => Err(serde::de::Error::custom(format!("min {text:?} is not a Kubernetes version like 1.31"))),
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (min, min_minor) = (&self.min.0, self.min.1);
        let server = input.state.info.server_version.as_deref().unwrap_or("?");
        match input.state.server_minor() {
            Some(minor) if minor >= min_minor => Vec::new(),
            Some(_) => vec![Hit::new("cluster", format!("Kubernetes {server} is older than {min}, which {} needs", input.to))
                .evidence(format!("server version {server}"))
                .var("min", min.as_str())],
            None => vec![Hit::new("cluster", format!("the Kubernetes version is unknown; {} needs {min} or later", input.to))
                .evidence("no server version (snapshot without ClusterInfo): pass --kube-version")
                .var("min", min.as_str())],
        }
    }
}
