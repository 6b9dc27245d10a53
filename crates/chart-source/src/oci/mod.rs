//! Reading Helm charts from OCI registries: tag listing (every page), manifests with Helm's
//! media types, and blobs verified by digest and size while they stream.

pub mod challenge;
pub mod client;
pub mod credentials;

use std::time::Duration;

use reqwest::StatusCode;
use sha2::{Digest, Sha256};

pub use client::{ClientOptions, CredentialSource, RegistryClient};

use super::progress::Progress;
use super::reference::{tag_to_wire, OciRef};

pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_LIST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
pub const HELM_CHART_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
pub const LEGACY_CHART_MEDIA_TYPE: &str = "application/tar+gzip";

/// Bounds on what a registry may send. Manifests and configs are small JSON; the chart layer
/// is bounded like Helm bounds a decompressed chart.
pub const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;
pub const MAX_LAYER_BYTES: u64 = 100 * 1024 * 1024;
const MAX_TAG_PAGE_BYTES: usize = 16 * 1024 * 1024;
const MAX_TAG_PAGES: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot reach registry {registry}: {reason}")]
    Transport { registry: String, reason: String },
    #[error("registry {registry} requires authentication: run `helm registry login {registry}`, or pass --username with --password-stdin")]
    Unauthorized { registry: String },
    #[error("authentication with registry {registry} failed: {reason}")]
    Auth { registry: String, reason: String },
    #[error(transparent)]
    Credentials(#[from] credentials::CredentialError),
    #[error("repository {reference} was not found in its registry (check the path)")]
    RepositoryNotFound { reference: String },
    #[error("{reference} was not found in the registry")]
    ManifestNotFound { reference: String },
    #[error("registry {registry} answered {status} for {what}{detail}")]
    Status { registry: String, status: u16, what: String, detail: String },
    #[error("{reference} is not a Helm chart: {reason}")]
    NotAChart { reference: String, reason: String },
    #[error("{what} of {reference} failed verification: expected {expected}, got {actual}; the registry or something between sent different bytes than the manifest names, so nothing was written")]
    DigestMismatch { reference: String, what: String, expected: String, actual: String },
    #[error("{what} of {reference} is {actual} bytes but its descriptor says {expected}; nothing was written")]
    SizeMismatch { reference: String, what: String, expected: u64, actual: u64 },
    #[error("{what} of {reference} is {size} bytes, more than the {limit}-byte limit")]
    TooLarge { reference: String, what: String, size: u64, limit: u64 },
    #[error("registry {registry} sent a tag list that could not be read: {reason}")]
    BadTagList { registry: String, reason: String },
}

/// One descriptor of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
}

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    schema_version: Option<u32>,
    #[serde(default)]
    media_type: Option<String>,
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

/// A Helm chart manifest: its digest, its config and its chart layer.
#[derive(Debug, Clone)]
pub struct ChartManifest {
    pub digest: String,
    pub bytes: Vec<u8>,
    pub config: Descriptor,
    pub chart_layer: Descriptor,
    /// True when the layer uses the deprecated `application/tar+gzip` type.
    pub legacy_layer: bool,
}

/// Checks that raw manifest bytes describe a Helm chart, with Helm's media types.
pub fn parse_chart_manifest(reference: &OciRef, digest: String, bytes: Vec<u8>) -> Result<ChartManifest, RegistryError> {
    let not_chart = |reason: &str| RegistryError::NotAChart { reference: reference.to_string(), reason: reason.to_string() };
    let raw: RawManifest = serde_json::from_slice(&bytes).map_err(|_| not_chart("its manifest is not valid OCI manifest JSON"))?;
    if matches!(raw.media_type.as_deref(), Some(INDEX_MEDIA_TYPE | DOCKER_LIST_MEDIA_TYPE)) {
        return Err(not_chart("it is a multi-platform image index (a container image?)"));
    }
    if raw.schema_version != Some(2) {
        return Err(not_chart("its manifest is not schemaVersion 2"));
    }
    let config = raw.config.ok_or_else(|| not_chart("its manifest has no config"))?;
    if config.media_type != HELM_CONFIG_MEDIA_TYPE {
        return Err(not_chart(&format!(
            "its config media type is {} instead of {HELM_CONFIG_MEDIA_TYPE} (a container image?)",
            config.media_type
        )));
    }
    let mut chart_layers = raw.layers.iter().filter(|l| l.media_type == HELM_CHART_MEDIA_TYPE || l.media_type == LEGACY_CHART_MEDIA_TYPE);
    let chart_layer = chart_layers.next().cloned().ok_or_else(|| not_chart(&format!("it has no {HELM_CHART_MEDIA_TYPE} layer")))?;
    if chart_layers.next().is_some() {
        return Err(not_chart("it has more than one chart layer"));
    }
    for descriptor in std::iter::once(&config).chain(&raw.layers) {
        super::reference::validate_digest(&descriptor.digest).map_err(|reason| not_chart(&reason.to_string()))?;
    }
    let legacy_layer = chart_layer.media_type == LEGACY_CHART_MEDIA_TYPE;
    Ok(ChartManifest { digest, bytes, config, chart_layer, legacy_layer })
}

pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

fn pull_scope(reference: &OciRef) -> String {
    format!("repository:{}:pull", reference.repository)
}

impl RegistryClient {
    /// Every tag of the repository, following `Link: <…>; rel="next"` until the last page.
    pub async fn list_tags(&self, reference: &OciRef) -> Result<Vec<String>, RegistryError> {
        let scope = pull_scope(reference);
        let mut url = self.url(&format!("{}/tags/list", reference.repository));
        let mut tags = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_TAG_PAGES {
            if !seen.insert(url.clone()) {
                return Err(self.bad_tags("its pagination links loop back to a page already read"));
            }
            let response = self.get(&url, "application/json", &scope, Some(self.timeout())).await?;
            let status = response.status();
            if status == StatusCode::NOT_FOUND {
                return Err(RegistryError::RepositoryNotFound { reference: reference.repository_ref().to_string() });
            }
            if !status.is_success() {
                return Err(self.status_error(response, "the tag list").await);
            }
            let next = next_link(response.headers())
                .map(|link| resolve_link(&url, &link))
                .transpose()
                .map_err(|r| self.bad_tags(&r.to_string()))?;
            let body = client::read_limited(response, MAX_TAG_PAGE_BYTES).await.map_err(|e| self.transport_error(&e))?;
            if body.len() > MAX_TAG_PAGE_BYTES {
                return Err(self.bad_tags("a page is larger than 16 MiB"));
            }
            #[derive(serde::Deserialize)]
            struct Page {
                #[serde(default)]
                tags: Option<Vec<String>>,
            }
            let page: Page = serde_json::from_slice(&body).map_err(|e| self.bad_tags(&e.to_string()))?;
            tags.extend(page.tags.unwrap_or_default());
            match next {
                Some(next) => url = next,
                None => return Ok(tags),
            }
        }
        Err(self.bad_tags(&format!("it has more than {MAX_TAG_PAGES} pages")))
    }

    fn bad_tags(&self, reason: &str) -> RegistryError {
        RegistryError::BadTagList { registry: self.registry().to_string(), reason: reason.to_string() }
    }

