//! The charts of one run: one async runtime and one registry client for the whole run, the
//! repository's tags listed once, each chart (a version pulled from the repository, or a local
//! `--chart`/`--from-chart`) loaded once, and each rendered once per release, namespace and
//! values, so a plan through several versions renders every intermediate chart a single time and
//! a fleet sharing one store pulls each version once and renders it once per distinct release.
//! A store may also take its versions from a local directory of charts (an air-gapped CI job,
//! a test) while commands still name the repository.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use super::UpgradeError;
use crate::inventory::Inventory;
use chart_source::oci::{ClientOptions, RegistryClient};
use chart_source::pull::Puller;
use chart_source::reference::{ChartRef, OciRef};
use chart_source::versions::{chart_versions, ChartVersion};
use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};

/// Where a chart comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChartSource {
    /// A version of the store's repository.
    Version(semver::Version),
    /// A local `.tgz` or directory.
    Local(String),
}

/// How charts are rendered for this upgrade.
#[derive(Debug, Clone)]
pub struct RenderFor {
    pub release: String,
    pub namespace: String,
    pub values: gotmpl::Map,
    /// `.Capabilities.KubeVersion`: the Kubernetes the upgrade runs on, as `helm upgrade` reads
    /// it from the server (None: Helm's client-only default).
    pub kube_version: Option<kube_version::KubeVersion>,
}

impl RenderFor {
    /// Equal for renders that give the same output (values are sorted maps, so equal values
    /// give equal JSON text).
    fn key(&self) -> String {
        let values = crate::objects::to_serde(&gotmpl::Value::map(self.values.clone()));
        let kube = self.kube_version.as_ref().map(ToString::to_string).unwrap_or_default();
        format!("{}\n{}\n{kube}\n{values}", self.release, self.namespace)
    }
}

/// A chart directory holds at most this many entries (each is opened to read its version).
const MAX_DIRECTORY_ENTRIES: usize = 256;

pub struct ChartStore {
    repository: Option<OciRef>,
    /// Versions come from here instead of the repository.
    directory: Option<PathBuf>,
    options: ClientOptions,
    runtime: RefCell<Option<Rc<tokio::runtime::Runtime>>>,
    client: RefCell<Option<Rc<RegistryClient>>>,
    versions: RefCell<Option<Rc<Vec<ChartVersion>>>>,
    charts: RefCell<BTreeMap<ChartSource, Rc<Chart>>>,
    /// Keyed by the chart and the render's release, namespace and values (as JSON text).
    inventories: RefCell<BTreeMap<(ChartSource, String), Rc<Inventory>>>,
}

impl ChartStore {
    /// A store over `repository` (None: local charts only).
    pub fn new(repository: Option<OciRef>, options: ClientOptions) -> ChartStore {
        ChartStore {
            repository,
            directory: None,
            options,
            runtime: RefCell::default(),
            client: RefCell::default(),
            versions: RefCell::default(),
            charts: RefCell::default(),
            inventories: RefCell::default(),
        }
    }

    /// A store whose versions are the Trainer charts in `dir` (`.tgz` archives or chart
    /// directories, found by their Chart.yaml); `repository` is only named in commands.
    pub fn with_directory(repository: Option<OciRef>, dir: PathBuf) -> ChartStore {
        ChartStore { directory: Some(dir), ..ChartStore::new(repository, ClientOptions::default()) }
    }

