//! What `check`, `plan` and `runbook` share: the cluster, the release, the installed and target
//! versions, and the charts rendered with the values the upgrade will really use (the target's
//! defaults, then the release's user-supplied values, then `-f`/`--set`: Helm's
//! `--reset-then-reuse-values`).

use std::path::PathBuf;

use clap::Args;
use serde_json::Value as Json;

use super::cluster_args::ClusterArgs;
use super::registry_args::RegistryArgs;
use super::render::{load_chart, ValuesArgs};
use super::{oci_reference, runtime, CliError};
use crate::audit::rules::{load, Rule};
use crate::chart::Chart;
use crate::cluster::install::{installed_version, overall, Verdict};
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::gotmpl::{Map, Value};
use crate::helm::render::{render_chart, RenderOptions};
use crate::inventory::Inventory;
use crate::source::oci::client::RegistryClient;
use crate::source::reference::OciRef;
use crate::source::versions::{chart_versions, VersionRequest};

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Target chart version or range (resolved in the repository)
    #[arg(long, value_name = "V")]
    pub to: Option<String>,
    /// Chart repository (default: $TRAINER_AUDIT_REPO or oci://ghcr.io/kubeflow/charts/kubeflow-trainer)
    #[arg(long, value_name = "oci://REF")]
    pub repo: Option<String>,
    /// Target chart as a local .tgz or directory instead of --to
    #[arg(long, value_name = "PATH", conflicts_with = "to")]
    pub chart: Option<String>,
    /// Installed chart version, when the cluster does not tell
    #[arg(long, value_name = "V")]
    pub from: Option<String>,
    /// Installed chart as a local .tgz or directory (default: pulled from the repository)
    #[arg(long, value_name = "PATH")]
    pub from_chart: Option<String>,
    /// Release name (when there are several, or none yet)
    #[arg(long)]
    pub release: Option<String>,
    /// Release namespace
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub values: ValuesArgs,
    /// More rule files (*.yaml) besides the built-in ones
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Everything gathered before any check runs.
pub struct Prepared {
    pub state: ClusterState,
    pub releases: Vec<Release>,
    pub release_name: String,
    pub namespace: String,
    pub from: semver::Version,
    pub install: Verdict,
    /// The release's user-supplied values merged with -f/--set (what the upgrade applies).
    pub user_values: Map,
    pub rules: Vec<Rule>,
    pub repository: Option<OciRef>,
    /// Release versions in the repository, newest first (empty with a local target chart).
    pub available: Vec<semver::Version>,
    pub notes: Vec<String>,
}

impl Prepared {
    pub fn release(&self) -> Option<&Release> {
        self.releases.iter().find(|r| r.current.name == self.release_name && r.current.namespace == self.namespace)
    }

    pub fn user_values_json(&self) -> Json {
        crate::kube::to_serde(&Value::map(self.user_values.clone()))
    }
}

fn json_to_map(v: &Json) -> Map {
    match crate::kube::from_serde(v) {
        Value::Map(m) => m.entries.borrow().clone(),
        _ => Map::new(),
    }
}

fn version(text: &str, what: &str) -> Result<semver::Version, CliError> {
    crate::version::parse_lenient(text.trim_start_matches('v')).ok_or_else(|| CliError::Usage(format!("invalid {what} version {text:?}")))
}

