//! The Trainer charts states are built from and the explorer's registry serves: the corpus's
//! archives, and the 2.3.0 chart relabelled 2.3.1 and 2.4.0 (Chart.yaml's `version` rewritten and
//! nothing else, as the rehearsals' `helm package --version` does). Each version is loaded once
//! and rendered once per release, namespace and values with trainer-audit's Helm engine (proven
//! byte-identical to Helm's by `cargo xtask conformance`): the release's objects and hooks as Helm
//! would apply and store them, and the CRDs of every `crds/` directory.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use helm_render::chart::Chart;
use helm_render::context::ReleaseInfo;
use helm_render::render::{render_chart, RenderOptions};
use serde_json::Value as Json;
use trainer_audit::objects::{str_at, Origin};

use super::generate::{RELABELLED, VERSIONS};

/// One render of a chart version.
#[derive(Debug)]
pub struct Rendered {
    pub version: String,
    /// Chart.yaml's `appVersion` (a relabelled chart keeps 2.3.0's).
    pub app_version: String,
    /// The release manifest Helm stores (`# Source:` blocks, CRDs of crds/ excluded).
    pub manifest: String,
    /// The release's objects, namespaced ones in the release namespace.
    pub objects: Vec<Json>,
    /// The hooks as Helm stores them in a release record.
    pub hooks: Vec<Json>,
    /// The CRDs of every `crds/` directory (Helm creates them at install when absent).
    pub crds: Vec<Json>,
    /// The built-in runtimes the 2.3 installer hook applies (its ConfigMap's `runtimes.yaml`).
    pub installer_runtimes: Vec<Json>,
    /// The coalesced values.
    pub values: Json,
}

/// How many entries the campaign's keyed caches hold before they start over: renders and records
/// (each a whole release, CRDs included: megabytes), then parsed documents. They are keyed by what
/// a state draws (release names, namespaces, values), so without a bound a long campaign grows
/// without end (one of 5,000 states reached 22 GB). A cache changes no state, so starting over
/// costs only time.
const RELEASES_BOUND: usize = 64;
const DOCUMENTS_BOUND: usize = 1024;

/// Inserts into a keyed cache, emptying it first when it holds `bound` entries.
fn insert_bounded<V>(cache: &RefCell<std::collections::HashMap<String, V>>, bound: usize, key: String, value: V) {
    let mut cache = cache.borrow_mut();
    if cache.len() >= bound {
        cache.clear();
    }
    cache.insert(key, value);
}

pub struct Charts {
    corpus: PathBuf,
    archives: RefCell<BTreeMap<String, Rc<Vec<u8>>>>,
    charts: RefCell<BTreeMap<String, Rc<Chart>>>,
    renders: RefCell<std::collections::HashMap<String, Rc<Rendered>>>,
    /// Each YAML document parsed once (a CRD renders the same for every release and values).
    documents: RefCell<std::collections::HashMap<String, Option<Json>>>,
    /// Each release record encoded once (gzip at its best level of a manifest holding 2.3's
    /// CRDs was the most of a state's build): by what makes it (`Charts::record`).
    records: RefCell<std::collections::HashMap<String, Json>>,
}

/// Why a chart could not be read or rendered.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(pub String);

/// A chart version the registry serves, and its archive.
pub type Served = (String, Rc<Vec<u8>>);

impl Charts {
    /// The charts of `corpus` (a directory holding `charts/kubeflow-trainer-<version>.tgz`).
    pub fn new(corpus: &Path) -> Charts {
        Charts {
            corpus: corpus.to_path_buf(),
            archives: RefCell::default(),
            charts: RefCell::default(),
            renders: RefCell::default(),
            documents: RefCell::default(),
            records: RefCell::default(),
        }
    }