    /// Loads every Trainer chart of the directory once, keyed by version.
    fn index_directory(&self, dir: &std::path::Path) -> Result<Rc<Vec<ChartVersion>>, UpgradeError> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| UpgradeError::Usage(format!("cannot read the chart directory {}: {e}", dir.display())))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        if paths.len() > MAX_DIRECTORY_ENTRIES {
            return Err(UpgradeError::Usage(format!(
                "the chart directory {} holds {} entries, over the {MAX_DIRECTORY_ENTRIES} read: point it at the Trainer charts only",
                dir.display(),
                paths.len()
            )));
        }
        let mut tags = Vec::new();
        for path in paths {
            let loaded = if path.is_dir() && path.join("Chart.yaml").is_file() {
                Chart::load_dir(&path)
            } else if path.extension().is_some_and(|x| x == "tgz") {
                Chart::load_archive_file(&path)
            } else {
                continue;
            };
            // Other charts and broken entries are not this store's versions.
            let Ok(chart) = loaded else { continue };
            if chart.name() != crate::gitops::TRAINER_CHART {
                continue;
            }
            let Some(version) = helm_render::version::parse_strict(&chart.metadata.version) else { continue };
            tags.push(chart.metadata.version.clone());
            self.charts.borrow_mut().entry(ChartSource::Version(version)).or_insert(Rc::new(chart));
        }
        Ok(self.versions.borrow_mut().insert(Rc::new(chart_versions(&tags))).clone())
    }

    /// Where the versions come from, as errors name it.
    pub fn origin(&self) -> String {
        match (&self.directory, &self.repository) {
            (Some(dir), _) => format!("the chart directory {}", dir.display()),
            (None, Some(repo)) => format!("the repository {repo}"),
            (None, None) => "the repository".into(),
        }
    }

    pub fn repository(&self) -> Option<&OciRef> {
        self.repository.as_ref()
    }

    fn runtime(&self) -> Result<Rc<tokio::runtime::Runtime>, UpgradeError> {
        if let Some(rt) = self.runtime.borrow().as_ref() {
            return Ok(rt.clone());
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| UpgradeError::Io(format!("cannot start the async runtime: {e}")))?;
        Ok(self.runtime.borrow_mut().insert(Rc::new(rt)).clone())
    }

    fn client(&self, repo: &OciRef) -> Result<Rc<RegistryClient>, UpgradeError> {
        if let Some(c) = self.client.borrow().as_ref() {
            return Ok(c.clone());
        }
        let client = RegistryClient::new(&repo.registry, self.options.clone())?;
        Ok(self.client.borrow_mut().insert(Rc::new(client)).clone())
    }

    /// Every version the repository holds (releases and pre-releases), newest first; listed once.
    pub fn versions(&self) -> Result<Rc<Vec<ChartVersion>>, UpgradeError> {
        if let Some(v) = self.versions.borrow().as_ref() {
            return Ok(v.clone());
        }
        if let Some(dir) = &self.directory {
            return self.index_directory(dir);
        }
        let Some(repo) = &self.repository else { return Ok(Rc::default()) };
        let client = self.client(repo)?;
        let tags = self.runtime()?.block_on(client.list_tags(repo))?;
        Ok(self.versions.borrow_mut().insert(Rc::new(chart_versions(&tags))).clone())
    }

    /// The chart, loaded (and for a repository version pulled) once.
    pub fn chart(&self, source: &ChartSource) -> Result<Rc<Chart>, UpgradeError> {
        if let Some(c) = self.charts.borrow().get(source) {
            return Ok(c.clone());
        }
        let chart = match source {
            ChartSource::Local(path) => load_local(path)?,
            ChartSource::Version(version) if self.directory.is_some() => {
                let versions = self.versions()?;
                if let Some(chart) = self.charts.borrow().get(source) {
                    return Ok(chart.clone());
                }
                let dir = self.directory.as_deref().map(|d| d.display().to_string()).unwrap_or_default();
                return Err(UpgradeError::Usage(format!(
                    "no kubeflow-trainer {version} in the chart directory {dir} (has: {}): add its .tgz there",
                    chart_source::versions::summarise(&versions)
                )));
            }
            ChartSource::Version(version) => {
                let Some(repo) = &self.repository else {
                    // Only a chart the run does not target is read by version without a
                    // repository (a local --chart is the target): the installed one.
                    return Err(UpgradeError::Usage(format!(
                        "no kubeflow-trainer {version} chart to read: pass --from-chart with it (a .tgz or a directory), or --repo with a repository that serves {version}"
                    )));
                };
                let client = self.client(repo)?;
                let puller =
                    Puller { client_options: self.options.clone(), cache: crate::cache::chart_cache(), offline: false, progress: false };
                let tag = self.versions()?.iter().find(|v| v.parsed == *version).map(|v| v.version.clone()).unwrap_or(version.to_string());
                let pulled = self.runtime()?.block_on(puller.pull_using(Some(&client), repo, Some(&tag)))?;
                Chart::from_archive_bytes(&pulled.bytes)
                    .map_err(|e| UpgradeError::Usage(format!("cannot load chart {repo} version {tag}: {e}")))?
            }
        };
        if chart.name() != crate::gitops::TRAINER_CHART {
            let what = match source {
                ChartSource::Local(path) => format!("the chart {path}"),
                ChartSource::Version(v) => format!("{} version {v}", self.origin()),
            };
            return Err(UpgradeError::Usage(format!(
                "{what} is the chart {} {}, not {}: point it at the Kubeflow Trainer chart",
                chart.name(),
                chart.metadata.version,
                crate::gitops::TRAINER_CHART
            )));
        }
        Ok(self.charts.borrow_mut().entry(source.clone()).or_insert(Rc::new(chart)).clone())
    }

    /// The chart rendered as `render` says, once.
    pub fn inventory(&self, source: &ChartSource, render: &RenderFor) -> Result<Rc<Inventory>, UpgradeError> {
        let key = (source.clone(), render.key());
        if let Some(i) = self.inventories.borrow().get(&key) {
            return Ok(i.clone());
        }
        let chart = self.chart(source)?;
        let options = upgrade_options(render);
        let rendered = render_chart(&chart, &options).map_err(|e| {
            UpgradeError::Render(format!("cannot render {} {} with the release's values: {}", chart.name(), chart.metadata.version, e.0))
        })?;
        let inventory = Rc::new(Inventory::build(&chart, &rendered, &render.namespace));
        Ok(self.inventories.borrow_mut().entry(key).or_insert(inventory).clone())
    }
}

