//! Helm release records (`sh.helm.release.v1.<name>.v<revision>`): decoded from a Secret
//! (base64 of base64 of gzip of the release JSON) or a ConfigMap (one base64 layer), gzip or
//! plain JSON, bounded against decompression bombs; each release's revisions grouped, the current
//! one picked, and re-encoded after redaction.

use std::io::Read;

use base64::Engine;
use serde::Serialize;
use serde_json::Value as Json;

use super::ClusterError;
use crate::objects::{objects_in, str_at, Object, Origin};

/// A decoded record is refused past this size (real ones are a few MB at most).
pub const MAX_RELEASE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Serialize)]
pub struct ReleaseRecord {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub status: String,
    pub chart_name: String,
    pub chart_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub app_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_deployed: String,
    /// `Secret` or `ConfigMap`: the storage driver.
    pub driver: String,
    /// How Helm applied it: `ssa` (server-side, Helm 4's install default) or `csa`; empty for
    /// records written by Helm 3, which Helm 4 treats as `csa` (helm/helm v4.2.3
    /// pkg/release/v1/release.go `ApplyMethod`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub apply_method: String,
    /// User-supplied values (`config`), unmasked: mask before printing.
    #[serde(skip)]
    pub config: Json,
    #[serde(skip)]
    pub manifest: String,
    #[serde(skip)]
    pub hooks: Vec<Json>,
}

impl ReleaseRecord {
    pub fn objects(&self) -> Vec<Object> {
        objects_in(&self.manifest, "release manifest", Origin::Template, &self.namespace)
    }

    /// `pending-install`, `pending-upgrade`, `pending-rollback`: the only states in which Helm
    /// refuses an upgrade (Helm v4.2.3 `pkg/release/common/status.go` `IsPending`, checked in
    /// `pkg/action/upgrade.go`); a `failed` last revision upgrades normally.
    pub fn is_stuck(&self) -> bool {
        matches!(self.status.as_str(), "pending-install" | "pending-upgrade" | "pending-rollback")
    }
}

/// The record's payload bytes: what `data.release` holds after the Kubernetes layer.
fn payload(object: &Json) -> Result<Vec<u8>, ClusterError> {
    let name = str_at(object, &["metadata", "name"]);
    let text = str_at(object, &["data", "release"]);
    if text.is_empty() {
        return Err(ClusterError::Release(format!("release record {name} has no data.release")));
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    let bad = |what: &str| ClusterError::Release(format!("release record {name}: {what} is not valid base64"));
    let helm_layer = if str_at(object, &["kind"]) == "Secret" {
        // A Secret's data is base64 in the API; Helm's own base64 is inside it.
        let inner = b64.decode(text.trim()).map_err(|_| bad("data.release"))?;
        b64.decode(inner.trim_ascii()).map_err(|_| bad("the decoded data.release"))?
    } else {
        b64.decode(text.trim()).map_err(|_| bad("data.release"))?
    };
    Ok(helm_layer)
}

/// The release JSON of a record (gzip or plain), bounded.
pub fn release_json(object: &Json) -> Result<Json, ClusterError> {
    let name = str_at(object, &["metadata", "name"]).to_string();
    let bytes = payload(object)?;
    let json_bytes = if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        let mut reader = flate2::read::GzDecoder::new(&bytes[..]).take(MAX_RELEASE_BYTES + 1);
        reader.read_to_end(&mut out).map_err(|e| ClusterError::Release(format!("release record {name}: gzip data is corrupt: {e}")))?;
        if out.len() as u64 > MAX_RELEASE_BYTES {
            return Err(ClusterError::Release(format!(
                "release record {name} decompresses past {} MiB: refused as a decompression bomb",
                MAX_RELEASE_BYTES / (1024 * 1024)
            )));
        }
        out
    } else {
        bytes
    };
    serde_json::from_slice(&json_bytes).map_err(|e| ClusterError::Release(format!("release record {name}: release JSON is invalid: {e}")))
}