    /// The manifest for a tag or digest, verified against the requested digest and the
    /// registry's `Docker-Content-Digest`.
    pub async fn fetch_manifest(&self, reference: &OciRef) -> Result<ChartManifest, RegistryError> {
        let target = match (&reference.digest, &reference.tag) {
            (Some(digest), _) => digest.clone(),
            (None, Some(tag)) => tag_to_wire(tag),
            (None, None) => "latest".to_string(),
        };
        let url = self.url(&format!("{}/manifests/{target}", reference.repository));
        let accept = [MANIFEST_MEDIA_TYPE, INDEX_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE].join(", ");
        let response = self.get(&url, &accept, &pull_scope(reference), Some(self.timeout())).await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Err(RegistryError::ManifestNotFound { reference: reference.to_string() });
        }
        if !status.is_success() {
            return Err(self.status_error(response, &format!("the manifest of {reference}")).await);
        }
        let content_type = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let header_digest = response.headers().get("docker-content-digest").and_then(|v| v.to_str().ok()).map(str::to_string);
        let bytes = client::read_limited(response, MAX_MANIFEST_BYTES).await.map_err(|e| self.transport_error(&e))?;
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(RegistryError::TooLarge {
                reference: reference.to_string(),
                what: "the manifest".into(),
                size: bytes.len() as u64,
                limit: MAX_MANIFEST_BYTES as u64,
            });
        }
        let digest = sha256_digest(&bytes);
        for expected in reference.digest.iter().chain(header_digest.iter().filter(|d| d.starts_with("sha256:"))) {
            if *expected != digest {
                return Err(RegistryError::DigestMismatch {
                    reference: reference.to_string(),
                    what: "the manifest".into(),
                    expected: expected.clone(),
                    actual: digest,
                });
            }
        }
        if content_type.starts_with(INDEX_MEDIA_TYPE) || content_type.starts_with(DOCKER_LIST_MEDIA_TYPE) {
            return Err(RegistryError::NotAChart {
                reference: reference.to_string(),
                reason: "it is a multi-platform image index (a container image?)".into(),
            });
        }
        parse_chart_manifest(reference, digest, bytes)
    }

    /// Downloads one blob, hashing and counting as it streams; refuses a body that is longer or
    /// shorter than the descriptor, or whose digest differs. Transient failures restart it.
    pub async fn fetch_blob(
        &self,
        reference: &OciRef,
        descriptor: &Descriptor,
        what: &str,
        limit: u64,
        mut progress: Option<&mut Progress>,
    ) -> Result<Vec<u8>, RegistryError> {
        if descriptor.size > limit {
            return Err(RegistryError::TooLarge { reference: reference.to_string(), what: what.into(), size: descriptor.size, limit });
        }
        let url = self.url(&format!("{}/blobs/{}", reference.repository, descriptor.digest));
        let mut attempt = 0;
        loop {
            match self.fetch_blob_once(&url, reference, descriptor, what, progress.as_deref_mut()).await {
                Err(BlobFailure::Transient(e)) if attempt < self.retries() => {
                    attempt += 1;
                    tokio::time::sleep(self.backoff(attempt, None)).await;
                    let _ = e;
                }
                Err(BlobFailure::Transient(e)) => return Err(self.transport_error(&e)),
                Err(BlobFailure::Final(e)) => return Err(e),
                Ok(bytes) => return Ok(bytes),
            }
        }
    }

    async fn fetch_blob_once(
        &self,
        url: &str,
        reference: &OciRef,
        descriptor: &Descriptor,
        what: &str,
        mut progress: Option<&mut Progress>,
    ) -> Result<Vec<u8>, BlobFailure> {
        // The whole download may take as long as a slow link needs, but not forever.
        let deadline = self.timeout() + Duration::from_secs(descriptor.size / (32 * 1024));
        let mut response = self.get(url, "*/*", &pull_scope(reference), Some(deadline)).await.map_err(BlobFailure::Final)?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Err(BlobFailure::Final(RegistryError::Status {
                registry: self.registry().to_string(),
                status: 404,
                what: format!("{what} {}", descriptor.digest),
                detail: " (the manifest names a blob the registry does not have)".into(),
            }));
        }
        if !status.is_success() {
            return Err(BlobFailure::Final(self.status_error(response, &format!("{what} {}", descriptor.digest)).await));
        }
        let size_error = |actual: u64| {
            BlobFailure::Final(RegistryError::SizeMismatch {
                reference: reference.to_string(),
                what: what.to_string(),
                expected: descriptor.size,
                actual,
            })
        };
        if let Some(length) = response.content_length() {
            if length != descriptor.size {
                return Err(size_error(length));
            }
        }
        let mut hasher = Sha256::new();
        let mut bytes = Vec::with_capacity(descriptor.size as usize);
        while let Some(chunk) = response.chunk().await.map_err(BlobFailure::Transient)? {
            if bytes.len() as u64 + chunk.len() as u64 > descriptor.size {
                return Err(size_error(bytes.len() as u64 + chunk.len() as u64));
            }
            hasher.update(&chunk);
            bytes.extend_from_slice(&chunk);
            if let Some(progress) = progress.as_deref_mut() {
                progress.advance(bytes.len() as u64);
            }
        }
        if (bytes.len() as u64) != descriptor.size {
            return Err(size_error(bytes.len() as u64));
        }
        let actual = format!("sha256:{}", hex(&hasher.finalize()));
        if actual != descriptor.digest {
            return Err(BlobFailure::Final(RegistryError::DigestMismatch {
                reference: reference.to_string(),
                what: what.to_string(),
                expected: descriptor.digest.clone(),
                actual,
            }));
        }
        Ok(bytes)
    }

    /// A non-success answer, with the registry's own error code and message when it sent the
    /// standard JSON (these never contain credentials).
    async fn status_error(&self, response: reqwest::Response, what: &str) -> RegistryError {
        let status = response.status().as_u16();
        let body = client::read_limited(response, 64 * 1024).await.unwrap_or_default();
        #[derive(serde::Deserialize)]
        struct Errors {
            errors: Vec<ErrorItem>,
        }
        #[derive(serde::Deserialize)]
        struct ErrorItem {
            #[serde(default)]
            code: String,
            #[serde(default)]
            message: String,
        }
        let detail = serde_json::from_slice::<Errors>(&body)
            .ok()
            .and_then(|e| e.errors.into_iter().next())
            .map(|e| format!(": {} {}", e.code, e.message.chars().take(200).collect::<String>()))
            .unwrap_or_default();
        RegistryError::Status { registry: self.registry().to_string(), status, what: what.to_string(), detail }
    }
}

