//! The one Kubernetes version type: what an API server reports (`v1.33.4-gke.1245000`), what a
//! user names (`--kube-version 1.33`, `--to-kube 1.37`), what a rule or the compat table states
//! (`1.32`), and what Helm's `.Capabilities.KubeVersion` shows a template. Read as Kubernetes'
//! `version.ParseGeneric` (k8s.io/apimachinery `pkg/util/version`), which Helm v4's
//! `common.ParseKubeVersion` uses: an optional `v`, two or three numeric components, then
//! anything (`-gke.1`, `+k3s1`, the `+` of a `1.30+` minor); the text is kept as given.
//!
//! Versions compare by major, minor and patch (a missing patch is 0); the text after the numbers
//! does not take part, so `v1.38.0-beta.0` equals `1.38.0`. Most questions are about a minor
//! ([`KubeVersion::minor_version`], [`KubeVersion::same_minor`]).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A Kubernetes version, `MAJOR.MINOR[.PATCH]` with the text it was read from.
#[derive(Debug, Clone)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: Option<u32>,
    /// The text as given (without surrounding blanks); empty for a version made by
    /// [`KubeVersion::new`], which then shows as `MAJOR.MINOR`.
    given: String,
}

/// A text that is not a Kubernetes version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadKubeVersion(pub String);

impl fmt::Display for BadKubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a Kubernetes version (MAJOR.MINOR[.PATCH], e.g. 1.33 or v1.33.2)", self.0)
    }
}

impl std::error::Error for BadKubeVersion {}

impl KubeVersion {
    /// `MAJOR.MINOR`, e.g. `KubeVersion::new(1, 32)`.
    pub const fn new(major: u32, minor: u32) -> Self {
        KubeVersion { major, minor, patch: None, given: String::new() }
    }

    /// `MAJOR.MINOR.PATCH`, e.g. `KubeVersion::patch(1, 36, 0)`.
    pub const fn patch(major: u32, minor: u32, patch: u32) -> Self {
        KubeVersion { major, minor, patch: Some(patch), given: String::new() }
    }

    /// Reads `1.33`, `v1.33.2`, `v1.33.4-gke.1245000`, `v1.31.4+k3s1`, `1.30+`.
    pub fn parse(text: &str) -> Result<Self, BadKubeVersion> {
        let bad = || BadKubeVersion(text.to_string());
        let t = text.trim();
        let body = t.strip_prefix('v').unwrap_or(t);
        let core_end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
        let core = &body[..core_end];
        let core = match &body[core_end..] {
            // `1.30.` followed by a suffix is not a component; `1.30.+` neither.
            rest if !rest.is_empty() && core.ends_with('.') => return Err(bad()),
            _ => core,
        };
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        let nums: Vec<u32> = parts.iter().map(|p| p.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
        // ParseGeneric refuses a zero-prefixed major (`01.30`).
        if parts[0].len() > 1 && parts[0].starts_with('0') {
            return Err(bad());
        }
        Ok(KubeVersion { major: nums[0], minor: nums[1], patch: nums.get(2).copied(), given: t.to_string() })
    }

    /// This version's minor, `1.33` of `v1.33.2-gke.1`.
    pub const fn minor_version(&self) -> KubeVersion {
        KubeVersion::new(self.major, self.minor)
    }

    /// Whether both are the same `MAJOR.MINOR`.
    pub fn same_minor(&self, other: &KubeVersion) -> bool {
        (self.major, self.minor) == (other.major, other.minor)
    }

    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// The minor `n` minors before this one (`1.37` → `1.36` for `n` = 1), within major 1.
    pub fn minors_before(&self, n: u32) -> KubeVersion {
        KubeVersion::new(self.major, self.minor.saturating_sub(n))
    }

    /// `vMAJOR.MINOR.PATCH` without the suffix: Helm's normalised version, what `.Capabilities.
    /// KubeVersion` prints and a chart's `kubeVersion` constraint is checked against.
    pub fn normalized(&self) -> String {
        format!("v{}.{}.{}", self.major, self.minor, self.patch.unwrap_or(0))
    }

    /// The text with a leading `v`, as Helm keeps it (`.Capabilities.KubeVersion.Version`) and API
    /// servers report it.
    pub fn git_version(&self) -> String {
        let shown = self.to_string();
        if shown.starts_with('v') {
            shown
        } else {
            format!("v{shown}")
        }
    }

    /// `(major, minor, patch)`, a missing patch as 0: for a semantic version (Helm constraints).
    pub fn triple(&self) -> (u64, u64, u64) {
        (self.major.into(), self.minor.into(), self.patch.unwrap_or(0).into())
    }

    fn key(&self) -> (u64, u64, u64) {
        self.triple()
    }
}

impl PartialEq for KubeVersion {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for KubeVersion {}

impl PartialOrd for KubeVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KubeVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl Hash for KubeVersion {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.given.is_empty() {
            return f.write_str(&self.given);
        }
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = BadKubeVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KubeVersion::parse(s)
    }
}

impl serde::Serialize for KubeVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for KubeVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        KubeVersion::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    #[test]
    fn reads_what_servers_and_users_write() {
        for (text, major, minor, patch) in [
            ("1.33", 1, 33, None),
            ("v1.33.2", 1, 33, Some(2)),
            ("v1.33.4-gke.1245000", 1, 33, Some(4)),
            ("v1.31.4+k3s1", 1, 31, Some(4)),
            ("1.30+", 1, 30, None),
            ("v1.38.0-beta.0", 1, 38, Some(0)),
            ("  v1.36.1 ", 1, 36, Some(1)),
        ] {
            let v = k(text);
            assert_eq!((v.major, v.minor, v.patch), (major, minor, patch), "{text}");
            assert_eq!(v.to_string(), text.trim(), "kept as given");
        }
        for bad in ["", "1", "v1", "1.", "1.x", "x.1", "1..2", "1.2.3.4", "01.30", "1.30.-gke", "latest"] {
            assert!(KubeVersion::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn compares_by_numbers_not_text() {
        assert_eq!(k("v1.38.0-beta.0"), k("1.38.0"));
        assert_eq!(k("1.33"), k("v1.33.0"));
        assert!(k("v1.33.2") > k("1.33"));
        assert!(k("1.32") < KubeVersion::new(1, 33));
        assert!(k("v1.33.9-eks").same_minor(&KubeVersion::new(1, 33)));
        assert!(k("v1.32.13").at_least(1, 32) && !k("v1.31.14").at_least(1, 32));
        assert_eq!(k("v1.37.2").minors_before(1), KubeVersion::new(1, 36));
    }

    #[test]
    fn shows_as_helm_and_servers_do() {
        assert_eq!(KubeVersion::new(1, 32).to_string(), "1.32");
        assert_eq!(k("1.33.4-gke.1").git_version(), "v1.33.4-gke.1");
        assert_eq!(k("v1.33.4-gke.1").normalized(), "v1.33.4");
        assert_eq!(k("1.33").normalized(), "v1.33.0");
        assert_eq!(serde_json::to_string(&k("v1.31.4+k3s1")).unwrap(), "\"v1.31.4+k3s1\"");
        let back: KubeVersion = serde_json::from_str("\"1.37\"").unwrap();
        assert_eq!(back, KubeVersion::new(1, 37));
        assert!(serde_json::from_str::<KubeVersion>("\"soon\"").is_err());
    }
}
