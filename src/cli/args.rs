//! Flags several subcommands share, and what they turn into: the registry client's options,
//! the cluster state (a snapshot file or a live context, read-only), Helm's value flags, the
//! release a chart is rendered as, and an upgrade [`Request`].

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{oci_reference, CliError};
use crate::cluster::ClusterState;
use crate::engine::storage::HelmDriver;
use crate::fleet::members::Selection;
use crate::fleet::read::{read_member, Assumed};
use crate::upgrade::values::{UserValues, ValueFlags};
use crate::upgrade::Request;
use chart_source::oci::credentials::{Credential, CredentialStores, FoundCredential, Secret};
use chart_source::oci::{ClientOptions, CredentialSource};
use kube_version::KubeVersion;

#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Use plain HTTP for the registry (never done silently)
    #[arg(long)]
    pub plain_http: bool,
    /// Registry user name (the password comes from --password-stdin)
    #[arg(long, requires = "password_stdin", value_name = "USER")]
    pub username: Option<String>,
    /// Read the registry password or token from standard input
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Seconds one registry request may take
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// The options once built: standard input can be read only once, and `check` talks to the
    /// registry several times.
    #[arg(skip)]
    pub built: std::sync::OnceLock<ClientOptions>,
}

impl RegistryArgs {
    pub fn client_options(&self) -> Result<ClientOptions, CliError> {
        if let Some(built) = self.built.get() {
            return Ok(built.clone());
        }
        let options = self.build_options()?;
        Ok(self.built.get_or_init(|| options).clone())
    }

    fn build_options(&self) -> Result<ClientOptions, CliError> {
        let credentials = match &self.username {
            Some(username) => {
                let mut password = String::new();
                std::io::stdin()
                    .take(64 * 1024)
                    .read_to_string(&mut password)
                    .map_err(|e| CliError::Io(format!("cannot read the password from standard input: {e}")))?;
                let password = password.trim_end_matches(['\n', '\r']).to_string();
                if password.is_empty() {
                    return Err(CliError::Usage("--password-stdin read an empty password from standard input".into()));
                }
                CredentialSource::Given(FoundCredential {
                    credential: Credential::Password { username: username.clone(), password: Secret::new(password) },
                    origin: "--username/--password-stdin".into(),
                })
            }
            None => CredentialSource::Stores(CredentialStores::from_env()),
        };
        Ok(ClientOptions {
            plain_http: self.plain_http,
            timeout: Duration::from_secs(self.timeout),
            credentials,
            user_agent: concat!("trainer-audit/", env!("CARGO_PKG_VERSION")).to_string(),
            client_id: "trainer-audit".to_string(),
            ..ClientOptions::default()
        })
    }
}

#[derive(Debug, Args, Clone, Default)]
pub struct ClusterArgs {
    /// Read this snapshot file (`kubectl get -o yaml|json --show-managed-fields` output, or
    /// `trainer-audit snapshot`)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["context", "kubeconfig"])]
    pub snapshot: Option<PathBuf>,
    /// Kubeconfig context (default: the current context; in a pod, the in-cluster config)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubernetes version to assume when the snapshot does not record one (e.g. 1.33)
    #[arg(long, value_name = "VERSION", value_parser = kube_version_arg)]
    pub kube_version: Option<KubeVersion>,
    /// A neighbour's version the cluster does not tell (image pinned by digest only or `latest`,
    /// no version label), e.g. kueue=0.16.9, or ID=none when it does not run (repeatable; IDs:
    /// kueue, jobset, lws, scheduler-plugins, volcano, training-operator, cert-manager)
    #[arg(long = "neighbour", value_name = "ID=VERSION")]
    pub neighbours: Vec<String>,
}

impl ClusterArgs {
    /// The one cluster, chosen and read as `check`, `plan` and `status` choose and read each
    /// cluster ([`Selection::members`], [`read_member`]); a directory, which those read as a
    /// fleet, is refused.
    pub fn state(&self) -> Result<ClusterState, CliError> {
        let selection = Selection {
            snapshots: self.snapshot.iter().cloned().collect(),
            contexts: self.context.iter().cloned().collect(),
            all_contexts: false,
            kubeconfig: self.kubeconfig.clone(),
        };
        if selection.is_fleet() {
            let dir = self.snapshot.as_ref().or(self.kubeconfig.as_ref()).map(|p| p.display().to_string()).unwrap_or_default();
            return Err(CliError::Usage(format!(
                "{dir} is a directory, and this command reads one cluster: name one file (check, plan and status read a directory as a fleet)"
            )));
        }
        let members = selection.members().map_err(|e| CliError::Usage(e.to_string()))?;
        let [member] = &members[..] else {
            return Err(CliError::Usage(format!("the cluster flags name {} clusters; name one", members.len())));
        };
        let assumed = Assumed::with_neighbours(self.kube_version.clone(), &self.neighbours, &members).map_err(CliError::Usage)?;
        read_member(member, &assumed, std::io::IsTerminal::is_terminal(&std::io::stderr())).map_err(CliError::Cluster)
    }
}

/// A Kubernetes version flag (`--kube-version`, `--to-kube`), read by clap: `1.33`, `v1.33.2`.
pub fn kube_version_arg(v: &str) -> Result<KubeVersion, String> {
    KubeVersion::parse(v).map_err(|e| e.to_string())
}

