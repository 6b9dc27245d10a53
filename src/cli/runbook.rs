//! `trainer-audit runbook`: the Markdown a person follows during the change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::UpgradeArgs;
use super::{print, CliError};
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::output::{Choice, Flags};
use crate::report::runbook::Runbook;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit runbook --to 2.3.0 -o runbook.md\n  trainer-audit runbook --snapshot cluster.yaml --chart trainer-2.3.0.tgz -o runbook.md"
)]
pub struct RunbookArgs {
    #[command(flatten)]
    pub upgrade: UpgradeArgs,
    /// Write the runbook here (default: standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Markdown, or one self-contained HTML page with the steps as a checklist
    #[arg(long, value_parser = Command::Runbook.format_parser(), default_value = "markdown")]
    pub format: Format,
}

pub fn run(args: RunbookArgs) -> Result<ExitCode, CliError> {
    let upgrade = args.upgrade.prepare()?;
    let (plan, notes) = upgrade.plan()?;
    let made = made_from(&args.upgrade.cluster, upgrade.state.info.captured_at.clone());
    let choice = Choice::new(Flags { output: args.output.clone(), ..Flags::document(Command::Runbook, args.format) })?;
    print(&Runbook { plan, notes, made }, &choice, &Context::default())
}

/// What the runbook is made from, as its header names it and its commands pin it.
fn made_from(cluster: &super::args::ClusterArgs, captured: Option<String>) -> crate::report::runbook::Made {
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string();
    match &cluster.snapshot {
        Some(file) => crate::report::runbook::Made { from: format!("snapshot {}", absolute(file)), at: captured, ..Default::default() },
        None => {
            let context = crate::cluster::live::context_in_use(cluster.kubeconfig.as_deref(), cluster.context.as_deref());
            let now = helm_render::funcs::dates::Time::now().format("2006-01-02T15:04:05Z07:00");
            crate::report::runbook::Made {
                from: match &context {
                    Some(c) => format!("kubeconfig context {}", crate::shell::quote(c)),
                    None => "the in-cluster configuration".to_string(),
                },
                context,
                kubeconfig: cluster.kubeconfig.as_deref().map(absolute),
                at: Some(now),
            }
        }
    }
}
