//! The target version: `--to` resolved among the repository's tags as Helm resolves
//! `--version` (an exact version or tag is taken as it is, pre-releases included, when the
//! repository has it; a range picks the newest release it matches, pre-releases only when the
//! range names one), or the version of the local `--chart`.

use super::store::{ChartSource, ChartStore};
use super::{version, Request, UpgradeError};
use crate::source::versions::{summarise, VersionRequest};

pub fn resolve(request: &Request, store: &ChartStore) -> Result<semver::Version, UpgradeError> {
    if let Some(path) = &request.chart {
        let chart = store.chart(&ChartSource::Local(path.clone()))?;
        return version(&chart.metadata.version, "target chart");
    }
    let Some(to) = request.to.as_deref() else { return Err(UpgradeError::Usage("pass --to V (or --chart PATH)".into())) };
    let wanted = VersionRequest::parse(Some(to)).map_err(|e| UpgradeError::Usage(format!("invalid --to: {e}")))?;
    let versions = store.versions()?;
    wanted
        .pick(&versions)
        .map(|v| v.parsed.clone())
        .ok_or_else(|| UpgradeError::Usage(format!("no version matching {to} in the repository (has: {})", summarise(&versions))))
}