enum BlobFailure {
    Transient(reqwest::Error),
    Final(RegistryError),
}

/// The `rel="next"` target of a `Link` header, if any.
pub fn next_link(headers: &reqwest::header::HeaderMap) -> Option<String> {
    for value in headers.get_all(reqwest::header::LINK).iter().filter_map(|v| v.to_str().ok()) {
        for link in value.split(',') {
            let mut parts = link.split(';');
            let target = parts.next()?.trim();
            let is_next = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("rel=").map(|r| r.trim_matches('"').split_whitespace().any(|r| r == "next")).unwrap_or(false)
            });
            if is_next {
                if let Some(target) = target.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
                    return Some(target.to_string());
                }
            }
        }
    }
    None
}

/// Why a tag list's next-page link cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum LinkError {
    /// The page's own URL did not parse (it is built here, so this is a bug if it happens):
    /// the URL and the parser's reason (the `url` crate is not a direct dependency).
    #[error("{reason}")]
    Page { url: String, reason: String },
    #[error("its next-page link '{0}' is not a URL")]
    NotAUrl(String),
    /// The link leaves the registry: the origin it points to.
    #[error("its next-page link points to another host ({0})")]
    OtherHost(String),
}

/// Links may be relative to the page that carried them; they must stay on the same origin.
fn resolve_link(current: &str, link: &str) -> Result<String, LinkError> {
    let base = reqwest::Url::parse(current).map_err(|e| LinkError::Page { url: current.to_string(), reason: e.to_string() })?;
    let next = base.join(link).map_err(|_| LinkError::NotAUrl(link.to_string()))?;
    if next.origin() != base.origin() {
        return Err(LinkError::OtherHost(next.origin().ascii_serialization()));
    }
    Ok(next.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, LINK};

    #[test]
    fn finds_next_links() {
        let mut h = HeaderMap::new();
        h.insert(LINK, HeaderValue::from_static(r#"</v2/a/tags/list?last=b&n=100>; rel="next""#));
        assert_eq!(next_link(&h).as_deref(), Some("/v2/a/tags/list?last=b&n=100"));
        let mut h = HeaderMap::new();
        h.insert(LINK, HeaderValue::from_static(r#"<https://x/prev>; rel="prev", <https://x/next>; rel=next"#));
        assert_eq!(next_link(&h).as_deref(), Some("https://x/next"));
        assert_eq!(next_link(&HeaderMap::new()), None);
    }

    #[test]
    fn links_resolve_relative_and_stay_on_origin() {
        assert_eq!(resolve_link("http://r:5000/v2/a/tags/list", "/v2/a/tags/list?last=x").unwrap(), "http://r:5000/v2/a/tags/list?last=x");
        assert!(resolve_link("http://r:5000/v2/a/tags/list", "http://evil/v2").is_err());
    }

    #[test]
    fn manifests_must_be_helm_charts() {
        let r = OciRef::parse("oci://r.example/c").unwrap();
        let d = |t: &str| format!(r#"{{"mediaType":"{t}","digest":"sha256:{}","size":1}}"#, "a".repeat(64));
        let manifest = |config: &str, layers: &[String]| {
            format!(r#"{{"schemaVersion":2,"config":{},"layers":[{}]}}"#, d(config), layers.join(",")).into_bytes()
        };
        let ok = parse_chart_manifest(&r, "x".into(), manifest(HELM_CONFIG_MEDIA_TYPE, &[d(HELM_CHART_MEDIA_TYPE)])).unwrap();
        assert!(!ok.legacy_layer);
        let legacy = parse_chart_manifest(&r, "x".into(), manifest(HELM_CONFIG_MEDIA_TYPE, &[d(LEGACY_CHART_MEDIA_TYPE)])).unwrap();
        assert!(legacy.legacy_layer);
        let image = parse_chart_manifest(
            &r,
            "x".into(),
            manifest("application/vnd.oci.image.config.v1+json", &[d("application/vnd.oci.image.layer.v1.tar+gzip")]),
        );
        assert!(image.unwrap_err().to_string().contains("a container image?"));
        let no_layer = parse_chart_manifest(&r, "x".into(), manifest(HELM_CONFIG_MEDIA_TYPE, &[]));
        assert!(no_layer.unwrap_err().to_string().contains("has no application/vnd.cncf.helm.chart.content.v1.tar+gzip layer"));
        assert!(parse_chart_manifest(&r, "x".into(), b"<html>".to_vec()).is_err());
    }

    #[test]
    fn digests_are_lowercase_hex_sha256() {
        assert_eq!(sha256_digest(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
