//! The target version: `--to` resolved among the repository's tags as Helm resolves
//! `--version` (an exact version or tag is taken as it is, pre-releases included, when the
//! repository has it; a range picks the newest release it matches, pre-releases only when the
//! range names one), or the version of the local `--chart`.

use super::store::{ChartSource, ChartStore};
use super::{version, Request, UpgradeError};
use chart_source::versions::{summarise, ChartVersion, VersionRequest};

pub fn resolve(request: &Request, store: &ChartStore) -> Result<semver::Version, UpgradeError> {
    if let Some(path) = &request.chart {
        let chart = store.chart(&ChartSource::Local(path.clone()))?;
        return version(&chart.metadata.version, "target chart");
    }
    let Some(to) = request.to.as_deref() else { return Err(UpgradeError::Usage("pass --to V (or --chart PATH)".into())) };
    pick_in(to, &store.versions()?, &store.origin())
}

/// `to` among `versions` (every tag, newest first).
pub fn pick(to: &str, versions: &[ChartVersion]) -> Result<semver::Version, UpgradeError> {
    pick_in(to, versions, "the repository")
}

/// `to` among the `versions` of `origin` (named in the error).
pub fn pick_in(to: &str, versions: &[ChartVersion], origin: &str) -> Result<semver::Version, UpgradeError> {
    let wanted = VersionRequest::parse(Some(to)).map_err(|e| UpgradeError::Usage(format!("invalid --to: {e}")))?;
    wanted
        .pick(versions)
        .map(|v| v.parsed.clone())
        .ok_or_else(|| UpgradeError::NoVersion(format!("no version matching {to} in {origin} (has: {})", summarise(versions))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chart_source::versions::chart_versions;

    #[test]
    fn exact_tags_keep_pre_releases_and_ranges_pick_releases() {
        let tags: Vec<String> = ["2.3.0", "2.3.1", "2.4.0-rc.0", "2.4.0-rc.1"].iter().map(|s| s.to_string()).collect();
        let versions = chart_versions(&tags);
        assert_eq!(pick("2.4.0-rc.1", &versions).unwrap().to_string(), "2.4.0-rc.1");
        assert_eq!(pick("~2.3", &versions).unwrap().to_string(), "2.3.1");
        assert_eq!(pick(">=2.3", &versions).unwrap().to_string(), "2.3.1");
        assert!(pick("2.4.0-rc.2", &versions).is_err());
        assert!(pick("~2.4", &versions).is_err(), "a range without a pre-release picks releases only");
    }
}