/// How an upgrade renders a chart: the release's values, name and namespace, as an upgrade.
fn upgrade_options(render: &RenderFor) -> RenderOptions {
    let mut options =
        RenderOptions { values: render.values.clone(), kube_version: render.kube_version.clone(), ..RenderOptions::default() };
    options.release.name = render.release.clone();
    options.release.namespace = render.namespace.clone();
    options.release.is_upgrade = true;
    options
}

impl ChartStore {
    /// The size of the Helm release record of `source` rendered as `render` (as an upgrade first
    /// writes it: `pending-upgrade`, `Preparing upgrade`).
    pub fn record_size(
        &self,
        source: &ChartSource,
        render: &RenderFor,
        revision: i64,
        apply_method: &str,
    ) -> Result<helm_render::release_record::RecordSize, UpgradeError> {
        let chart = self.chart(source)?;
        let options = upgrade_options(render);
        let rendered = render_chart(&chart, &options).map_err(|e| UpgradeError::Render(e.0))?;
        let meta = helm_render::release_record::RecordMeta {
            name: &render.release,
            namespace: &render.namespace,
            revision,
            status: "pending-upgrade",
            description: "Preparing upgrade",
            apply_method,
            config: &render.values,
        };
        helm_render::release_record::record_size(&chart, &rendered, &meta).map_err(|e| UpgradeError::Render(e.0))
    }
}

/// A local chart archive or directory.
pub fn load_local(reference: &str) -> Result<Chart, UpgradeError> {
    let load_err = |e: helm_render::chart::LoadError| UpgradeError::Usage(format!("cannot load chart {reference}: {e}"));
    match ChartRef::parse(reference)? {
        ChartRef::Archive(path) => Chart::load_archive_file(&path).map_err(load_err),
        ChartRef::Directory(path) => Chart::load_dir(&path).map_err(load_err),
        ChartRef::Oci(_) => Err(UpgradeError::Usage(format!("{reference} is not a local chart: use --to with --repo for a repository"))),
    }
}

