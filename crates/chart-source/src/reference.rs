//! Chart references as users type them: `oci://host[:port]/repo/name[:tag][@sha256:…]`, a packaged
//! `.tgz`, or a chart directory. Parsing is strict so that a typo fails here, with the input named,
//! instead of as a confusing 404 from a registry later.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReferenceError {
    #[error("chart reference '{input}' is not valid: {reason}")]
    Invalid { input: String, reason: String },
    #[error("chart reference '{0}' is neither an oci:// reference nor an existing .tgz file or chart directory")]
    NotFound(String),
}

/// Where a chart comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartRef {
    Oci(OciRef),
    Archive(PathBuf),
    Directory(PathBuf),
}

impl ChartRef {
    /// Parses what the user typed. Local paths must exist: the error then says so instead of
    /// guessing that a missing path was meant as something else.
    pub fn parse(input: &str) -> Result<ChartRef, ReferenceError> {
        if input.starts_with("oci://") {
            return OciRef::parse(input).map(ChartRef::Oci);
        }
        if let Some((scheme, _)) = input.split_once("://") {
            return Err(invalid(input, format!("the '{scheme}://' scheme is not supported; use oci://, a .tgz file or a chart directory")));
        }
        let path = Path::new(input);
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Ok(ChartRef::Directory(path.to_path_buf())),
            Ok(_) => Ok(ChartRef::Archive(path.to_path_buf())),
            Err(_) if looks_like_registry_path(input) => {
                Err(invalid(input, format!("registry references need the oci:// scheme: oci://{input}")))
            }
            Err(_) => Err(ReferenceError::NotFound(input.to_string())),
        }
    }
}

fn looks_like_registry_path(input: &str) -> bool {
    input.split('/').next().is_some_and(|host| host.contains('.') && !host.starts_with('.') && input.contains('/'))
}

/// An OCI repository, optionally pinned to a tag or a digest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciRef {
    /// `host` or `host:port`, as it appears in URLs and credential stores.
    pub registry: String,
    /// Path inside the registry, e.g. `kubeflow/charts/kubeflow-trainer`.
    pub repository: String,
    /// Tag as the user wrote it (`+` allowed; it becomes `_` on the wire).
    pub tag: Option<String>,
    /// `sha256:<64 hex>`.
    pub digest: Option<String>,
}

impl OciRef {
    pub fn parse(input: &str) -> Result<OciRef, ReferenceError> {
        let rest = input.strip_prefix("oci://").ok_or_else(|| invalid(input, "it must start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((before, digest)) => {
                validate_digest(digest).map_err(|reason| invalid(input, reason))?;
                (before, Some(digest.to_string()))
            }
            None => (rest, None),
        };
        let (registry, path) = rest.split_once('/').ok_or_else(|| {
            invalid(input, "it needs a repository path after the registry host, e.g. oci://ghcr.io/kubeflow/charts/kubeflow-trainer")
        })?;
        validate_registry(registry).map_err(|reason| invalid(input, reason))?;
        // A tag is a ':' in the last path component (a ':' earlier is a port, handled above).
        let (repository, tag) = match path.rsplit_once('/') {
            Some((dir, last)) => match last.split_once(':') {
                Some((name, tag)) => (format!("{dir}/{name}"), Some(tag.to_string())),
                None => (path.to_string(), None),
            },
            None => match path.split_once(':') {
                Some((name, tag)) => (name.to_string(), Some(tag.to_string())),
                None => (path.to_string(), None),
            },
        };
        validate_repository(&repository).map_err(|reason| invalid(input, reason))?;
        if let Some(tag) = &tag {
            validate_tag(tag).map_err(|reason| invalid(input, reason))?;
        }
        Ok(OciRef { registry: registry.to_string(), repository, tag, digest })
    }

    /// The repository without tag or digest.
    pub fn repository_ref(&self) -> OciRef {
        OciRef { tag: None, digest: None, ..self.clone() }
    }

    /// Last path component: the chart name by Helm's convention.
    pub fn name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or(&self.repository)
    }

    pub fn with_tag(&self, tag: &str) -> OciRef {
        OciRef { tag: Some(tag.to_string()), ..self.clone() }
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// OCI tags cannot hold `+`; Helm stores semver build metadata with `_` instead.
pub fn tag_to_wire(tag: &str) -> String {
    tag.replace('+', "_")
}

/// The inverse of [`tag_to_wire`], applied to listed tags before semver parsing.
pub fn tag_from_wire(tag: &str) -> String {
    tag.replace('_', "+")
}

fn invalid(input: &str, reason: impl fmt::Display) -> ReferenceError {
    ReferenceError::Invalid { input: input.to_string(), reason: reason.to_string() }
}

/// What is wrong with one part of an OCI reference (registry, repository, tag or digest); each
/// variant carries the part as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartError {
    #[error("'{0}' is not a registry host name")]
    Host(String),
    #[error("'{0}' is not a port number")]
    Port(String),
    #[error("the repository path is longer than 255 characters")]
    RepositoryTooLong(String),
    #[error("repository path component '{0}' must be lowercase letters and digits, separated by '.', '_', '__' or '-'")]
    RepositoryComponent(String),
    #[error("'{0}' is not a valid tag")]
    Tag(String),
    #[error("'{0}' is not a sha256 digest (sha256: followed by 64 lowercase hex digits)")]
    Digest(String),
}

