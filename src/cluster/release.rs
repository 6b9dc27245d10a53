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

/// A Helm release status: the one type for it (Helm v4.2.3 `pkg/release/common/status.go`, a
/// Go string type with these nine values). A record holding any other text keeps it
/// ([`ReleaseStatus::Other`]); Helm treats such a record as it treats `unknown` (neither pending,
/// deployed, failed nor superseded).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReleaseStatus {
    Unknown,
    Deployed,
    Uninstalled,
    Superseded,
    Failed,
    Uninstalling,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
    /// A status Helm never writes, as the record holds it.
    Other(String),
}

impl ReleaseStatus {
    /// The nine statuses Helm writes, in its source's order.
    pub const HELM: [ReleaseStatus; 9] = [
        ReleaseStatus::Unknown,
        ReleaseStatus::Deployed,
        ReleaseStatus::Uninstalled,
        ReleaseStatus::Superseded,
        ReleaseStatus::Failed,
        ReleaseStatus::Uninstalling,
        ReleaseStatus::PendingInstall,
        ReleaseStatus::PendingUpgrade,
        ReleaseStatus::PendingRollback,
    ];

    /// The status a record's `info.status` holds.
    pub fn parse(text: &str) -> ReleaseStatus {
        Self::HELM.into_iter().find(|s| s.as_str() == text).unwrap_or_else(|| ReleaseStatus::Other(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            ReleaseStatus::Unknown => "unknown",
            ReleaseStatus::Deployed => "deployed",
            ReleaseStatus::Uninstalled => "uninstalled",
            ReleaseStatus::Superseded => "superseded",
            ReleaseStatus::Failed => "failed",
            ReleaseStatus::Uninstalling => "uninstalling",
            ReleaseStatus::PendingInstall => "pending-install",
            ReleaseStatus::PendingUpgrade => "pending-upgrade",
            ReleaseStatus::PendingRollback => "pending-rollback",
            ReleaseStatus::Other(text) => text,
        }
    }

    /// `pending-install`, `pending-upgrade`, `pending-rollback` (Helm's `IsPending`).
    pub fn is_pending(&self) -> bool {
        matches!(self, ReleaseStatus::PendingInstall | ReleaseStatus::PendingUpgrade | ReleaseStatus::PendingRollback)
    }
}

impl std::fmt::Display for ReleaseStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ReleaseStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Only the statuses Helm writes (a rule names one of them).
impl<'de> serde::Deserialize<'de> for ReleaseStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match ReleaseStatus::parse(&text) {
            ReleaseStatus::Other(_) => {
                let known: Vec<&str> = ReleaseStatus::HELM.iter().map(ReleaseStatus::as_str).collect();
                Err(serde::de::Error::custom(format!("{text:?} is no Helm release status (one of {})", known.join(", "))))
            }
            status => Ok(status),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ReleaseRecord {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub status: ReleaseStatus,
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
    /// The storage object's name (`sh.helm.release.v1.<name>.v<revision>`): the order the API
    /// server lists records in, which is the order Helm's `History` returns them in.
    #[serde(skip)]
    pub key: String,
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

    /// `pending-install`, `pending-upgrade`, `pending-rollback`: Helm refuses every upgrade
    /// (Helm v4.2.3 `pkg/release/common/status.go` `IsPending`, checked in
    /// `pkg/action/upgrade.go` `prepareUpgrade`).
    pub fn is_pending(&self) -> bool {
        self.status.is_pending()
    }

    /// Whether Helm applied it server-side (`ssa`): Helm 4's `--server-side=auto` follows it.
    pub fn server_side(&self) -> bool {
        self.apply_method == "ssa"
    }

    /// `kubeflow-trainer-2.2.1`.
    pub fn chart(&self) -> String {
        format!("{}-{}", self.chart_name, self.chart_version)
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
        status: ReleaseStatus::parse(str_at(&release, &["info", "status"])),
        chart_name: str_at(&meta, &["name"]).to_string(),
        chart_version: str_at(&meta, &["version"]).to_string(),
        app_version: str_at(&meta, &["appVersion"]).to_string(),
        description: str_at(&release, &["info", "description"]).to_string(),
        last_deployed: str_at(&release, &["info", "last_deployed"]).to_string(),
        driver: str_at(object, &["kind"]).to_string(),
        key: str_at(object, &["metadata", "name"]).to_string(),
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

/// One revision of a release's history, as `helm history` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Revision {
    pub revision: i64,
    pub status: ReleaseStatus,
    pub chart_version: String,
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.revision, self.status, self.chart_version)
    }
}

/// What Helm v4.2.3 does with a release on `helm upgrade` (and `helm upgrade --install`), decided
/// by its history alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// It upgrades from this revision: its manifest is the object set Helm diffs against (and
    /// deletes what the target lacks from), its values are what `--reuse-values` reuses.
    From(i64),
    /// Refused, `another operation (install/upgrade/rollback) is in progress`: the last
    /// revision is pending (`pkg/action/upgrade.go` L247-L249, `errPending`).
    Pending,
    /// Refused, `"<name>" has no deployed releases`: the last revision is neither deployed,
    /// failed nor superseded, and no revision is deployed (L256-L269).
    NoDeployed,
    /// `--install` only, over an uninstalled release: Helm installs afresh (`pkg/cmd/upgrade.go`
    /// L123-L164, `instClient.Replace = true`) at the next revision, with nothing to diff against:
    /// every target object that exists must carry this release's ownership, and nothing is
    /// deleted.
    Reinstall,
}