/// One chart from any reference (`oci://…` pulled through the cache, a `.tgz`, a directory), for
/// the commands that read a single chart (`render`, `hooks`, `diff`).
pub fn load_reference(reference: &str, version: Option<&str>, options: &ClientOptions) -> Result<Chart, UpgradeError> {
    match ChartRef::parse(reference)? {
        ChartRef::Oci(oci) => {
            let puller = Puller { client_options: options.clone(), cache: crate::cache::chart_cache(), offline: false, progress: false };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| UpgradeError::Io(format!("cannot start the async runtime: {e}")))?;
            let pulled = runtime.block_on(puller.pull(&oci, version))?;
            Chart::from_archive_bytes(&pulled.bytes).map_err(|e| UpgradeError::Usage(format!("cannot load chart {reference}: {e}")))
        }
        _ => load_local(reference),
    }
}

/// A chart rendered as `release` into `namespace` with the user's values, as facts; errors name
/// the chart as `reference`.
pub fn inventory_of(
    reference: &str,
    chart: &Chart,
    values: &gotmpl::Map,
    release: &str,
    namespace: &str,
) -> Result<Inventory, UpgradeError> {
    let mut options = RenderOptions { values: values.clone(), ..RenderOptions::default() };
    options.release.name = release.to_string();
    options.release.namespace = namespace.to_string();
    let rendered = render_chart(chart, &options).map_err(|e| UpgradeError::Render(format!("cannot render {reference}: {}", e.0)))?;
    Ok(Inventory::build(chart, &rendered, namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chart_is_loaded_and_rendered_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules/charts/to");
        let store = ChartStore::new(None, ClientOptions::default());
        let source = ChartSource::Local(dir.to_string());
        let render = RenderFor {
            release: "kubeflow-trainer".into(),
            namespace: "kubeflow-system".into(),
            values: Default::default(),
            kube_version: None,
        };
        let first = store.inventory(&source, &render).unwrap();
        let again = store.inventory(&source, &render).unwrap();
        assert!(Rc::ptr_eq(&first, &again), "rendered twice");
        assert!(Rc::ptr_eq(&store.chart(&source).unwrap(), &store.chart(&source).unwrap()), "loaded twice");
        // No repository: nothing to pull, and the error names what would let the run read it
        // (--from-chart, --repo), not --chart, which names the target.
        let err = store.chart(&ChartSource::Version(semver::Version::new(2, 2, 0))).unwrap_err().to_string();
        assert!(err.contains("--from-chart") && err.contains("--repo") && !err.contains("--chart"), "{err}");
        // Another release of the same chart (a fleet's other cluster) renders again; the same one does not.
        let other = RenderFor { release: "trainer".into(), ..render.clone() };
        let third = store.inventory(&source, &other).unwrap();
        assert!(!Rc::ptr_eq(&first, &third), "a different release reused another's render");
        assert!(Rc::ptr_eq(&third, &store.inventory(&source, &other.clone()).unwrap()));
        let mut values = gotmpl::Map::new();
        values.insert("unusedByTheChart".into(), gotmpl::Value::from("x"));
        let with_values = RenderFor { values, ..render };
        assert!(!Rc::ptr_eq(&first, &store.inventory(&source, &with_values).unwrap()), "other values reused a render");
    }

    #[test]
    fn a_chart_directory_serves_its_trainer_versions() {
        let charts = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules/charts");
        let store = ChartStore::with_directory(None, charts.into());
        let versions: Vec<String> = store.versions().unwrap().iter().map(|v| v.version.clone()).collect();
        assert_eq!(versions, ["2.4.0", "2.3.0", "2.2.0"]);
        let chart = store.chart(&ChartSource::Version(semver::Version::new(2, 3, 0))).unwrap();
        assert_eq!(chart.metadata.version, "2.3.0");
        let err = store.chart(&ChartSource::Version(semver::Version::new(2, 1, 0))).unwrap_err().to_string();
        assert!(err.contains("no kubeflow-trainer 2.1.0 in the chart directory") && err.contains("2.4.0, 2.3.0, 2.2.0"), "{err}");
        let missing = ChartStore::with_directory(None, "/no/such/dir".into());
        assert!(missing.versions().unwrap_err().to_string().contains("cannot read the chart directory /no/such/dir"));
    }
}
