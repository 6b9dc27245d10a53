//! `trainer-audit diff`: what changes between two chart versions.

use std::process::ExitCode;

use clap::Args;

use super::args::{RegistryArgs, RenderTarget, ValuesArgs};
use super::{document, oci_reference, print, CliError};
use crate::diff::ChartDiff;
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::upgrade::store::{inventory_of, load_reference};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit diff --from 2.2.1 --to 2.3.0\n  trainer-audit diff trainer-2.2.1.tgz trainer-2.3.0.tgz -f values.yaml --format markdown"
)]
pub struct DiffArgs {
    /// The installed (older) chart: oci://…, a .tgz or a directory; or use --from
    #[arg(value_name = "FROM", required_unless_present = "from_version")]
    pub from: Option<String>,
    /// The target chart; or use --to
    #[arg(value_name = "TO", required_unless_present = "to_version")]
    pub to: Option<String>,
    /// Version (or range) of the repository's chart to compare from
    #[arg(long = "from", value_name = "V", conflicts_with = "from")]
    pub from_version: Option<String>,
    /// Version (or range) of the repository's chart to compare to
    #[arg(long = "to", value_name = "V", conflicts_with = "to")]
    pub to_version: Option<String>,
    /// Repository for --from/--to (default: $TRAINER_AUDIT_REPO or the published Trainer chart)
    #[arg(long, value_name = "oci://REF")]
    pub repo: Option<String>,
    #[command(flatten)]
    pub values: ValuesArgs,
    #[command(flatten)]
    pub target: RenderTarget,
    #[arg(long, value_parser = Command::Diff.format_parser(), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

fn side(reference: Option<&str>, version: Option<&str>, args: &DiffArgs) -> Result<crate::inventory::Inventory, CliError> {
    let (reference, version) = match (reference, version) {
        (Some(r), _) => (r.to_string(), None),
        (None, Some(v)) => (oci_reference(args.repo.as_deref(), "diff --from/--to")?.repository_ref().to_string(), Some(v)),
        (None, None) => return Err(CliError::Usage("diff needs FROM and TO charts, or --from V and --to V".into())),
    };
    let chart = load_reference(&reference, version, &args.registry.client_options()?)?;
    let values = args.values.read()?;
    Ok(inventory_of(&reference, &chart, values.merged(), &args.target.release, &args.target.namespace)?)
}

pub fn run(args: DiffArgs) -> Result<ExitCode, CliError> {
    let from = side(args.from.as_deref(), args.from_version.as_deref(), &args)?;
    let to = side(args.to.as_deref(), args.to_version.as_deref(), &args)?;
    let diff = ChartDiff::compute(&from, &to);
    print(&diff, &document(Command::Diff, args.format)?, &Context::default())
}