fn validate_registry(registry: &str) -> Result<(), PartError> {
    let (host, port) = match registry.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (registry, None),
    };
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if !host_ok {
        return Err(PartError::Host(registry.to_string()));
    }
    if let Some(port) = port {
        if port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(PartError::Port(port.to_string()));
        }
    }
    Ok(())
}

/// Distribution spec: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*`.
fn validate_repository(repository: &str) -> Result<(), PartError> {
    if repository.len() > 255 {
        return Err(PartError::RepositoryTooLong(repository.to_string()));
    }
    for component in repository.split('/') {
        if !valid_path_component(component) {
            return Err(PartError::RepositoryComponent(component.to_string()));
        }
    }
    Ok(())
}

fn valid_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    if bytes.is_empty() || !is_alnum(bytes[0]) || !is_alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if is_alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !is_alnum(bytes[i]) {
            i += 1;
        }
        let sep = &component[start..i];
        let dashes = sep.bytes().all(|b| b == b'-');
        if !(sep == "." || sep == "_" || sep == "__" || dashes) {
            return false;
        }
    }
    true
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Tags: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`; `+` is accepted because Helm maps it to `_`.
pub fn validate_tag(tag: &str) -> Result<(), PartError> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && tag.chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '+'));
    if ok {
        Ok(())
    } else {
        Err(PartError::Tag(tag.to_string()))
    }
}

pub fn validate_digest(digest: &str) -> Result<(), PartError> {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => Ok(()),
        _ => Err(PartError::Digest(digest.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_full_reference() {
        let r = OciRef::parse("oci://127.0.0.1:5055/kubeflow/charts/kubeflow-trainer:2.3.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5055");
        assert_eq!(r.repository, "kubeflow/charts/kubeflow-trainer");
        assert_eq!(r.tag.as_deref(), Some("2.3.0"));
        assert_eq!(r.name(), "kubeflow-trainer");
        assert_eq!(r.to_string(), "oci://127.0.0.1:5055/kubeflow/charts/kubeflow-trainer:2.3.0");
    }

    #[test]
    fn parses_digest_and_single_component() {
        let d = format!("sha256:{}", "a".repeat(64));
        let r = OciRef::parse(&format!("oci://ghcr.io/trainer@{d}")).unwrap();
        assert_eq!(r.repository, "trainer");
        assert_eq!(r.tag, None);
        assert_eq!(r.digest.as_deref(), Some(d.as_str()));
        let r = OciRef::parse("oci://ghcr.io/trainer:1.0.0+build.1").unwrap();
        assert_eq!(r.tag.as_deref(), Some("1.0.0+build.1"));
    }

    #[test]
    fn refuses_malformed_references() {
        for bad in [
            "oci://",
            "oci://ghcr.io",
            "oci://ghcr.io/",
            "oci://ghcr.io/Kubeflow/charts",
            "oci://ghcr.io/a//b",
            "oci://gh cr.io/a",
            "oci://ghcr.io:99999/a",
            "oci://ghcr.io/a:",
            "oci://ghcr.io/a:b@sha256:xyz",
            "oci://ghcr.io/a/-b",
        ] {
            assert!(OciRef::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn local_paths_must_exist_and_schemes_are_named() {
        assert_eq!(ChartRef::parse("/nonexistent/chart.tgz"), Err(ReferenceError::NotFound("/nonexistent/chart.tgz".into())));
        let err = ChartRef::parse("ghcr.io/kubeflow/charts/kubeflow-trainer").unwrap_err();
        assert!(err.to_string().contains("oci://ghcr.io/kubeflow"), "{err}");
        let err = ChartRef::parse("https://example.com/chart.tgz").unwrap_err();
        assert!(err.to_string().contains("'https://' scheme is not supported"), "{err}");
        let dir = std::env::temp_dir();
        assert!(matches!(ChartRef::parse(dir.to_str().unwrap()), Ok(ChartRef::Directory(_))));
    }

    #[test]
    fn maps_build_metadata_for_the_wire() {
        assert_eq!(tag_to_wire("1.0.0+b.1"), "1.0.0_b.1");
        assert_eq!(tag_from_wire("1.0.0_b.1"), "1.0.0+b.1");
    }
}