/// Helm's value flags, shared by every command that renders.
#[derive(Debug, Args, Default, Clone)]
pub struct ValuesArgs {
    /// Values file (repeatable; later files win)
    #[arg(long = "values", short = 'f', value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Set values (a.b=v,c[0]=x,d={x,y})
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Set values as strings
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// Set values from JSON
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// Set values from files' contents
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,
    /// Set one literal string value (no splitting on commas)
    #[arg(long = "set-literal", value_name = "KEY=VALUE")]
    pub set_literal: Vec<String>,
}

impl ValuesArgs {
    /// The flags read and merged as Helm merges them.
    pub fn read(&self) -> Result<UserValues, CliError> {
        let flags = ValueFlags {
            files: self.files.clone(),
            set_json: self.set_json.clone(),
            set: self.set.clone(),
            set_string: self.set_string.clone(),
            set_file: self.set_file.clone(),
            set_literal: self.set_literal.clone(),
        };
        Ok(UserValues::read(&flags)?)
    }
}

/// Release name and namespace a chart is rendered into for review.
#[derive(Debug, Args, Clone)]
pub struct RenderTarget {
    /// Release name the chart is rendered as
    #[arg(long, default_value = "kubeflow-trainer")]
    pub release: String,
    /// Release namespace
    #[arg(long, short = 'n', default_value = "kubeflow-system")]
    pub namespace: String,
}

/// One cluster and the upgrade (`runbook`).
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub flags: UpgradeFlags,
}

impl UpgradeArgs {
    /// The upgrade the flags ask for.
    pub fn request(&self) -> Result<Request, CliError> {
        self.flags.request()
    }

    /// The upgrade prepared against the cluster.
    pub fn prepare(&self) -> Result<crate::upgrade::Upgrade, CliError> {
        self.flags.prepare(&self.cluster)
    }
}

/// What to upgrade to and how, without the cluster (`check` and `plan` take a fleet's flags).
#[derive(Debug, Args)]
pub struct UpgradeFlags {
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
    /// The Kubernetes version the cluster moves to (e.g. 1.37): the target's CRDs, API versions
    /// and tested versions are checked against it; without --to/--chart, Trainer stays as installed
    #[arg(long, value_name = "VERSION", value_parser = kube_version_arg)]
    pub to_kube: Option<KubeVersion>,
    /// Where Helm stores the release's records, as HELM_DRIVER says (default: as the release's
    /// records are stored, else secret)
    #[arg(long, value_enum, value_name = "DRIVER")]
    pub helm_driver: Option<HelmDriver>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

impl UpgradeFlags {
    /// The upgrade the flags ask for (the repository resolved from --repo, the environment or
    /// the default; values read).
    pub fn request(&self) -> Result<Request, CliError> {
        let repository = if self.chart.is_some() { None } else { Some(oci_reference(self.repo.as_deref(), "check")?.repository_ref()) };
        Ok(Request {
            to: self.to.clone(),
            repository,
            chart: self.chart.clone(),
            from: self.from.clone(),
            from_chart: self.from_chart.clone(),
            release: self.release.clone(),
            namespace: self.namespace.clone(),
            values: self.values.read()?,
            rules: crate::audit::rules::RuleSet::load(self.rules.as_deref())?,
            registry: self.registry.client_options()?,
            helm_driver: self.helm_driver,
            to_kube: self.to_kube.clone(),
            ..Request::default()
        })
    }

    /// The upgrade prepared against `cluster`.
    pub fn prepare(&self, cluster: &ClusterArgs) -> Result<crate::upgrade::Upgrade, CliError> {
        let request = self.request()?;
        let state = cluster.state()?;
        Ok(crate::upgrade::Upgrade::prepare(request, state)?)
    }
}

/// The chart whose CRDs objects are validated against, for the commands that read no upgrade
/// (`migrate`, `status --to`).
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target chart version or range, resolved in the repository
    #[arg(long, value_name = "V")]
    pub to: Option<String>,
    /// Chart repository (default: $TRAINER_AUDIT_REPO or oci://ghcr.io/kubeflow/charts/kubeflow-trainer)
    #[arg(long, value_name = "oci://REF")]
    pub repo: Option<String>,
    /// Target chart as a local .tgz or directory instead of --to
    #[arg(long, value_name = "PATH", conflicts_with = "to")]
    pub chart: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

impl TargetArgs {
    /// Whether a target was named (`--to` or `--chart`).
    pub fn given(&self) -> bool {
        self.to.is_some() || self.chart.is_some()
    }

    /// The target chart's CRDs (`--to`, `--chart`, else the repository's newest release).
    pub fn crds(&self, command: &str) -> Result<crate::upgrade::crds::ChartCrds, CliError> {
        Ok(crate::upgrade::crds::chart_crds(&self.request(command)?)?)
    }

    /// The request for the target chart ([`crate::upgrade::crds::chart_crds`] reads it).
    pub fn request(&self, command: &str) -> Result<Request, CliError> {
        let repository = if self.chart.is_some() { None } else { Some(oci_reference(self.repo.as_deref(), command)?.repository_ref()) };
        Ok(Request {
            to: self.to.clone(),
            repository,
            chart: self.chart.clone(),
            registry: self.registry.client_options()?,
            ..Request::default()
        })
    }
}