    /// The objects of a multi-document YAML text, namespaced ones without a namespace put in
    /// `namespace`; each distinct document parsed once per campaign.
    fn objects(&self, text: &str, namespace: &str) -> Vec<Json> {
        let mut out = Vec::new();
        for doc in helm_render::manifest::split_manifest_slices(text) {
            let parsed = self.documents.borrow().get(doc).cloned();
            let parsed = match parsed {
                Some(p) => p,
                None => {
                    let p = trainer_audit::objects::Object::from_yaml(doc, "manifest", Origin::Template, "").map(|o| o.body);
                    insert_bounded(&self.documents, DOCUMENTS_BOUND, doc.to_string(), p.clone());
                    p
                }
            };
            let Some(mut body) = parsed else { continue };
            let kind = str_at(&body, &["kind"]).to_string();
            if !namespace.is_empty() && trainer_audit::objects::is_namespaced(&kind) && str_at(&body, &["metadata", "namespace"]).is_empty()
            {
                body["metadata"]["namespace"] = Json::String(namespace.to_string());
            }
            out.push(body);
        }
        out
    }

    /// The stored form of a release record, made by `make` once per `key` (everything the record
    /// holds: the render it was made from, its revision, status, description, values, apply
    /// method).
    pub fn record(&self, key: String, make: impl FnOnce() -> Json) -> Json {
        if let Some(r) = self.records.borrow().get(&key) {
            return r.clone();
        }
        let made = make();
        insert_bounded(&self.records, RELEASES_BOUND, key, made.clone());
        made
    }

    /// The archive of `version` as `helm package` writes it.
    pub fn archive(&self, version: &str) -> Result<Rc<Vec<u8>>, ChartError> {
        if let Some(a) = self.archives.borrow().get(version) {
            return Ok(a.clone());
        }
        let source = if RELABELLED.contains(&version) { "2.3.0" } else { version };
        let path = self.corpus.join("charts").join(format!("kubeflow-trainer-{source}.tgz"));
        let bytes = std::fs::read(&path).map_err(|e| ChartError(format!("{}: {e}", path.display())))?;
        let bytes = if source == version { bytes } else { relabel(&bytes, version)? };
        let bytes = Rc::new(bytes);
        self.archives.borrow_mut().insert(version.to_string(), bytes.clone());
        Ok(bytes)
    }

    /// Every version the registry serves, with its archive.
    pub fn all(&self) -> Result<Vec<Served>, ChartError> {
        VERSIONS.iter().map(|v| Ok((v.to_string(), self.archive(v)?))).collect()
    }

    fn chart(&self, version: &str) -> Result<Rc<Chart>, ChartError> {
        if let Some(c) = self.charts.borrow().get(version) {
            return Ok(c.clone());
        }
        let chart = Chart::from_archive_bytes(&self.archive(version)?).map_err(|e| ChartError(format!("chart {version}: {e}")))?;
        let chart = Rc::new(chart);
        self.charts.borrow_mut().insert(version.to_string(), chart.clone());
        Ok(chart)
    }

