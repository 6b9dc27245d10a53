//! The target chart's CRDs on their own, for the commands that validate objects against them
//! without auditing an upgrade (`migrate`, `status --to`): the version resolved as `check`
//! resolves it (`--to` among the repository's tags, or a local `--chart`; the newest release
//! when neither is given, as `helm upgrade` without `--version` takes), the chart pulled, loaded
//! and rendered once with its defaults plus the user's value flags.

use serde_json::Value as Json;

use super::store::{ChartSource, ChartStore, RenderFor};
use super::target::{pick, resolve};
use super::{Request, UpgradeError};
use chart_source::versions::{summarise, VersionRequest};

/// The CRDs a chart renders.
#[derive(Debug, Clone)]
pub struct ChartCrds {
    pub version: semver::Version,
    /// `oci://host/repo/name 2.3.0`, or the local chart as given.
    pub chart: String,
    /// Every CustomResourceDefinition of the render (templates and `crds/`), as JSON.
    pub crds: Vec<Json>,
}

pub fn chart_crds(request: &Request) -> Result<ChartCrds, UpgradeError> {
    let repository = if request.chart.is_some() { None } else { request.repository.clone() };
    let store = ChartStore::new(repository, request.registry.clone());
    let version = match (&request.chart, &request.to) {
        (None, None) => {
            let versions = store.versions()?;
            let latest = VersionRequest::Latest.pick(&versions).map(|v| v.parsed.clone());
            latest.ok_or_else(|| {
                let repo = store.repository().map(ToString::to_string).unwrap_or_default();
                UpgradeError::Usage(format!(
                    "{repo} has no release to validate against (it has: {}): pass --to V or --chart PATH",
                    summarise(&versions)
                ))
            })?
        }
        (None, Some(to)) => pick(to, &store.versions()?)?,
        (Some(_), _) => resolve(request, &store)?,
    };
    let (source, chart) = match &request.chart {
        Some(path) => (ChartSource::Local(path.clone()), path.clone()),
        None => {
            let repo = store.repository().map(ToString::to_string).unwrap_or_default();
            (ChartSource::Version(version.clone()), format!("{repo} {version}"))
        }
    };
    let render = RenderFor {
        release: request.release.clone().unwrap_or_else(|| "kubeflow-trainer".into()),
        namespace: request.namespace.clone().unwrap_or_else(|| crate::cluster::live::DEFAULT_NAMESPACE.into()),
        values: request.values.merged().clone(),
        kube_version: None,
    };
    let inventory = store.inventory(&source, &render)?;
    let crds: Vec<Json> =
        inventory.objects.iter().filter(|o| o.identity.kind == "CustomResourceDefinition").map(|o| o.body.clone()).collect();
    if crds.is_empty() {
        return Err(UpgradeError::Usage(format!(
            "the chart {chart} renders no CustomResourceDefinition (is crds.enabled false?): nothing to validate against"
        )));
    }
    Ok(ChartCrds { version, chart, crds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_chart_gives_its_version_and_crds() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules/charts/to");
        let request = Request { chart: Some(dir.into()), ..Request::default() };
        let c = chart_crds(&request).unwrap();
        assert_eq!(c.version.to_string(), "2.3.0");
        let names: Vec<&str> = c.crds.iter().filter_map(|c| c.pointer("/metadata/name").and_then(Json::as_str)).collect();
        assert!(names.contains(&"trainjobs.trainer.kubeflow.org"), "{names:?}");
        let none = Request { chart: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules/charts/nope").into()), ..Request::default() };
        assert!(chart_crds(&none).is_err());
    }
}
