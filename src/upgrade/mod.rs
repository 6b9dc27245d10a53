//! The upgrade a run audits, in the library: what the user asked for ([`Request`]), prepared
//! once against the cluster ([`Upgrade::prepare`]: the release, the installed and target
//! versions, the values the upgrade will use, the rules), then checked one hop at a time over a
//! per-run [`store::ChartStore`] (`check` is one hop; `plan` and `runbook` walk the route the
//! upgrade gates require). The command line only turns flags into a [`Request`].

pub mod absent;
pub mod check;
pub mod crds;
pub mod inputs;
pub mod store;
pub mod target;
pub mod values;

use std::path::PathBuf;
use std::rc::Rc;

use serde_json::Value as Json;

use crate::audit::finding::Finding;
use crate::audit::finding::Severity;
use crate::audit::input::{CheckInput, TargetRecord};
use crate::audit::rules::{Applicable, RuleSet, Scope};
use crate::audit::run::run as run_rules;
use crate::audit::verdict::{Counts, Decision};
use crate::cluster::install::{installed_version, overall, InstallMethod};
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::engine::storage::HelmDriver;
use crate::engine::EngineContext;
use crate::objects::str_at;
use crate::plan::{path, step, Plan, StepContext};
use chart_source::oci::{ClientOptions, RegistryError};
use chart_source::pull::PullError;
use chart_source::reference::{OciRef, ReferenceError};
use check::{CheckReport, Inputs};
use gotmpl::{Map, Value};
use helm_render::release_record::MAX_RECORD_BYTES;
use kube_version::KubeVersion;
use store::{ChartSource, ChartStore, RenderFor};
use values::{UserValues, ValuesError};

