//! Pulling one chart version: resolve the version (exact tag, range, or latest release), fetch
//! and verify the manifest, config and chart layer, serving blobs from the cache when it has
//! them, and save `<name>-<version>.tgz` atomically.

use std::path::{Path, PathBuf};

use super::cache::{create_and_write, Cache};
use super::oci::{
    sha256_digest, ChartManifest, ClientOptions, Descriptor, RegistryClient, RegistryError, MAX_CONFIG_BYTES, MAX_LAYER_BYTES,
};
use super::progress::Progress;
use super::reference::{tag_to_wire, OciRef};
use super::versions::{chart_versions, summarise, VersionRequest};

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{reference} has no {wanted}; versions there: {available}")]
    NoMatch { reference: String, wanted: String, available: String },
    #[error("chart reference and version mismatch: {version} is not {tag} (drop one of them)")]
    TagMismatch { version: String, tag: String },
    #[error("{reference} resolves to manifest {actual}, not the pinned {expected}")]
    PinnedDigestMismatch { reference: String, expected: String, actual: String },
    #[error("--offline: {what} is not in the cache at {cache}; pull it once without --offline")]
    NotCached { what: String, cache: String },
    /// An offline pull without a cache ([`Puller::cache`] is None).
    #[error("--offline needs a cache directory")]
    NoCache,
    #[error("{reference} is not a Helm chart: {reason}")]
    BadConfig { reference: String, reason: String },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

/// A pulled chart archive and where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PulledChart {
    pub name: String,
    pub version: String,
    /// The exact reference pulled (`oci://…:tag@digest`).
    pub reference: String,
    pub manifest_digest: String,
    pub layer_digest: String,
    /// True when the chart layer came from the cache.
    pub cached: bool,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

pub struct Puller {
    pub client_options: ClientOptions,
    pub cache: Option<Cache>,
    pub offline: bool,
    pub progress: bool,
}

impl Puller {
    pub async fn pull(&self, reference: &OciRef, version: Option<&str>) -> Result<PulledChart, PullError> {
        self.pull_using(None, reference, version).await
    }

    /// As [`Puller::pull`], through `client` when given (a run that pulls several charts from one
    /// registry keeps one client and its tokens).
    pub async fn pull_using(
        &self,
        client: Option<&RegistryClient>,
        reference: &OciRef,
        version: Option<&str>,
    ) -> Result<PulledChart, PullError> {
        if let (Some(version), Some(tag)) = (version, &reference.tag) {
            if version != tag {
                return Err(PullError::TagMismatch { version: version.into(), tag: tag.clone() });
            }
        }
        let request = VersionRequest::parse(version.or(reference.tag.as_deref())).map_err(|e| PullError::NoMatch {
            reference: reference.repository_ref().to_string(),
            wanted: e.to_string(),
            available: String::new(),
        })?;
        let repository = reference.repository_ref();
        if self.offline {
            return self.pull_offline(reference, &request);
        }
        let owned;
        let client = match client {
            Some(client) => client,
            None => {
                owned = RegistryClient::new(&reference.registry, self.client_options.clone())?;
                &owned
            }
        };
        let target = match (&request, &reference.digest) {
            (VersionRequest::Latest, Some(digest)) => OciRef { digest: Some(digest.clone()), ..repository.clone() },
            (VersionRequest::Exact(tag), digest) => OciRef { digest: digest.clone(), ..repository.with_tag(tag) },
            (_, digest) => {
                let tags = client.list_tags(&repository).await?;
                let versions = chart_versions(&tags);
                let chosen = request.pick(&versions).ok_or_else(|| PullError::NoMatch {
                    reference: repository.to_string(),
                    wanted: request.describe(),
                    available: summarise(&versions),
                })?;
                OciRef { digest: digest.clone(), ..repository.with_tag(&chosen.version) }
            }
        };
        // With a pinned digest, the tag must still point at it.
        let fetch_ref = OciRef { digest: None, ..target.clone() };
        let fetch_ref = if fetch_ref.tag.is_none() { target.clone() } else { fetch_ref };
        let manifest = match client.fetch_manifest(&fetch_ref).await {
            Err(RegistryError::ManifestNotFound { .. }) if matches!(request, VersionRequest::Exact(_)) => {
                let versions = chart_versions(&client.list_tags(&repository).await?);
                return Err(PullError::NoMatch {
                    reference: repository.to_string(),
                    wanted: request.describe(),
                    available: summarise(&versions),
                });
            }
            other => other?,
        };
        if let Some(expected) = &target.digest {
            if *expected != manifest.digest {
                return Err(PullError::PinnedDigestMismatch {
                    reference: fetch_ref.to_string(),
                    expected: expected.clone(),
                    actual: manifest.digest,
                });
            }
        }
        if let Some(cache) = &self.cache {
            let stored = cache.put_blob(&manifest.digest, &manifest.bytes).and_then(|_| match &target.tag {
                Some(tag) => cache.record_tag(&repository, &tag_to_wire(tag), &manifest.digest),
                None => Ok(()),
            });
            warn_cache(cache, stored);
        }
        self.finish(client, &target, manifest).await
    }

