//! `trainer-audit runbook`: the Markdown a person follows during the change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::UpgradeArgs;
use super::CliError;

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
    #[arg(long, value_enum, default_value_t = RunbookFormat::Markdown)]
    pub format: RunbookFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RunbookFormat {
    Markdown,
    Html,
}

pub fn run(args: RunbookArgs) -> Result<ExitCode, CliError> {
    let upgrade = args.upgrade.prepare()?;
    let (plan, notes) = upgrade.plan()?;
    let made = made_from(&args.upgrade.cluster, upgrade.state.info.captured_at.clone());
    let text = match args.format {
        RunbookFormat::Markdown => crate::report::runbook::markdown(&plan, &notes, &made),
        RunbookFormat::Html => crate::report::html_runbook::page_for(&plan, &notes, &made),
    };
    match &args.output {
        Some(path) => {
            chart_source::atomic_write::write_atomically(path, text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
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