/// Why an upgrade could not be audited.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Cluster(String),
    /// A render failure, worded as Helm words it.
    #[error("{0}")]
    Render(String),
    /// The version or range asked for is not among the chart source's versions.
    #[error("{0}")]
    NoVersion(String),
    #[error("{0}")]
    Io(String),
    #[error(transparent)]
    Values(#[from] ValuesError),
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Pull(#[from] PullError),
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Target version or range, resolved in `repository`.
    pub to: Option<String>,
    pub repository: Option<OciRef>,
    /// Target chart as a local `.tgz` or directory instead of `to`.
    pub chart: Option<String>,
    /// Installed version, when the cluster does not tell.
    pub from: Option<String>,
    /// Installed chart as a local `.tgz` or directory.
    pub from_chart: Option<String>,
    pub release: Option<String>,
    pub namespace: Option<String>,
    pub values: UserValues,
    /// The rules of the run (built-in and `--rules`), loaded once and shared.
    pub rules: RuleSet,
    pub registry: ClientOptions,
    /// Values a GitOps file hands to Helm: they replace the release's user-supplied values
    /// (the file is what the engine will apply), and the value flags go on top.
    pub file_values: Option<Json>,
    /// The GitOps engine and options the upgrade runs under (instead of the detected method).
    pub gitops: Option<EngineContext>,
    /// A directory of chart archives or directories to take versions from instead of pulling
    /// them from `repository` (which commands still name).
    pub charts_dir: Option<PathBuf>,
    /// With no installed version (a GitOps reference just added), review the target as if
    /// installed: `from` is the target.
    pub from_target: bool,
    /// There is no cluster (the state is empty): run only the rules whose kinds do not read it.
    pub without_cluster: bool,
    /// `--helm-driver`: where Helm stores the release's records (default: as the release's
    /// records are stored, else Helm's default, Secrets).
    pub helm_driver: Option<crate::engine::storage::HelmDriver>,
    /// `--to-kube`: the Kubernetes version the cluster moves to. Without a Trainer target
    /// (`--to`, `--chart`) the installed version is the target: the question is Kubernetes alone.
    pub to_kube: Option<KubeVersion>,
}

/// Everything gathered before any check runs.
pub struct Upgrade {
    pub state: ClusterState,
    pub releases: Vec<Release>,
    pub release_name: String,
    pub namespace: String,
    pub from: semver::Version,
    pub to: semver::Version,
    pub install: InstallMethod,
    /// The values the user passed on this run (printed back in generated commands).
    pub flags: UserValues,
    /// The release's user-supplied values merged with the flags (what the upgrade applies).
    pub user_values: Map,
    /// Where they came from, in merge order (`CheckInput::value_sources`).
    pub value_sources: Vec<(String, Json)>,
    pub rules: RuleSet,
    pub notes: Vec<String>,
    /// The Kubernetes version the cluster moves to (`--to-kube`).
    pub to_kube: Option<KubeVersion>,
    /// Where the installed version comes from (a Helm release, a controller image, `--from`).
    pub evidence: String,
    request: Request,
    store: Rc<ChartStore>,
}

fn version(text: &str, what: &str) -> Result<semver::Version, UpgradeError> {
    helm_render::version::parse_lenient(text.trim_start_matches('v'))
        .ok_or_else(|| UpgradeError::Usage(format!("invalid {what} version {text:?}")))
}

/// `--from` as a version, or (a GitOps base that names a range) as a range resolved among the
/// repository's versions the way `--to` is.
fn installed_from(text: &str, store: &ChartStore) -> Result<semver::Version, UpgradeError> {
    match version(text, "--from") {
        Ok(v) => Ok(v),
        Err(e) if helm_render::version::Constraint::parse(text).is_err() => Err(e),
        Err(_) => target::pick_in(text, &store.versions()?, &store.origin()),
    }
}

fn json_to_map(v: &Json) -> Map {
    match crate::objects::from_serde(v) {
        Value::Map(m) => m.entries.borrow().clone(),
        _ => Map::new(),
    }
}

/// The chart store a request pulls from: its repository (or its chart directory, with
/// `charts_dir`), or none with a local target chart.
pub fn store_for(request: &Request) -> ChartStore {
    let repository = if request.chart.is_some() { None } else { request.repository.as_ref().map(OciRef::repository_ref) };
    match &request.charts_dir {
        Some(dir) => ChartStore::with_directory(repository, dir.clone()),
        None => ChartStore::new(repository, request.registry.clone()),
    }
}

impl Upgrade {
    pub fn prepare(request: Request, state: ClusterState) -> Result<Upgrade, UpgradeError> {
        let store = Rc::new(store_for(&request));
        Upgrade::prepare_in(request, state, store)
    }

    /// Prepared over a store shared with other upgrades of the same run (a fleet): each chart
    /// version is pulled once for all of them. `store` must be [`store_for`] this request.
    pub fn prepare_in(request: Request, state: ClusterState, store: Rc<ChartStore>) -> Result<Upgrade, UpgradeError> {
        let rules = request.rules.clone();
        let (releases, errors) = state.releases();
        if let Some(e) = errors.first() {
            return Err(UpgradeError::Cluster(format!("cannot read the Helm release: {e}")));
        }
        // A GitOps reference may name a release the cluster does not hold yet; every other run
        // names the install it audits, and a name that holds none is refused.
        let checks_inputs = !request.from_target && !request.without_cluster;
        if checks_inputs {
            if let Some(why) = absent::nothing_installed(&state, &releases) {
                return Err(UpgradeError::Usage(why));
            }
        }
        if !request.without_cluster {
            inputs::check_kube_version(&state)?;
        }
        let selected = if checks_inputs { inputs::select_install(&request, &state, &releases)? } else { None };
        let trainer: Vec<&Release> = releases
            .iter()
            .filter(|r| r.current.chart_name == "kubeflow-trainer")
            .filter(|r| request.release.as_deref().is_none_or(|n| n == r.current.name))
            .filter(|r| request.namespace.as_deref().is_none_or(|n| n == r.current.namespace))
            .collect();
        if trainer.len() > 1 {
            let names: Vec<String> = trainer.iter().map(|r| format!("{}/{}", r.current.namespace, r.current.name)).collect();
            return Err(UpgradeError::Usage(format!(
                "several Trainer releases ({}): pick one with --release and --namespace",
                names.join(", ")
            )));
        }
        let release = trainer.first().copied();
        let controller_ns = state
            .of_kind("Deployment")
            .find(|d| crate::cluster::neighbours::is_trainer_deployment(d))
            .map(|d| str_at(d, &["metadata", "namespace"]).to_string());
        // The release the chart is rendered as: --release, else the Helm release's name, else for
        // a chart Argo CD rendered (no Helm record) the release it rendered it as, which the chart
        // writes into every object's `app.kubernetes.io/instance`: the target must be rendered
        // under it, or every name a printed command takes from the render is another object's.
        let rendered_as =
            selected.as_ref().filter(|i| !i.helm_release && i.method == crate::engine::Method::ArgoCd).and_then(|i| i.rendered_as.clone());
        let release_name = request
            .release
            .clone()
            .or(release.map(|r| r.current.name.clone()))
            .or(rendered_as)
            .unwrap_or_else(|| "kubeflow-trainer".into());
        let namespace = request
            .namespace
            .clone()
            .or(release.map(|r| r.current.namespace.clone()))
            .or(selected.as_ref().map(|i| i.namespace.clone()))
            .or(controller_ns)
            .unwrap_or_else(|| crate::cluster::live::DEFAULT_NAMESPACE.into());
        let install = overall(&state, &releases);
        let found = match &selected {
            Some(i) => inputs::install_version(i, &releases).or_else(|| installed_version(&state, &[])),
            None => installed_version(&state, &releases),
        };
        if let (true, Some(from)) = (checks_inputs, &request.from) {
            inputs::check_from(from, found.as_ref())?;
        }
        let from = match (&request.from, &found) {
            (Some(v), _) => Some(installed_from(v, &store)?),
            (None, Some(found)) => Some(version(&found.version, "installed")?),
            (None, None) if request.from_target => None,
            (None, None) => {
                return Err(UpgradeError::Usage("cannot tell the installed Trainer version from the cluster: pass --from V".into()))
            }
        };
        if let (Some(path), Some(from)) = (&request.from_chart, &from) {
            let chart = store.chart(&ChartSource::Local(path.clone()))?;
            let evidence = match (&request.from, &found) {
                (Some(_), _) => "from --from".to_string(),
                (None, Some(f)) => f.evidence.clone(),
                (None, None) => String::new(),
            };
            inputs::check_from_chart(path, &chart.metadata.version, from, &evidence)?;
        }
        let mut user_values = match &request.file_values {
            Some(file) => json_to_map(file),
            None => release.map(|r| json_to_map(&r.base().config)).unwrap_or_default(),
        };
        let mut value_sources: Vec<(String, Json)> = Vec::new();
        match (&request.file_values, release) {
            (Some(file), _) => value_sources.push(("the values the GitOps file hands to Helm".into(), file.clone())),
            (None, Some(r)) => value_sources.push((
                format!(
                    "the release's stored values (`helm get values {} -n {}`)",
                    crate::shell::quote(&r.current.name),
                    crate::shell::quote(&r.current.namespace)
                ),
                r.base().config.clone(),
            )),
            (None, None) => {}
        }
        value_sources
            .extend(request.values.sources().iter().map(|(label, m)| (label.clone(), crate::objects::to_serde(&Value::map(m.clone())))));
        helm_render::values::merge_maps(&mut user_values, request.values.merged());
        let kube_only = request.to_kube.is_some() && request.to.is_none() && request.chart.is_none();
        let to = match (&from, kube_only) {
            (Some(from), true) => from.clone(),
            _ => target::resolve(&request, &store)?,
        };
        if let (Some(target), Some(current)) = (&request.to_kube, state.kube_version()) {
            if target.minor_version() < current.minor_version() {
                return Err(UpgradeError::Usage(format!(
                    "--to-kube {target} is older than the cluster's Kubernetes {current}: Kubernetes upgrades one minor at a time and never downgrades"
                )));
            }
        }
        // The target pulled now, so a repository that serves another chart is refused before
        // anything is audited (a local --chart was loaded, and checked, by `resolve`).
        // Kubernetes alone: the target chart is the installed one (a local --from-chart, if given).
        let mut request = request;
        if kube_only && request.chart.is_none() {
            request.chart = request.from_chart.clone();
        }
        if request.chart.is_none() {
            store.chart(&ChartSource::Version(to.clone()))?;
        }
        let from = from.unwrap_or_else(|| to.clone());
        let flags = if request.values.is_empty() { "" } else { ", then -f/--set" };
        let mut notes = vec![match &request.file_values {
            Some(_) => format!("values: the target chart's defaults, then the values the GitOps file hands to Helm{flags}"),
            None => format!(
                "values: the target chart's defaults, then the release's user-supplied values{flags}, as helm upgrade --reset-then-reuse-values applies them"
            ),
        }];
        let evidence = match (&request.from, found) {
            (Some(_), _) => "from --from".to_string(),
            (None, Some(v)) => v.evidence,
            (None, None) => "none installed: the target is reviewed as installed".to_string(),
        };
        notes.push(format!("installed version {from}: {evidence}"));
        notes.extend(crate::audit::citation::upgrade_notes(crate::audit::compat::get(), &from, &to));
        if let Some(target) = &request.to_kube {
            let current = state.kube_version().map_or_else(|| "an unknown version".to_string(), ToString::to_string);
            let trainer = if kube_only { format!("Trainer stays at {to}") } else { format!("Trainer {from} → {to}") };
            notes.push(format!(
                "Kubernetes target {target} (from {current}, --to-kube); {trainer}: the CRDs' CEL at {target}'s environment and cost limits, the API versions the charts render against what {target} serves, and the versions the controllers are tested on"
            ));
        }
        let flags = request.values.clone();
        Ok(Upgrade {
            state,
            releases,
            release_name,
            namespace,
            from,
            to,
            install,
            flags,
            user_values,
            value_sources,
            rules,
            notes,
            to_kube: request.to_kube.clone(),
            evidence,
            request,
            store,
        })
    }

    /// How the plan's first Helm command reaches the release: `helm upgrade --install` over an
    /// uninstalled one (Helm refuses a plain upgrade there), else `helm upgrade`.
    fn helm_start(&self) -> crate::engine::commands::HelmStart {
        use crate::engine::commands::HelmStart;
        match self.release().filter(|_| self.install.method == crate::engine::Method::Helm) {
            Some(r) if r.route().installs_afresh() => {
                let base = r.base();
                let has_values = base.config.as_object().is_some_and(|m| !m.is_empty());
                HelmStart::Reinstall { values_from: has_values.then_some(base.revision) }
            }
            _ => HelmStart::Upgrade,
        }
    }

    /// Whether Helm holds the installed version as installed: not a release uninstalled with its
    /// history kept, which `helm upgrade --install` installs afresh (the verdict then says nothing
    /// is "already at" the target).
    pub fn installed_now(&self) -> bool {
        self.release().is_none_or(|r| !r.route().installs_afresh())
    }

    pub fn release(&self) -> Option<&Release> {
        self.releases.iter().find(|r| r.current.name == self.release_name && r.current.namespace == self.namespace)
    }

    pub fn user_values_json(&self) -> Json {
        crate::objects::to_serde(&Value::map(self.user_values.clone()))
    }

    /// The repository the upgrade pulls from (None with a local target chart).
    pub fn repository(&self) -> Option<&OciRef> {
        self.store.repository()
    }

    /// The repository as commands name it, or the local target chart.
    /// The repository, or a local chart's path made absolute: printed commands (the upgrade,
    /// the fixes' `helm show values`) run from any directory.
    fn repository_text(&self) -> String {
        self.repository().map(|r| r.to_string()).or(self.request.chart.as_deref().map(local_absolute)).unwrap_or_default()
    }

    /// Helm flags a printed command needs to reach the repository as this run reached it
    /// (` --plain-http`), each with a leading space; empty for a local chart.
    fn registry_flags(&self) -> String {
        if self.repository().is_some() && self.request.registry.plain_http {
            " --plain-http".into()
        } else {
            String::new()
        }
    }

    fn render_for(&self) -> RenderFor {
        RenderFor {
            release: self.release_name.clone(),
            namespace: self.namespace.clone(),
            values: self.user_values.clone(),
            kube_version: self.to_kube.clone().or_else(|| self.state.kube_version().cloned()),
        }
    }

    fn source(&self, version: &semver::Version, installed: bool) -> ChartSource {
        let local = if installed && *version == self.from {
            // Already at the target: the target chart is the installed one.
            self.request.from_chart.clone().or_else(|| if self.from == self.to { self.request.chart.clone() } else { None })
        } else if !installed && *version == self.to {
            self.request.chart.clone()
        } else {
            None
        };
        local.map(ChartSource::Local).unwrap_or_else(|| ChartSource::Version(version.clone()))
    }

    /// Findings for one hop `from` → `to`.
    pub fn hop(&self, from: &semver::Version, to: &semver::Version, notes: &mut Vec<String>) -> Result<Vec<Finding>, UpgradeError> {
        let render = self.render_for();
        let (installed, missing) = match self.store.inventory(&self.source(from, true), &render) {
            Ok(inv) => (Some(inv), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let target = self.store.inventory(&self.source(to, false), &render)?;
        let target_crds_on = match crds_switched_on(&render.values) {
            Some(values) => match self.store.inventory(&self.source(to, false), &RenderFor { values, ..render.clone() }) {
                Ok(inv) => Some(inv),
                Err(e) => {
                    notes.push(format!(
                        "the target chart {to} could not be rendered with crds.enabled=true ({e}); the CRDs it leaves out are unknown"
                    ));
                    None
                }
            },
            None => None,
        };
        let record = self.target_record(to, &render, notes);
        let mut input = CheckInput {
            state: &self.state,
            release: self.release(),
            release_name: self.release_name.clone(),
            namespace: self.namespace.clone(),
            from: from.clone(),
            to: to.clone(),
            installed: installed.as_deref(),
            installed_missing: None,
            target: &target,
            target_crds_on: target_crds_on.as_deref(),
            user_values: self.user_values_json(),
            value_sources: self.value_sources.clone(),
            install: &self.install,
            repository: self.repository_text(),
            derived: Default::default(),
            registry_flags: self.registry_flags(),
            gitops: self.request.gitops.as_ref(),
            record: record.as_ref(),
            to_kube: self.to_kube.as_ref(),
        };
        let cluster = !self.request.without_cluster;
        if let Some(reason) = missing {
            let when = Applicable { scope: Scope::Upgrade, versions: Some((from, to)), engine: Some(input.engine()), cluster };
            let skipped = self
                .rules
                .applicable(&when)
                .filter(|r| crate::audit::kinds::checks_skipped::reads_installed_chart(&r.kind, self.request.gitops.is_some()))
                .map(|r| (r.id.clone(), r.title.clone()))
                .collect();
            input.installed_missing = Some(crate::audit::input::InstalledMissing { reason, skipped });
        }
        let findings = run_rules(&self.rules, &input, cluster);
        // The survey and conversions of every live object: large, and needed no more.
        crate::par::drop_later(input.derived);
        Ok(findings)
    }

    /// Where Helm stores this release's records, and how that is known.
    fn helm_driver(&self) -> (HelmDriver, String) {
        if let Some(d) = self.request.helm_driver {
            return (d, "--helm-driver".into());
        }
        match self.release().and_then(|r| HelmDriver::of_record_kind(&r.current.driver)) {
            Some(d) => (d, format!("the release's records are {}s", d.object_kind().unwrap_or("record"))),
            None => (HelmDriver::Secret, "Helm's default (HELM_DRIVER unset); pass --helm-driver if yours differs".into()),
        }
    }

    /// The record Helm writes for revision `to` (as the upgrade first writes it: pending, with the
    /// next revision number), with a note of its size and margin.
    fn target_record(&self, to: &semver::Version, render: &RenderFor, notes: &mut Vec<String>) -> Option<TargetRecord> {
        let release = self.release();
        let revision = release.map_or(1, |r| r.history.iter().map(|h| h.revision).max().unwrap_or(0) + 1);
        let apply_method = release.map(|r| r.current.apply_method.clone()).filter(|m| !m.is_empty()).unwrap_or_else(|| "ssa".into());
        let size = match self.store.record_size(&self.source(to, false), render, revision, &apply_method) {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("the Helm release record of {to} could not be sized: {e}"));
                return None;
            }
        };
        let (driver, driver_from) = self.helm_driver();
        let note = match driver.object_kind() {
            Some(kind) => {
                let limit = MAX_RECORD_BYTES;
                let pct = size.stored as f64 * 100.0 / limit as f64;
                let margin = limit as i64 - size.stored as i64;
                format!(
                    "Helm release record of {to} (revision {revision}): {} bytes stored in a {kind}, {pct:.1}% of the {limit}-byte limit ({} bytes {}; ±{} bytes: Go's gzip is not ours); driver: {driver_from}",
                    size.stored,
                    margin.unsigned_abs(),
                    if margin >= 0 { "to spare" } else { "over" },
                    size.uncertainty()
                )
            }
            None => format!(
                "Helm release record of {to}: {} bytes, kept by the {} driver, which sets no size limit",
                size.stored,
                driver.name()
            ),
        };
        notes.push(note);
        let name = format!("sh.helm.release.v1.{}.v{revision}", self.release_name);
        Some(TargetRecord { name, size, driver, driver_from })
    }

    /// The chart of `version` rendered for this upgrade (`installed`: as the installed chart,
    /// which may be a local `--from-chart`).
    pub fn inventory(&self, version: &semver::Version, installed: bool) -> Result<std::rc::Rc<crate::inventory::Inventory>, UpgradeError> {
        self.store.inventory(&self.source(version, installed), &self.render_for())
    }

    /// The versions from `from` to `to` through every stop the upgrade gates require.
    pub fn route(&self) -> Result<Vec<semver::Version>, UpgradeError> {
        let releases: Vec<semver::Version> = self.store.versions()?.iter().filter(|v| !v.prerelease).map(|v| v.parsed.clone()).collect();
        path(&self.rules, &self.from, &self.to, &releases).map_err(UpgradeError::Usage)
    }

    /// The inputs the verdict rests on, as this run took them.
    pub fn inputs(&self) -> Inputs {
        let chart = |version: &semver::Version, local: &Option<String>| match local {
            Some(path) => path.clone(),
            None => format!("{} {version}", self.store.origin()),
        };
        let mut kubernetes = match (&self.state.info.server_version, self.state.info.version_given) {
            (Some(v), true) => format!("{v} (--kube-version)"),
            (Some(v), false) => format!("{v} (the cluster's)"),
            (None, _) => "unknown (no cluster)".to_string(),
        };
        if let Some(target) = &self.to_kube {
            kubernetes.push_str(&format!(" → {target} (--to-kube)"));
        }
        Inputs {
            installed: format!("{}: {}", self.from, self.evidence),
            installed_chart: chart(&self.from, &self.request.from_chart),
            target_chart: chart(&self.to, &self.request.chart),
            kubernetes,
        }
    }

    /// The readiness gate: findings for the direct upgrade to the target, and the verdict at
    /// `fail_on`.
    pub fn check(&self, fail_on: Severity) -> Result<CheckReport, UpgradeError> {
        let mut notes = self.notes.clone();
        let findings = self.hop(&self.from, &self.to, &mut notes)?;
        let (from, to) = (self.from.to_string(), self.to.to_string());
        Ok(CheckReport {
            decision: Decision::new(Counts::of(&findings), fail_on, self.installed_now().then_some(from.as_str()), Some(&to)),
            inputs: self.inputs(),
            release: self.release_name.clone(),
            namespace: self.namespace.clone(),
            method: self.install.method,
            from: self.from.to_string(),
            to: self.to.to_string(),
            notes,
            warnings: self.state.warnings.clone(),
            findings,
        })
    }

    /// The stepwise route with each step's findings and commands, and the notes.
    pub fn plan(&self) -> Result<(Plan, Vec<String>), UpgradeError> {
        let stops = self.route()?;
        let repository = self.repository_text();
        let registry_flags = self.registry_flags();
        let user_values = self.user_values_json();
        let value_flags = self.flags.shell_flags();
        let mut held_crds: Vec<crate::plan::HeldCrd> = self
            .state
            .crds()
            .filter(|c| str_at(c, &["spec", "group"]) == crate::cluster::catalog::TRAINER_GROUP)
            .map(|c| crate::plan::HeldCrd {
                name: str_at(c, &["metadata", "name"]).to_string(),
                namespaced: str_at(c, &["spec", "scope"]) == "Namespaced",
            })
            .collect();
        held_crds.sort_by_key(|c| crate::plan::crd_rank(&c.name));
        // A Flux HelmRelease's name and namespace, as helm-controller labels what it applies.
        let owner = self.state.of_kind("Deployment").chain(self.state.crds()).find_map(|o| {
            let label = |k: &str| str_at(o, &["metadata", "labels", k]).to_string();
            let (name, ns) = (label("helm.toolkit.fluxcd.io/name"), label("helm.toolkit.fluxcd.io/namespace"));
            let ours = str_at(o, &["metadata", "annotations", "meta.helm.sh/release-name"]) == self.release_name;
            (ours && !name.is_empty() && !ns.is_empty()).then_some((ns, name))
        });
        let ctx = StepContext {
            release: &self.release_name,
            namespace: &self.namespace,
            method: self.install.method,
            repository: &repository,
            registry_flags: &registry_flags,
            value_flags: &value_flags,
            user_values: &user_values,
            start: self.helm_start(),
            held_crds: &held_crds,
            owner: owner.as_ref().map(|(ns, n)| (ns.as_str(), n.as_str())),
        };
        let mut notes = self.notes.clone();
        let mut steps = Vec::new();
        let mut current = self.from.clone();
        for (i, stop) in stops.iter().enumerate() {
            let findings = self.hop(&current, stop, &mut notes)?;
            let target = self.inventory(stop, false)?;
            steps.push(step(&ctx, i + 1, &current, stop, &target, findings));
            current = stop.clone();
        }
        // Already at the target: nothing to plan, unless something blocks there (a release left
        // pending at this version: its upgrade never finished), which gets its one step.
        if stops.is_empty() {
            let findings = self.hop(&self.from, &self.to, &mut notes)?;
            if findings.iter().any(|f| f.severity == crate::audit::finding::Severity::Error) {
                let target = self.inventory(&self.to, false)?;
                steps.push(step(&ctx, 1, &self.from, &self.to, &target, findings));
            }
        }
        if steps.len() > 1 {
            notes.push(
                "steps after the first are checked against the cluster as it is now: run `trainer-audit check` again before each".into(),
            );
        }
        let plan = Plan {
            release: self.release_name.clone(),
            namespace: self.namespace.clone(),
            method: self.install.method,
            from: self.from.to_string(),
            to: self.to.to_string(),
            repository,
            steps,
            pod_security: self
                .state
                .find("Namespace", "", &self.namespace)
                .and_then(|n| n.pointer(&format!("/metadata/labels/{}", crate::plan::PSA_ENFORCE.replace('/', "~1"))))
                .and_then(Json::as_str)
                .map(str::to_string),
            fail_on: None,
            held_crds: held_crds.clone(),
            reinstall: !self.installed_now(),
        };
        Ok((plan, notes))
    }
}

/// The user's values with the chart's CRD switch turned on, when they set it to anything but
/// `true` (None otherwise: the target render already has every CRD the chart ships).
fn crds_switched_on(values: &Map) -> Option<Map> {
    let [section, key] = crate::audit::input::CRDS_SWITCH;
    let set = match values.get(section) {
        Some(Value::Map(m)) => m.entries.borrow().get(key).cloned(),
        _ => None,
    };
    match set {
        None | Some(Value::Bool(true)) => None,
        Some(_) => {
            let mut on = values.clone();
            let mut switch = Map::new();
            switch.insert(key.to_string(), Value::Bool(true));
            let mut overlay = Map::new();
            overlay.insert(section.to_string(), Value::map(switch));
            helm_render::values::merge_maps(&mut on, &overlay);
            Some(on)
        }
    }
}

/// A local chart (a path, not a repository URL) as an absolute path, so a printed command runs
/// from any directory; a repository as it is.
fn local_absolute(repository: &str) -> String {
    if repository.is_empty() || repository.contains("://") {
        return repository.to_string();
    }
    let Ok(absolute) = std::path::absolute(repository) else { return repository.to_string() };
    // `a/../b` as `b`, lexically (links are not resolved, as for the values files).
    let mut clean = std::path::PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            std::path::Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(json: serde_json::Value) -> Map {
        helm_render::values::to_map(&crate::objects::from_serde(&json)).unwrap_or_default()
    }

    #[test]
    fn the_crd_switch_is_turned_on_only_when_the_user_turns_it_off() {
        assert!(crds_switched_on(&values(serde_json::json!({"a": 1}))).is_none());
        assert!(crds_switched_on(&values(serde_json::json!({"crds": {"enabled": true}}))).is_none());
        let off = values(serde_json::json!({"crds": {"enabled": false, "keep": "x"}, "a": 1}));
        let on = crds_switched_on(&off).map(|m| crate::objects::to_serde(&Value::map(m)));
        assert_eq!(on, Some(serde_json::json!({"crds": {"enabled": true, "keep": "x"}, "a": 1})));
        assert_eq!(crate::objects::to_serde(&Value::map(off))["crds"]["enabled"], false, "the user's values are left as they were");
    }
}