/// How the plan gets this release upgraded, from Helm's [`Start`] of a plain `helm upgrade`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `helm upgrade`, which starts from this revision by itself.
    Upgrade { from: i64 },
    /// Helm refuses every upgrade (`refused` says how): `helm rollback <name> <to>` first, which
    /// creates a deployed revision with `to`'s chart, values and manifest; the upgrade then
    /// starts there.
    Rollback { to: i64, refused: Start },
    /// Helm refuses `helm upgrade` (no deployed revision) but `helm upgrade --install` installs
    /// afresh over what the uninstall left behind; `finish_uninstall`: once the interrupted
    /// uninstall is finished (`helm uninstall --keep-history`), which an `uninstalling` release
    /// needs first.
    Reinstall { finish_uninstall: bool },
}

impl Route {
    /// Helm installs afresh: nothing to diff against, nothing deleted, applied server-side.
    pub fn installs_afresh(self) -> bool {
        matches!(self, Route::Reinstall { .. })
    }
}

/// A release with its history.
#[derive(Debug, Clone, Serialize)]
pub struct Release {
    /// The last revision (the highest number).
    pub current: ReleaseRecord,
    /// Every revision, oldest first.
    pub history: Vec<Revision>,
    /// The records of the revisions before `current`, oldest first.
    #[serde(skip)]
    earlier: Vec<ReleaseRecord>,
}

impl Release {
    /// The record of `revision`, if Helm still keeps it.
    pub fn record(&self, revision: i64) -> Option<&ReleaseRecord> {
        std::iter::once(&self.current).chain(self.earlier.iter()).find(|r| r.revision == revision)
    }

    /// Helm's `Storage.Deployed`: the highest revision whose status is deployed (several are
    /// deployed only after concurrent writes; Helm takes the latest).
    pub fn deployed(&self) -> Option<&ReleaseRecord> {
        std::iter::once(&self.current).chain(self.earlier.iter().rev()).find(|r| r.status == ReleaseStatus::Deployed)
    }

    /// The record Helm's `History` returns last. The storage drivers return records in the API
    /// server's list order — by object name — and do not sort them (`pkg/storage/driver/
    /// secrets.go` `Query`), so past revision 9 this is not the highest revision (`…v9` sorts
    /// after `…v10`). `helm upgrade --install` tests only this record for `uninstalled`.
    pub fn listed_last(&self) -> &ReleaseRecord {
        std::iter::once(&self.current).chain(self.earlier.iter()).max_by(|a, b| a.key.cmp(&b.key)).unwrap_or(&self.current)
    }

    /// What Helm v4.2.3 does with `helm upgrade` of this release (`install`: with `--install`):
    /// `pkg/action/upgrade.go` `prepareUpgrade` (L231-L272) after `pkg/cmd/upgrade.go`'s
    /// `--install` test (L123-L128, `isReleaseUninstalled` L325-L332).
    pub fn start(&self, install: bool) -> Start {
        if install && self.listed_last().status == ReleaseStatus::Uninstalled {
            return Start::Reinstall;
        }
        let last = &self.current;
        if last.is_pending() {
            return Start::Pending;
        }
        if last.status == ReleaseStatus::Deployed {
            return Start::From(last.revision);
        }
        if let Some(deployed) = self.deployed() {
            return Start::From(deployed.revision);
        }
        if matches!(last.status, ReleaseStatus::Failed | ReleaseStatus::Superseded) {
            return Start::From(last.revision);
        }
        Start::NoDeployed
    }