    /// `version` rendered as release `name` in `namespace` with the user's `values`, once. No
    /// template of these charts reads the cluster's version (only the JobSet subchart's
    /// Prometheus monitor reads `.Capabilities`, for API versions), so one render serves every
    /// Kubernetes version.
    pub fn render(&self, version: &str, name: &str, namespace: &str, values: &Json) -> Result<Rc<Rendered>, ChartError> {
        let key = format!("{version}\n{name}\n{namespace}\n{values}");
        if let Some(r) = self.renders.borrow().get(&key) {
            return Ok(r.clone());
        }
        let chart = self.chart(version)?;
        let values = match trainer_audit::objects::from_serde(values) {
            gotmpl::Value::Map(m) => m.entries.borrow().clone(),
            _ => Default::default(),
        };
        let options = RenderOptions {
            release: ReleaseInfo { name: name.into(), namespace: namespace.into(), is_upgrade: false, revision: 1 },
            values,
            ..Default::default()
        };
        let out = render_chart(&chart, &options).map_err(|e| ChartError(format!("render {version}: {e}")))?;
        let manifest = out.release_manifest(false);
        let objects = self.objects(&manifest, namespace);
        let hooks = out
            .hooks
            .iter()
            .map(|h| {
                serde_json::json!({
                    "name": h.name, "kind": h.kind, "path": h.path, "manifest": h.content,
                    "events": h.events, "last_run": {"started_at": "", "completed_at": "", "phase": ""},
                    "weight": h.weight, "delete_policies": h.delete_policies,
                })
            })
            .collect();
        let crds = out.crds.iter().flat_map(|c| self.objects(&c.content, "")).collect();
        let installer_runtimes = objects
            .iter()
            .filter(|o| o["kind"] == "ConfigMap" && str_at(o, &["metadata", "name"]).ends_with("runtimes-installer"))
            .flat_map(|cm| self.objects(str_at(cm, &["data", "runtimes.yaml"]), ""))
            .collect();
        let rendered = Rc::new(Rendered {
            version: version.to_string(),
            app_version: chart.metadata.app_version.clone(),
            manifest,
            objects,
            hooks,
            crds,
            installer_runtimes,
            values: trainer_audit::objects::to_serde(&gotmpl::Value::map(out.values)),
        });
        insert_bounded(&self.renders, RELEASES_BOUND, key, rendered.clone());
        Ok(rendered)
    }
}

/// The archive with its root Chart.yaml's `version:` rewritten.
fn relabel(archive: &[u8], version: &str) -> Result<Vec<u8>, ChartError> {
    let bad = |e: std::io::Error| ChartError(format!("relabel to {version}: {e}"));
    let mut tar_bytes = Vec::new();
    flate2::read::GzDecoder::new(archive).read_to_end(&mut tar_bytes).map_err(bad)?;
    let mut out = tar::Builder::new(Vec::new());
    let mut reader = tar::Archive::new(&tar_bytes[..]);
    for entry in reader.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let path = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(bad)?;
        if path == "kubeflow-trainer/Chart.yaml" {
            let text = String::from_utf8_lossy(&data);
            let rewritten: Vec<String> =
                text.lines().map(|l| if l.starts_with("version:") { format!("version: {version}") } else { l.to_string() }).collect();
            data = format!("{}\n", rewritten.join("\n")).into_bytes();
        }
        let mut header = entry.header().clone();
        header.set_size(data.len() as u64);
        header.set_cksum();
        out.append_data(&mut header, &path, &data[..]).map_err(bad)?;
    }
    let tar_bytes = out.into_inner().map_err(bad)?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar_bytes).map_err(bad)?;
    gz.finish().map_err(bad)
}

/// Whether Trainer's controller at `version` makes runtime snapshot ConfigMaps: from the first
/// 2.3 pre-release on. `pkg/runtime/core/snapshot.go` (`createRuntimeSnapshot`) and its calls in
/// `clustertrainingruntime.go` L59-L76 and `trainingruntime.go` L88-L106 are the same at v2.3.0-rc.0,
/// rc.1, rc.2, rc.3 and v2.3.0 (`git diff v2.3.0-rc.0 v2.3.0 -- pkg/runtime/core` is empty); no tag
/// before (v2.2.1, v2.2.0-rc.*) has a snapshot. So a 2.3 pre-release is a 2.3 controller here.
pub fn makes_runtime_snapshots(version: semver::Version) -> bool {
    version >= semver::Version::parse("2.3.0-rc.0").expect("a version")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full cache starts over, so a campaign's memory stays bounded; the entry just made stays.
    #[test]
    fn a_full_cache_starts_over_and_keeps_the_new_entry() {
        let cache = RefCell::new(std::collections::HashMap::new());
        for k in 0..5 {
            insert_bounded(&cache, 2, k.to_string(), k);
            assert!(cache.borrow().len() <= 2, "{:?}", cache.borrow());
            assert_eq!(cache.borrow().get(&k.to_string()), Some(&k));
        }
    }
}
