//! The cluster flags of `status`, `check` and `plan` (one cluster or a fleet), and the glue that
//! runs any of them: members from the flags, [`Auditor::run`] (a single cluster is a fleet of
//! one), and the output [`Choice`] the command made.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::kube_version_arg;
use super::CliError;
use crate::fleet::audit::{Auditor, Job, Reading};
use crate::fleet::members::Selection;
use crate::fleet::read::Assumed;
use crate::report::document::Context;
use crate::report::output::{Choice, Printer};
use kube_version::KubeVersion;

#[derive(Debug, Args, Clone, Default)]
pub struct FleetArgs {
    /// Snapshot file, or a directory of them (repeatable; several make a fleet)
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["context", "kubeconfig", "all_contexts"])]
    pub snapshot: Vec<PathBuf>,
    /// Kubeconfig context (repeatable; default: the current context; in a pod, the in-cluster config)
    #[arg(long, value_name = "NAME")]
    pub context: Vec<String>,
    /// Every context of the kubeconfig, as a fleet
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
    /// Kubeconfig file, or a directory of them: a fleet, one cluster per file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE|DIR")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubernetes version to assume when a snapshot does not record one (e.g. 1.33)
    #[arg(long, value_name = "VERSION", value_parser = kube_version_arg)]
    pub kube_version: Option<KubeVersion>,
    /// A neighbour's version the cluster does not tell (image pinned by digest only or `latest`,
    /// no version label), e.g. kueue=0.16.9, or ID=none when it does not run; CLUSTER: limits it
    /// to one cluster of a fleet (repeatable; IDs: kueue, jobset, lws, scheduler-plugins, volcano,
    /// training-operator, cert-manager)
    #[arg(long = "neighbour", value_name = "[CLUSTER:]ID=VERSION")]
    pub neighbours: Vec<String>,
    /// Clusters read at once in a fleet; memory grows with it (about one cluster's objects each)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
}

impl FleetArgs {
    pub(super) fn selection(&self) -> Selection {
        Selection {
            snapshots: self.snapshot.clone(),
            contexts: self.context.clone(),
            all_contexts: self.all_contexts,
            kubeconfig: self.kubeconfig.clone(),
        }
    }

    /// True when the flags may name several clusters (the output is a fleet's).
    pub fn is_fleet(&self) -> bool {
        self.selection().is_fleet()
    }
}

/// Runs `job` on the clusters the flags name (one, or a fleet) and prints as `choice` says,
/// renderers reading `ctx`: the glue between the flags, [`Auditor`] and [`Printer`].
pub fn run(job: Job, args: &FleetArgs, choice: &Choice, ctx: Context) -> Result<ExitCode, CliError> {
    let members = args.selection().members().map_err(|e| CliError::Usage(e.to_string()))?;
    let assumed = Assumed::with_neighbours(args.kube_version.clone(), &args.neighbours, &members).map_err(CliError::Usage)?;
    let reading =
        Reading { members: &members, concurrency: usize::from(args.concurrency), assumed: &assumed, fleet: choice.reads_as_fleet() };
    let mut auditor = Auditor::new(job);
    let mut printer = Printer::new(choice, &members, ctx);
    let rows = auditor.run(&reading, |index, o| printer.cluster(index, o.row, o.report, o.read))?;
    let code = printer.finish(&rows)?;
    Ok(ExitCode::from(code))
}
