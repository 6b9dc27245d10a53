//! The content-addressed chart cache: blobs (manifests, configs, chart layers) stored by digest
//! and re-verified on every read, plus a small index from `registry/repository:tag` to manifest
//! digest so that repeat and `--offline` pulls need no network. Where it lives is the caller's
//! choice ([`Cache::new`]).

use std::path::{Path, PathBuf};

use super::oci::sha256_digest;
use super::reference::{validate_digest, OciRef};

#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    pub fn new(root: impl Into<PathBuf>) -> Cache {
        Cache { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn blob_path(&self, digest: &str) -> Option<PathBuf> {
        validate_digest(digest).ok()?;
        Some(self.root.join("blobs/sha256").join(&digest["sha256:".len()..]))
    }

    /// A cached blob, only if its bytes still hash to its name; a corrupt entry is removed.
    pub fn get_blob(&self, digest: &str) -> Option<Vec<u8>> {
        let path = self.blob_path(digest)?;
        let bytes = std::fs::read(&path).ok()?;
        if sha256_digest(&bytes) == digest {
            Some(bytes)
        } else {
            let _ = std::fs::remove_file(&path);
            None
        }
    }

    pub fn put_blob(&self, digest: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.blob_path(digest).ok_or_else(|| std::io::Error::other("not a sha256 digest"))?;
        create_and_write(&path, bytes)
    }

    fn tag_dir(&self, reference: &OciRef) -> PathBuf {
        // Repository components are validated lowercase alphanumerics and separators, never `..`.
        self.root.join("tags").join(reference.registry.replace(':', "_")).join(&reference.repository)
    }

    pub fn record_tag(&self, reference: &OciRef, wire_tag: &str, manifest_digest: &str) -> std::io::Result<()> {
        create_and_write(&self.tag_dir(reference).join(wire_tag), manifest_digest.as_bytes())
    }

    pub fn tag_digest(&self, reference: &OciRef, wire_tag: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.tag_dir(reference).join(wire_tag)).ok()?;
        validate_digest(text.trim()).ok().map(|_| text.trim().to_string())
    }

    /// Tags of this repository that were pulled before (wire form), sorted.
    pub fn known_tags(&self, reference: &OciRef) -> Vec<String> {
        let mut tags: Vec<String> = std::fs::read_dir(self.tag_dir(reference))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.'))
            .collect();
        tags.sort();
        tags
    }
}

/// [`crate::atomic_write::write_atomically`], creating the directory first (cache directories
/// and `pull --output-dir` appear on demand).
pub fn create_and_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    crate::atomic_write::write_atomically(path, bytes).map_err(|e| e.source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_corruption_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let digest = sha256_digest(b"chart");
        cache.put_blob(&digest, b"chart").unwrap();
        assert_eq!(cache.get_blob(&digest).as_deref(), Some(&b"chart"[..]));
        std::fs::write(cache.blob_path(&digest).unwrap(), b"tampered").unwrap();
        assert_eq!(cache.get_blob(&digest), None);
        assert!(!cache.blob_path(&digest).unwrap().exists());
        assert_eq!(cache.get_blob("sha256:../../etc/passwd"), None);
    }

    #[test]
    fn tags_index_per_repository() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let r = OciRef::parse("oci://127.0.0.1:5000/kubeflow/charts/kubeflow-trainer").unwrap();
        let digest = sha256_digest(b"m");
        cache.record_tag(&r, "2.3.0", &digest).unwrap();
        cache.record_tag(&r, "2.2.1", &digest).unwrap();
        assert_eq!(cache.tag_digest(&r, "2.3.0"), Some(digest));
        assert_eq!(cache.known_tags(&r), ["2.2.1", "2.3.0"]);
        let other = OciRef::parse("oci://127.0.0.1:5000/other").unwrap();
        assert!(cache.known_tags(&other).is_empty());
    }
}