impl UpgradeArgs {
    pub fn prepare(&self) -> Result<Prepared, CliError> {
        let rules = load(self.rules.as_deref()).map_err(|e| CliError::Usage(e.0))?;
        let state = self.cluster.state()?;
        let (releases, errors) = state.releases();
        if let Some(e) = errors.first() {
            return Err(CliError::Cluster(format!("cannot read the Helm release: {e}")));
        }
        let trainer: Vec<&Release> = releases
            .iter()
            .filter(|r| r.current.chart_name == "kubeflow-trainer")
            .filter(|r| self.release.as_deref().is_none_or(|n| n == r.current.name))
            .filter(|r| self.namespace.as_deref().is_none_or(|n| n == r.current.namespace))
            .collect();
        if trainer.len() > 1 {
            let names: Vec<String> = trainer.iter().map(|r| format!("{}/{}", r.current.namespace, r.current.name)).collect();
            return Err(CliError::Usage(format!(
                "several Trainer releases ({}): pick one with --release and --namespace",
                names.join(", ")
            )));
        }
        let release = trainer.first().copied();
        let controller_ns = state
            .of_kind("Deployment")
            .find(|d| crate::kube::str_at(d, &["metadata", "name"]) == crate::cluster::catalog::CONTROLLER_DEPLOYMENT)
            .map(|d| crate::kube::str_at(d, &["metadata", "namespace"]).to_string());
        let release_name = self.release.clone().or(release.map(|r| r.current.name.clone())).unwrap_or_else(|| "kubeflow-trainer".into());
        let namespace = self
            .namespace
            .clone()
            .or(release.map(|r| r.current.namespace.clone()))
            .or(controller_ns)
            .unwrap_or_else(|| crate::cluster::live::DEFAULT_NAMESPACE.into());
        let install = overall(&state, &releases);
        let from = match (&self.from, installed_version(&state, &releases)) {
            (Some(v), _) => version(v, "--from")?,
            (None, Some(found)) => version(&found.version, "installed")?,
            (None, None) => {
                return Err(CliError::Usage("cannot tell the installed Trainer version from the cluster: pass --from V".into()))
            }
        };
        let mut user_values = release.map(|r| json_to_map(&r.current.config)).unwrap_or_default();
        crate::helm::values::merge_maps(&mut user_values, &self.values.merged()?);
        let (repository, available) = if self.chart.is_some() {
            (None, Vec::new())
        } else {
            let repo = oci_reference(self.repo.as_deref(), "check")?.repository_ref();
            let client = RegistryClient::new(&repo.registry, self.registry.client_options()?)?;
            let tags = runtime()?.block_on(client.list_tags(&repo))?;
            let versions: Vec<semver::Version> = chart_versions(&tags).into_iter().filter(|v| !v.prerelease).map(|v| v.parsed).collect();
            (Some(repo), versions)
        };
        let mut notes = vec![format!(
            "values: the target chart's defaults, then the release's user-supplied values{}, as helm upgrade --reset-then-reuse-values applies them",
            if self.values.files.is_empty() && self.values.set.is_empty() { "" } else { ", then -f/--set" }
        )];
        notes.push(format!(
            "installed version {from} ({})",
            match (&self.from, installed_version(&state, &releases)) {
                (Some(_), _) => "from --from".to_string(),
                (None, Some(v)) => v.evidence,
                (None, None) => String::new(),
            }
        ));
        Ok(Prepared { state, releases, release_name, namespace, from, install, user_values, rules, repository, available, notes })
    }

    /// The target version: `--to` resolved in the repository, or the local chart's version.
    pub fn target_version(&self, prepared: &Prepared) -> Result<semver::Version, CliError> {
        if let Some(path) = &self.chart {
            let chart = load_chart(path, None, &self.registry)?;
            return version(&chart.metadata.version, "target chart");
        }
        let request = VersionRequest::parse(self.to.as_deref()).map_err(|e| CliError::Usage(format!("invalid --to: {e}")))?;
        let Some(to) = self.to.as_deref() else { return Err(CliError::Usage("pass --to V (or --chart PATH)".into())) };
        let tags: Vec<String> = prepared.available.iter().map(|v| v.to_string()).collect();
        let versions = chart_versions(&tags);
        request
            .pick(&versions)
            .map(|v| v.parsed.clone())
            .ok_or_else(|| CliError::Usage(format!("no version matching {to} in the repository (has: {})", tags.join(", "))))
    }

    /// A chart version rendered for this release with the upgrade's values.
    pub fn inventory(&self, prepared: &Prepared, version: &semver::Version, local: Option<&str>) -> Result<Inventory, CliError> {
        let chart: Chart = match (local, &prepared.repository) {
            (Some(path), _) => load_chart(path, None, &self.registry)?,
            (None, Some(repo)) => load_chart(&repo.to_string(), Some(&version.to_string()), &self.registry)?,
            (None, None) => return Err(CliError::Usage(format!("no chart for {version}: pass --repo, or --chart/--from-chart"))),
        };
        let mut options = RenderOptions { values: prepared.user_values.clone(), ..RenderOptions::default() };
        options.release.name = prepared.release_name.clone();
        options.release.namespace = prepared.namespace.clone();
        options.release.is_upgrade = true;
        let rendered = render_chart(&chart, &options)
            .map_err(|e| CliError::Render(format!("cannot render kubeflow-trainer {version} with the release's values: {}", e.0)))?;
        Ok(Inventory::build(&chart, &rendered, &prepared.namespace))
    }

    /// `-f`/`--set` flags to repeat in generated helm commands.
    pub fn values_flags(&self) -> String {
        let mut out = String::new();
        for f in &self.values.files {
            out.push_str(&format!(" -f {}", f.display()));
        }
        for s in &self.values.set {
            out.push_str(&format!(" --set {s}"));
        }
        out
    }
}