pub fn decode(object: &Json) -> Result<ReleaseRecord, ClusterError> {
    let release = release_json(object)?;
    let meta = release.pointer("/chart/metadata").cloned().unwrap_or(Json::Null);
    Ok(ReleaseRecord {
        name: str_at(&release, &["name"]).to_string(),
        namespace: match str_at(&release, &["namespace"]) {
            "" => str_at(object, &["metadata", "namespace"]).to_string(),
            ns => ns.to_string(),
        },
        revision: release.get("version").and_then(Json::as_i64).unwrap_or(0),
        status: str_at(&release, &["info", "status"]).to_string(),
        chart_name: str_at(&meta, &["name"]).to_string(),
        chart_version: str_at(&meta, &["version"]).to_string(),
        app_version: str_at(&meta, &["appVersion"]).to_string(),
        description: str_at(&release, &["info", "description"]).to_string(),
        last_deployed: str_at(&release, &["info", "last_deployed"]).to_string(),
        driver: str_at(object, &["kind"]).to_string(),
        apply_method: str_at(&release, &["apply_method"]).to_string(),
        config: release.get("config").cloned().unwrap_or(Json::Null),
        manifest: str_at(&release, &["manifest"]).to_string(),
        hooks: release.get("hooks").and_then(Json::as_array).cloned().unwrap_or_default(),
    })
}

/// Whether a record belongs to a Trainer release (records that cannot be decoded are kept, so
/// the problem is reported instead of hidden).
pub fn is_trainer_record(object: &Json) -> bool {
    // Whether a record is kept whole does not depend on which neighbour charts are stubbed.
    matches!(kept_record_of(object, &[]), Some(Kept::Whole))
}

/// Annotations a record stub carries instead of its payload: the chart's name, version and
/// app version (what `status` and the neighbour checks read; values and manifest are left out).
pub const STUB_CHART: &str = "trainer-audit.dev/chart";
pub const STUB_VERSION: &str = "trainer-audit.dev/chart-version";
pub const STUB_APP_VERSION: &str = "trainer-audit.dev/app-version";

/// How much of a Helm release record a cluster state keeps.
#[derive(Debug, PartialEq)]
pub enum Kept {
    /// A Trainer record (or one that cannot be decoded: the problem is reported, not hidden).
    Whole,
    /// A record of a chart Trainer depends on, reduced to a stub naming the chart.
    Stub(Json),
}

/// Whether a record is a stub made by [`kept_record_of`].
pub fn is_stub(object: &Json) -> bool {
    !str_at(object, &["metadata", "annotations", STUB_CHART]).is_empty()
}

/// What to keep of a Helm release record: the whole record for Trainer, a stub for the charts
/// in `neighbours` (by chart name), nothing for other charts.
pub fn kept_record_of(object: &Json, neighbours: &[&str]) -> Option<Kept> {
    if is_stub(object) {
        return neighbours.contains(&str_at(object, &["metadata", "annotations", STUB_CHART])).then(|| Kept::Stub(object.clone()));
    }
    let Ok(release) = release_json(object) else { return Some(Kept::Whole) };
    let meta = |k: &str| str_at(&release, &["chart", "metadata", k]).to_string();
    let chart = meta("name");
    if chart == "kubeflow-trainer" {
        return Some(Kept::Whole);
    }
    if !neighbours.contains(&chart.as_str()) {
        return None;
    }
    let mut metadata = serde_json::Map::new();
    for key in ["name", "namespace", "labels", "creationTimestamp"] {
        if let Some(v) = object.pointer(&format!("/metadata/{key}")) {
            metadata.insert(key.to_string(), v.clone());
        }
    }
    metadata.insert(
        "annotations".into(),
        serde_json::json!({STUB_CHART: chart, STUB_VERSION: meta("version"), STUB_APP_VERSION: meta("appVersion")}),
    );
    let mut stub = serde_json::json!({"apiVersion": "v1", "kind": str_at(object, &["kind"]), "metadata": metadata});
    if let Some(t) = object.get("type") {
        stub["type"] = t.clone();
    }
    Some(Kept::Stub(stub))
}

/// A release with its history.
#[derive(Debug, Clone, Serialize)]
pub struct Release {
    pub current: ReleaseRecord,
    /// Every revision, oldest first: (revision, status, chart version).
    pub history: Vec<(i64, String, String)>,
    /// When the current revision is stuck pending: the record of the revision the rollback
    /// restores ([`Release::base`]).
    #[serde(skip)]
    pub rollback_record: Option<ReleaseRecord>,
}

impl Release {
    /// The revision a rollback goes back to: the last good one on record (deployed or superseded,
    /// not the current), else the one before the current (Helm keeps a limited history).
    pub fn rollback_target(&self) -> Option<i64> {
        self.history
            .iter()
            .rev()
            .find(|(rev, s, _)| *rev != self.current.revision && (s == "deployed" || s == "superseded"))
            .map(|(rev, _, _)| *rev)
            .or_else(|| (self.current.revision > 1).then(|| self.current.revision - 1))
    }