    /// How the plan upgrades this release: as Helm starts by itself, else by the command Helm
    /// takes (`--install` over an uninstalled release), else through the rollback Helm allows
    /// from any status (`pkg/action/rollback.go` checks none).
    pub fn route(&self) -> Route {
        match self.start(false) {
            Start::From(from) => Route::Upgrade { from },
            Start::NoDeployed if self.start(true) == Start::Reinstall => Route::Reinstall { finish_uninstall: false },
            Start::NoDeployed if self.finishes_to_reinstall() => Route::Reinstall { finish_uninstall: true },
            refused => Route::Rollback { to: self.restore_target(), refused },
        }
    }

    /// An interrupted uninstall is finished rather than rolled back when that is safe and works:
    /// its revision holds no CRD (so finishing it deletes no TrainJob: up to 2.2 the CRDs come
    /// from `crds/`, which no uninstall deletes), and once `uninstalled` it is the record Helm
    /// lists last (so `--install` then installs afresh). Rolling such a revision back fails when
    /// its manager is gone: the rollback applies the 2.2 runtimes through the webhook the same
    /// manifest re-creates, before any Pod serves it (seen: `failed calling webhook
    /// "validator.clustertrainingruntime.trainer.kubeflow.org"` in the uninstalling rehearsal).
    fn finishes_to_reinstall(&self) -> bool {
        self.current.status == ReleaseStatus::Uninstalling
            && self.listed_last().revision == self.current.revision
            && !self.current.objects().iter().any(|o| o.identity.kind == "CustomResourceDefinition")
    }

    /// The revision a rollback restores when Helm refuses every upgrade. A pending upgrade or
    /// rollback goes back to the last good revision before it (deployed or superseded), the
    /// pending revision being the change that did not finish; a pending install (nothing good
    /// before it) and a release that was being uninstalled, was uninstalled or is of unknown
    /// status go back to the last revision itself, which holds what was last applied.
    pub fn restore_target(&self) -> i64 {
        let earlier_good = || {
            self.earlier.iter().rev().find(|r| matches!(r.status, ReleaseStatus::Deployed | ReleaseStatus::Superseded)).map(|r| r.revision)
        };
        match self.current.status {
            ReleaseStatus::PendingUpgrade | ReleaseStatus::PendingRollback => earlier_good().unwrap_or(self.current.revision),
            _ => self.current.revision,
        }
    }

    /// The revision the rollback of [`Release::route`] restores, when the route has one.
    pub fn rollback_target(&self) -> Option<i64> {
        match self.route() {
            Route::Rollback { to, .. } => Some(to),
            _ => None,
        }
    }

    /// The record of the revision the upgrade starts from: the one Helm picks, the one the
    /// rollback restores, or (a fresh install over an uninstalled release) the uninstalled one,
    /// whose chart and values are what was installed and what its leftovers are of.
    pub fn base(&self) -> &ReleaseRecord {
        let revision = match self.route() {
            Route::Upgrade { from } => from,
            Route::Rollback { to, .. } => to,
            Route::Reinstall { .. } => self.current.revision,
        };
        self.record(revision).unwrap_or(&self.current)
    }

    /// [`Release::base`]'s revision and chart version.
    pub fn upgrade_base(&self) -> (i64, &str) {
        let base = self.base();
        (base.revision, base.chart_version.as_str())
    }

    /// The release objects the upgrade diffs against: the base revision's manifest, or none when
    /// Helm installs afresh (every target object is then new to it).
    pub fn upgrade_objects(&self) -> Vec<Object> {
        match self.route() {
            Route::Reinstall { .. } => Vec::new(),
            _ => self.base().objects(),
        }
    }

