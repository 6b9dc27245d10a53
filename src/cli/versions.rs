//! `trainer-audit versions`: the semver tags of a repository, newest first.

use std::process::ExitCode;

use clap::Args;

use super::args::RegistryArgs;
use super::{document, oci_reference, print, runtime, CliError};
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::source::VersionList;
use chart_source::oci::RegistryClient;
use chart_source::versions::{chart_versions, visible};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit versions\n  trainer-audit versions oci://ghcr.io/kubeflow/charts/kubeflow-trainer --all --format json"
)]
pub struct VersionsArgs {
    /// Repository (oci://host/path/name); default $TRAINER_AUDIT_REPO or the Kubeflow Trainer chart
    #[arg(value_name = "REF")]
    pub reference: Option<String>,
    /// Include pre-releases and 0.0.0-* development builds
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_parser = Command::Versions.format_parser(), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: VersionsArgs) -> Result<ExitCode, CliError> {
    let reference = oci_reference(args.reference.as_deref(), "versions")?;
    if reference.tag.is_some() || reference.digest.is_some() {
        return Err(CliError::Usage(format!("versions lists a repository; drop the tag or digest from {reference}")));
    }
    let client = RegistryClient::new(&reference.registry, args.registry.client_options()?)?;
    let tags = runtime()?.block_on(client.list_tags(&reference))?;
    let versions = chart_versions(&tags);
    let list = VersionList { versions: visible(&versions, args.all), repository: reference.to_string(), all: args.all };
    print(&list, &document(Command::Versions, args.format)?, &Context::default())
}