    /// The revision the release is upgraded from: the current one, or, when it is stuck
    /// pending, the one the rollback (TA-REL-001, which must come first) restores — the upgrade
    /// after it starts there, with that revision's objects, values and apply method.
    pub fn base(&self) -> &ReleaseRecord {
        match &self.rollback_record {
            Some(record) if self.current.is_stuck() => record,
            _ => &self.current,
        }
    }

    /// [`Release::base`]'s revision and chart version.
    pub fn upgrade_base(&self) -> (i64, &str) {
        let base = self.base();
        (base.revision, base.chart_version.as_str())
    }
}

/// Groups decoded records by (namespace, name); the current revision is the highest.
pub fn releases(records: Vec<ReleaseRecord>) -> Vec<Release> {
    let mut groups: std::collections::BTreeMap<(String, String), Vec<ReleaseRecord>> = Default::default();
    for r in records {
        groups.entry((r.namespace.clone(), r.name.clone())).or_default().push(r);
    }
    groups
        .into_values()
        .filter_map(|mut revs| {
            revs.sort_by_key(|r| r.revision);
            let history = revs.iter().map(|r| (r.revision, r.status.clone(), r.chart_version.clone())).collect();
            let current = revs.pop()?;
            let mut release = Release { current, history, rollback_record: None };
            if release.current.is_stuck() {
                let target = release.rollback_target();
                release.rollback_record = revs.into_iter().find(|r| Some(r.revision) == target);
            }
            Some(release)
        })
        .collect()
}

/// Keys whose values are treated as secret in release values.
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["password", "passwd", "token", "secret", "key", "credential", "auth", "cert", "private"].iter().any(|w| k.contains(w))
}

/// Replaces every value under a secret-looking key with `"<redacted>"`.
pub fn redact(v: &mut Json) {
    match v {
        Json::Object(map) => {
            for (k, child) in map.iter_mut() {
                if looks_secret(k) && !child.is_null() {
                    *child = Json::String("<redacted>".into());
                } else {
                    redact(child);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// The record with its release's `config` (user values) and the chart's default values
/// redacted, re-encoded the way Helm stores it.
pub fn redacted_record(object: &Json) -> Result<Json, ClusterError> {
    let mut release = release_json(object)?;
    if let Some(config) = release.get_mut("config") {
        redact(config);
    }
    if let Some(values) = release.pointer_mut("/chart/values") {
        redact(values);
    }
    let json = serde_json::to_vec(&release).map_err(|e| ClusterError::Release(e.to_string()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gz, &json).map_err(|e| ClusterError::Release(e.to_string()))?;
    let gzipped = gz.finish().map_err(|e| ClusterError::Release(e.to_string()))?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let helm_layer = b64.encode(gzipped);
    let stored = if str_at(object, &["kind"]) == "Secret" { b64.encode(helm_layer) } else { helm_layer };
    let mut out = object.clone();
    out["data"]["release"] = Json::String(stored);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{releases, ReleaseRecord};

    fn record(revision: i64, status: &str, version: &str) -> ReleaseRecord {
        ReleaseRecord {
            name: "kubeflow-trainer".into(),
            namespace: "kubeflow-system".into(),
            revision,
            status: status.into(),
            chart_name: "kubeflow-trainer".into(),
            chart_version: version.into(),
            app_version: String::new(),
            description: String::new(),
            last_deployed: String::new(),
            driver: "Secret".into(),
            apply_method: "ssa".into(),
            config: serde_json::Value::Null,
            manifest: String::new(),
            hooks: Vec::new(),
        }
    }

    #[test]
    fn a_pending_release_is_upgraded_from_the_revision_it_rolls_back_to() {
        let pending =
            releases(vec![record(1, "superseded", "2.2.1"), record(2, "deployed", "2.2.1"), record(3, "pending-upgrade", "2.3.0")]);
        assert_eq!(pending[0].rollback_target(), Some(2));
        assert_eq!(pending[0].upgrade_base(), (2, "2.2.1"));
        assert_eq!(pending[0].base().revision, 2);
        assert_eq!(pending[0].current.revision, 3);
        let failed = releases(vec![record(1, "superseded", "2.2.1"), record(2, "failed", "2.3.0")]);
        assert_eq!(failed[0].upgrade_base(), (2, "2.3.0"));
        let first = releases(vec![record(1, "pending-install", "2.3.0")]);
        assert_eq!(first[0].rollback_target(), None);
        assert_eq!(first[0].upgrade_base(), (1, "2.3.0"));
    }
}