    /// Whether the upgrade applies server-side. Helm 4's `--server-side=auto` follows the last
    /// revision's apply method (`prepareUpgrade` L313, `lastRelease.ApplyMethod`, not the
    /// revision it starts from); after a rollback that is the rolled-back-to revision's
    /// (`pkg/action/rollback.go` L167, L191); a fresh install applies server-side
    /// (`pkg/cmd/upgrade.go` L158).
    pub fn upgrade_server_side(&self) -> bool {
        match self.route() {
            Route::Upgrade { .. } => self.current.server_side(),
            Route::Rollback { to, .. } => self.record(to).is_some_and(ReleaseRecord::server_side),
            Route::Reinstall { .. } => true,
        }
    }

    /// What Helm does with a plain `helm upgrade`, in words: `upgrades from revision 2
    /// (kubeflow-trainer-2.2.1)`, `refuses: …`.
    pub fn describe_start(&self) -> String {
        let name = &self.current.name;
        match self.start(false) {
            Start::From(rev) => {
                let chart = self.record(rev).map(ReleaseRecord::chart).unwrap_or_default();
                format!("helm upgrade starts from revision {rev} ({chart})")
            }
            Start::Pending => "helm upgrade refuses: another operation (install/upgrade/rollback) is in progress".to_string(),
            Start::NoDeployed if self.start(true) == Start::Reinstall => {
                format!("helm upgrade refuses: \"{name}\" has no deployed releases; helm upgrade --install installs afresh")
            }
            Start::NoDeployed | Start::Reinstall => format!("helm upgrade refuses: \"{name}\" has no deployed releases"),
        }
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
            let history = revs
                .iter()
                .map(|r| Revision { revision: r.revision, status: r.status.clone(), chart_version: r.chart_version.clone() })
                .collect();
            let current = revs.pop()?;
            Some(Release { current, history, earlier: revs })
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
    use super::{releases, Release, ReleaseRecord, ReleaseStatus, Route, Start};

    fn record(revision: i64, status: &str, version: &str) -> ReleaseRecord {
        ReleaseRecord {
            name: "kubeflow-trainer".into(),
            namespace: "kubeflow-system".into(),
            revision,
            status: ReleaseStatus::parse(status),
            chart_name: "kubeflow-trainer".into(),
            chart_version: version.into(),
            app_version: String::new(),
            description: String::new(),
            last_deployed: String::new(),
            driver: "Secret".into(),
            key: format!("sh.helm.release.v1.kubeflow-trainer.v{revision}"),
            apply_method: if revision % 2 == 0 { "ssa".into() } else { "csa".into() },
            config: serde_json::Value::Null,
            manifest: String::new(),
            hooks: Vec::new(),
        }
    }

    fn release(revisions: &[(&str, &str)]) -> Release {
        let records = revisions.iter().enumerate().map(|(i, (status, version))| record(i as i64 + 1, status, version)).collect();
        releases(records).remove(0)
    }

    #[test]
    fn statuses_parse_to_the_nine_helm_writes_and_keep_any_other_text() {
        for status in ReleaseStatus::HELM {
            assert_eq!(ReleaseStatus::parse(status.as_str()), status);
        }
        assert_eq!(ReleaseStatus::parse("banana"), ReleaseStatus::Other("banana".into()));
        assert_eq!(ReleaseStatus::parse("banana").to_string(), "banana");
        assert!(serde_json::from_str::<ReleaseStatus>("\"pending-upgrade\"").unwrap().is_pending());
        assert!(serde_json::from_str::<ReleaseStatus>("\"banana\"").is_err(), "a rule names a status Helm writes");
    }

    /// Helm v4.2.3's choice, status by status of the last revision, with and without a deployed
    /// revision below it, with and without `--install`.
    #[test]
    fn helm_starts_an_upgrade_where_its_source_says() {
        let deployed_below = |last: &str| release(&[("superseded", "2.2.0"), ("deployed", "2.2.1"), (last, "2.3.0")]);
        let alone = |last: &str| release(&[("superseded", "2.2.1"), (last, "2.3.0")]);
        for install in [false, true] {
            assert_eq!(deployed_below("deployed").start(install), Start::From(3));
            for last in ["failed", "superseded", "uninstalling", "unknown", "banana"] {
                assert_eq!(deployed_below(last).start(install), Start::From(2), "{last} over a deployed revision, --install {install}");
            }
            for last in ["pending-install", "pending-upgrade", "pending-rollback"] {
                assert_eq!(deployed_below(last).start(install), Start::Pending, "{last}");
                assert_eq!(alone(last).start(install), Start::Pending, "{last}");
            }
            assert_eq!(alone("failed").start(install), Start::From(2));
            assert_eq!(alone("superseded").start(install), Start::From(2));
            for last in ["uninstalling", "unknown", "banana"] {
                assert_eq!(alone(last).start(install), Start::NoDeployed, "{last}, --install {install}");
            }
        }
        // uninstalled: refused, except --install, which installs afresh (even over a deployed
        // revision: the CLI tests the listed-last record before the upgrade action runs).
        assert_eq!(alone("uninstalled").start(false), Start::NoDeployed);
        assert_eq!(alone("uninstalled").start(true), Start::Reinstall);
        assert_eq!(deployed_below("uninstalled").start(false), Start::From(2));
        assert_eq!(deployed_below("uninstalled").start(true), Start::Reinstall);
    }

    #[test]
    fn past_revision_nine_install_tests_the_record_listed_last_not_the_highest() {
        let mut revisions = vec![("superseded", "2.2.1"); 11];
        revisions.push(("uninstalled", "2.2.1"));
        let twelve = release(&revisions);
        assert_eq!(twelve.listed_last().revision, 9, "sh.helm.release.v1.kubeflow-trainer.v9 sorts after …v12");
        assert_eq!(twelve.start(true), Start::NoDeployed, "upgrade --install is refused: has no deployed releases");
        assert_eq!(twelve.route(), Route::Rollback { to: 12, refused: Start::NoDeployed });
        assert_eq!(release(&[("superseded", "2.2.1"), ("uninstalled", "2.2.1")]).route(), Route::Reinstall { finish_uninstall: false });
    }

    #[test]
    fn each_status_has_a_route_and_a_base_with_its_apply_method() {
        let pending = release(&[("superseded", "2.2.1"), ("deployed", "2.2.1"), ("pending-upgrade", "2.3.0")]);
        assert_eq!(pending.route(), Route::Rollback { to: 2, refused: Start::Pending });
        assert_eq!(pending.upgrade_base(), (2, "2.2.1"));
        assert!(pending.upgrade_server_side(), "revision 2 was applied server-side: the rollback applies so");
        let failed = release(&[("superseded", "2.2.0"), ("deployed", "2.2.1"), ("failed", "2.3.0")]);
        assert_eq!(failed.route(), Route::Upgrade { from: 2 });
        assert_eq!(failed.upgrade_base(), (2, "2.2.1"));
        assert!(!failed.upgrade_server_side(), "the last revision (3, csa) decides, not the one Helm starts from");
        let first = release(&[("pending-install", "2.3.0")]);
        assert_eq!(first.route(), Route::Rollback { to: 1, refused: Start::Pending });
        // An interrupted uninstall: finished, then installed afresh, when its revision holds no
        // CRD; rolled back to itself when it does (finishing would delete the CRDs).
        let uninstalling = release(&[("superseded", "2.2.1"), ("uninstalling", "2.2.1")]);
        assert_eq!(uninstalling.route(), Route::Reinstall { finish_uninstall: true });
        assert_eq!(uninstalling.upgrade_base(), (2, "2.2.1"));
        let mut with_crds = vec![record(1, "superseded", "2.3.0"), record(2, "uninstalling", "2.3.0")];
        with_crds[1].manifest =
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: trainjobs.trainer.kubeflow.org\n"
                .into();
        let with_crds = releases(with_crds).remove(0);
        assert_eq!(with_crds.route(), Route::Rollback { to: 2, refused: Start::NoDeployed });
        assert_eq!(with_crds.upgrade_base(), (2, "2.3.0"));
        let uninstalled = release(&[("superseded", "2.2.1"), ("uninstalled", "2.2.1")]);
        assert_eq!(uninstalled.route(), Route::Reinstall { finish_uninstall: false });
        assert_eq!(uninstalled.upgrade_base(), (2, "2.2.1"));
        assert!(uninstalled.upgrade_objects().is_empty() && uninstalled.upgrade_server_side());
        let unknown = release(&[("unknown", "2.2.1")]);
        assert_eq!(unknown.route(), Route::Rollback { to: 1, refused: Start::NoDeployed });
        assert_eq!(release(&[("failed", "2.3.0")]).route(), Route::Upgrade { from: 1 });
    }
}
