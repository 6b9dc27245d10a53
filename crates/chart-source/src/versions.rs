//! Chart versions from a repository's tags, and choosing one for `--version`: tags are kept
//! when they are strict semver after Helm's `_` → `+` mapping, ordered by semver precedence
//! (newest first), and ranges resolve to the highest match as Helm resolves them.

use std::cmp::Ordering;

use semver::Version;

use super::reference::{tag_from_wire, validate_tag};
use helm_render::version::{parse_strict, precedence, Constraint, ConstraintError};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChartVersion {
    /// Semver text, with `+` restored.
    pub version: String,
    /// The tag as the registry lists it.
    pub tag: String,
    pub prerelease: bool,
    #[serde(skip)]
    pub parsed: Version,
}

/// Every tag that is a strict semver version, newest first. Equal precedence (differing only
/// in build metadata) falls back to the tag text so the order is always the same.
pub fn chart_versions(tags: &[String]) -> Vec<ChartVersion> {
    let mut versions: Vec<ChartVersion> = tags
        .iter()
        .filter_map(|tag| {
            let text = tag_from_wire(tag);
            let parsed = parse_strict(&text)?;
            Some(ChartVersion { version: text, tag: tag.clone(), prerelease: !parsed.pre.is_empty(), parsed })
        })
        .collect();
    versions.sort_by(|a, b| precedence(&b.parsed, &a.parsed).then_with(|| b.tag.cmp(&a.tag)));
    versions.dedup_by(|a, b| a.tag == b.tag);
    versions
}

/// What `--version` asked for.
#[derive(Debug, Clone)]
pub enum VersionRequest {
    /// No version: the newest release.
    Latest,
    /// A full semver version, or a tag that is not a range: fetched by that tag directly.
    Exact(String),
    Range(Constraint),
}

impl VersionRequest {
    pub fn parse(input: Option<&str>) -> Result<VersionRequest, ConstraintError> {
        let Some(input) = input.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(VersionRequest::Latest);
        };
        if parse_strict(input).is_some() {
            return Ok(VersionRequest::Exact(input.to_string()));
        }
        match Constraint::parse(input) {
            Ok(constraint) => Ok(VersionRequest::Range(constraint)),
            // Not a range either: a literal tag such as `latest` or `sha-abc1234`.
            Err(e) if validate_tag(input).is_ok() && input.chars().any(|c| c.is_ascii_alphabetic()) => {
                let _ = e;
                Ok(VersionRequest::Exact(input.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    /// True when resolving needs the tag list.
    pub fn needs_tag_list(&self) -> bool {
        !matches!(self, VersionRequest::Exact(_))
    }

    /// Picks from versions sorted newest first (see [`chart_versions`]).
    pub fn pick<'a>(&self, versions: &'a [ChartVersion]) -> Option<&'a ChartVersion> {
        match self {
            VersionRequest::Latest => versions.iter().find(|v| !v.prerelease),
            VersionRequest::Exact(text) => versions.iter().find(|v| v.version == *text || v.tag == *text),
            VersionRequest::Range(constraint) => versions.iter().find(|v| constraint.matches(&v.parsed)),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            VersionRequest::Latest => "release".to_string(),
            VersionRequest::Exact(text) => format!("version {text}"),
            VersionRequest::Range(c) => format!("version matching '{c}'"),
        }
    }
}

/// Newest first, releases only unless `all`.
pub fn visible(versions: &[ChartVersion], all: bool) -> Vec<&ChartVersion> {
    versions.iter().filter(|v| all || !v.prerelease).collect()
}

/// For error messages: the versions that exist, newest first, releases then (if there are few)
/// pre-releases.
pub fn summarise(versions: &[ChartVersion]) -> String {
    let releases: Vec<&str> = versions.iter().filter(|v| !v.prerelease).map(|v| v.version.as_str()).collect();
    let shown: Vec<&str> = if releases.is_empty() {
        versions.iter().map(|v| v.version.as_str()).take(20).collect()
    } else {
        releases.into_iter().take(20).collect()
    };
    if shown.is_empty() {
        "none".to_string()
    } else {
        shown.join(", ")
    }
}

pub fn compare(a: &ChartVersion, b: &ChartVersion) -> Ordering {
    precedence(&a.parsed, &b.parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keeps_strict_semver_sorted_newest_first() {
        let v = chart_versions(&tags(&[
            "2.2.0",
            "latest",
            "v2.3.0",
            "2.3.0-rc.3",
            "2.3.0",
            "0.0.0-sha-abc1234",
            "2.10.0",
            "1.0.0_build.5",
            "2.2",
        ]));
        let names: Vec<&str> = v.iter().map(|c| c.version.as_str()).collect();
        assert_eq!(names, ["2.10.0", "2.3.0", "2.3.0-rc.3", "2.2.0", "1.0.0+build.5", "0.0.0-sha-abc1234"]);
        assert_eq!(v[4].tag, "1.0.0_build.5");
        assert!(v[2].prerelease && !v[1].prerelease);
    }

    #[test]
    fn resolves_like_helm() {
        let v = chart_versions(&tags(&["2.0.0", "2.1.0", "2.2.0", "2.2.1", "2.3.0-rc.3", "2.3.0", "0.0.0-sha-1"]));
        let pick = |s: Option<&str>| VersionRequest::parse(s).unwrap().pick(&v).map(|c| c.version.clone());
        assert_eq!(pick(None).as_deref(), Some("2.3.0"));
        assert_eq!(pick(Some("~2.2")).as_deref(), Some("2.2.1"));
        assert_eq!(pick(Some("<2.3")).as_deref(), Some("2.2.1"));
        assert_eq!(pick(Some(">=2.4")), None);
        // Every term without a pre-release excludes pre-releases (Masterminds), so this is empty.
        assert_eq!(pick(Some(">=2.3.0-rc.0 <2.3.0")), None);
        assert_eq!(pick(Some(">=2.3.0-rc.0 <2.3.0-rc.9")).as_deref(), Some("2.3.0-rc.3"));
        assert_eq!(pick(Some("2.3.0-rc.3")).as_deref(), Some("2.3.0-rc.3"));
        assert_eq!(pick(Some("2.1.0")).as_deref(), Some("2.1.0"));
        assert!(matches!(VersionRequest::parse(Some("latest")).unwrap(), VersionRequest::Exact(_)));
        assert!(VersionRequest::parse(Some(">>2")).is_err());
    }
}