    async fn finish(&self, client: &RegistryClient, target: &OciRef, manifest: ChartManifest) -> Result<PulledChart, PullError> {
        if manifest.legacy_layer {
            eprintln!("warning: chart media type application/tar+gzip is deprecated ({target})");
        }
        let config_bytes = self.blob(client, target, &manifest.config, "the chart config", MAX_CONFIG_BYTES, None).await?.0;
        let (name, version) = chart_identity(target, &config_bytes)?;
        let mut progress = Progress::new(format!("{name} {version}"), manifest.chart_layer.size, self.progress);
        let (bytes, cached) =
            self.blob(client, target, &manifest.chart_layer, "the chart layer", MAX_LAYER_BYTES, Some(&mut progress)).await?;
        progress.finish();
        Ok(PulledChart {
            name,
            version,
            reference: OciRef { digest: Some(manifest.digest.clone()), ..target.clone() }.to_string(),
            manifest_digest: manifest.digest,
            layer_digest: manifest.chart_layer.digest,
            cached,
            bytes,
        })
    }

    async fn blob(
        &self,
        client: &RegistryClient,
        target: &OciRef,
        descriptor: &Descriptor,
        what: &str,
        limit: u64,
        progress: Option<&mut Progress>,
    ) -> Result<(Vec<u8>, bool), PullError> {
        if let Some(bytes) = self.cache.as_ref().and_then(|c| c.get_blob(&descriptor.digest)) {
            if bytes.len() as u64 == descriptor.size {
                return Ok((bytes, true));
            }
        }
        let bytes = client.fetch_blob(target, descriptor, what, limit, progress).await?;
        if let Some(cache) = &self.cache {
            warn_cache(cache, cache.put_blob(&descriptor.digest, &bytes));
        }
        Ok((bytes, false))
    }

    fn pull_offline(&self, reference: &OciRef, request: &VersionRequest) -> Result<PulledChart, PullError> {
        let cache = self.cache.as_ref().ok_or(PullError::NoCache)?;
        let repository = reference.repository_ref();
        let not_cached = |what: String| PullError::NotCached { what, cache: cache.root().display().to_string() };
        let (target, manifest_digest) = match (request, &reference.digest) {
            (VersionRequest::Latest, Some(digest)) => (reference.clone(), digest.clone()),
            _ => {
                let versions = chart_versions(&cache.known_tags(&repository));
                let chosen = request.pick(&versions).ok_or_else(|| not_cached(format!("a {} of {repository}", request.describe())))?;
                let digest =
                    cache.tag_digest(&repository, &chosen.tag).ok_or_else(|| not_cached(format!("{repository}:{}", chosen.version)))?;
                if reference.digest.as_ref().is_some_and(|d| *d != digest) {
                    return Err(PullError::PinnedDigestMismatch {
                        reference: repository.with_tag(&chosen.version).to_string(),
                        expected: reference.digest.clone().unwrap_or_default(),
                        actual: digest,
                    });
                }
                (repository.with_tag(&chosen.version), digest)
            }
        };
        let cached = |digest: &str, what: &str| cache.get_blob(digest).ok_or_else(|| not_cached(format!("{what} {digest} of {target}")));
        let manifest_bytes = cached(&manifest_digest, "manifest")?;
        let manifest = super::oci::parse_chart_manifest(&target, sha256_digest(&manifest_bytes), manifest_bytes)?;
        let config = cached(&manifest.config.digest, "config")?;
        let (name, version) = chart_identity(&target, &config)?;
        let bytes = cached(&manifest.chart_layer.digest, "chart layer")?;
        Ok(PulledChart {
            name,
            version,
            reference: OciRef { digest: Some(manifest.digest.clone()), ..target.clone() }.to_string(),
            manifest_digest: manifest.digest,
            layer_digest: manifest.chart_layer.digest,
            cached: true,
            bytes,
        })
    }
}

/// Name and version from the config blob (Chart.yaml as JSON), checked to be safe in a file name.
fn chart_identity(target: &OciRef, config: &[u8]) -> Result<(String, String), PullError> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        name: Option<String>,
        version: Option<String>,
    }
    let bad = |reason: &str| PullError::BadConfig { reference: target.to_string(), reason: reason.to_string() };
    let meta: Metadata = serde_json::from_slice(config).map_err(|_| bad("its config is not Chart.yaml metadata as JSON"))?;
    let safe = |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0']);
    match (meta.name, meta.version) {
        (Some(name), Some(version)) if safe(&name) && safe(&version) => Ok((name, version)),
        _ => Err(bad("its config lacks a usable chart name and version")),
    }
}

fn warn_cache(cache: &Cache, result: std::io::Result<()>) {
    if let Err(e) = result {
        eprintln!("warning: could not write to the cache at {}: {e}", cache.root().display());
    }
}

/// Saves `<name>-<version>.tgz` in `dir` (created if needed) atomically; returns its path.
pub fn save_chart(dir: &Path, chart: &PulledChart) -> Result<PathBuf, PullError> {
    let path = dir.join(format!("{}-{}.tgz", chart.name, chart.version));
    create_and_write(&path, &chart.bytes).map_err(|source| PullError::Write { path: path.display().to_string(), source })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_that_cannot_be_saved_names_the_path_and_keeps_the_io_error() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let chart = PulledChart {
            name: "tiny".into(),
            version: "1.0.0".into(),
            reference: String::new(),
            manifest_digest: String::new(),
            layer_digest: String::new(),
            cached: false,
            bytes: b"x".to_vec(),
        };
        // The directory to save into is a file.
        let err = save_chart(file.path(), &chart).unwrap_err();
        assert!(matches!(err, PullError::Write { .. }), "{err:?}");
        assert!(err.to_string().starts_with(&format!("cannot write {}: ", file.path().join("tiny-1.0.0.tgz").display())), "{err}");
        assert!(std::error::Error::source(&err).is_some());
    }
}
