//! `trainer-audit migrate`: reads objects (files, a snapshot or the cluster, read-only), converts
//! them with `crate::migrate`, and writes the List, diffs or pre-CRD patch commands; the report of
//! what was and was not carried goes to standard error. Exit 0 when everything converted
//! faithfully, 1 when something was refused or lost, 2 when the run failed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::{ClusterArgs, TargetArgs};
use super::{print, CliError};
use crate::migrate::output::{shell_quote, NextSteps};
use crate::migrate::{self, Options, Source, TargetCrds, DEFAULT_LEGACY_RUNTIME, DEFAULT_PATCH_MANAGER};
use crate::report::document::Context;
use crate::report::format::{Command, Format};
use crate::report::migrate::MigrateDocument;
use crate::report::output::{Choice, Flags};
use kube_validate::stored::{CrdSet, ASSUMED_KUBE};
use kube_version::KubeVersion;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit migrate --snapshot before.yaml --to 2.3.0 -o converted.yaml\n  trainer-audit migrate --manifests jobs.yaml --legacy --format diff\n  trainer-audit migrate --context prod --before-crds\n\nOrder: back up; run --before-crds patches while the old CRDs are installed; apply the new CRDs \
server-side; apply the List; upgrade the chart. With --manifests, --context and --kubeconfig only go into the printed kubectl commands. \
Converted objects are validated against the target chart's CRDs (--to/--chart; default: the repository's newest release) at the \
cluster's Kubernetes version (--kube-version for files)."
)]
pub struct MigrateArgs {
    /// Convert the objects in these files (YAML or JSON, objects or Lists; repeatable) instead of reading a cluster
    #[arg(long = "manifests", alias = "filename", value_name = "FILE", conflicts_with = "snapshot")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The chart whose CRDs the converted objects are validated against (default: the newest release)
    #[command(flatten)]
    pub target: TargetArgs,
    /// Convert legacy Training Operator v1 jobs (PyTorchJob) to TrainJobs instead of Trainer 2.1 objects
    #[arg(long)]
    pub legacy: bool,
    /// yaml: one List for `kubectl apply --server-side`; json: the same List as JSON; diff: a
    /// unified diff per object
    #[arg(long, value_parser = Command::Migrate.format_parser(), default_value = "yaml")]
    pub format: Format,
    /// Print the kubectl patch commands that must run while the 2.1 CRDs are still installed, instead of the List
    #[arg(long)]
    pub before_crds: bool,
    /// Write to this file (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// runtimePatches[].manager for the patches the converter writes (a domain-prefixed path)
    #[arg(long, value_name = "NAME", default_value = DEFAULT_PATCH_MANAGER)]
    pub patch_manager: String,
    /// Runtime converted PyTorchJobs reference (--legacy)
    #[arg(long, value_name = "NAME", default_value = DEFAULT_LEGACY_RUNTIME)]
    pub runtime: String,
    /// Create converted legacy jobs suspended, so nothing trains before a review (--legacy)
    #[arg(long)]
    pub suspend: bool,
}

pub fn run(args: MigrateArgs) -> Result<ExitCode, CliError> {
    if let Some(n) = args.cluster.neighbours.first() {
        return Err(CliError::Usage(format!("--neighbour {n}: migrate reads no neighbour; drop the flag")));
    }
    let source = if args.files.is_empty() { Source::Cluster } else { Source::Files };
    let mut options = Options::new(args.legacy, source);
    options.patch_manager = args.patch_manager.clone();
    options.legacy_runtime = args.runtime.clone();
    options.suspend_legacy = args.suspend;
    options.validate().map_err(|e| CliError::Usage(e.to_string()))?;
    let mut server = args.cluster.kube_version.clone();
    let objects = match source {
        Source::Files => migrate::input::read_files(&args.files).map_err(|e| CliError::Usage(e.to_string()))?,
        Source::Cluster => {
            let state = args.cluster.state()?;
            for w in &state.warnings {
                eprintln!("warning: {w}");
            }
            if !args.legacy && migrate::input::crd_already_new(&state) {
                eprintln!(
                    "warning: the cluster's TrainJob CRD already has spec.runtimePatches (2.2+): the API server no longer returns \
                     2.1-only fields (podTemplateOverrides, labels, annotations, runtime numProcPerNode, elasticPolicy); \
                     convert the snapshot taken before the CRD update instead (--snapshot FILE)"
                );
            }
            server = state.info.server_version.clone();
            state.objects
        }
    };
    let schema = target_schema(&args.target, server.as_ref(), source == Source::Cluster)?;
    let migration = migrate::migrate(&objects, &options, &schema);
    let next = NextSteps {
        before_crds: Some(rerun(&["--before-crds"])),
        list_file: match (&args.output, args.format, args.before_crds) {
            (Some(p), Format::Yaml | Format::Json, false) => Some(shell_quote(&p.display().to_string())),
            _ => None,
        },
        list_command: rerun(&["--format", "yaml"]),
        kubectl: kubectl(&args),
    };
    let doc = MigrateDocument { migration, before_crds: args.before_crds, kubectl: kubectl(&args), next };
    let choice = Choice::new(Flags { output: args.output.clone(), ..Flags::document(Command::Migrate, args.format) })?;
    print(&doc, &choice, &Context::default())
}

/// The target chart's CRDs compiled for the cluster's version (`--kube-version` with files; the
/// newest the validator models when nothing tells, said in the report).
fn target_schema(target: &TargetArgs, server: Option<&KubeVersion>, server_was_read: bool) -> Result<TargetCrds, CliError> {
    let chart = target.crds("migrate")?;
    let (kube, how) = match server {
        Some(k) => (k.minor_version(), String::new()),
        None => (
            ASSUMED_KUBE,
            format!(
                " (assumed, not the cluster's: no --kube-version was given and {}, so the newest version the validator models; \
                 pass --kube-version with the cluster's version, whose CEL rules may differ)",
                if server_was_read { "the cluster read told none" } else { "manifests carry none" }
            ),
        ),
    };
    let crds = CrdSet::new(chart.crds.iter(), kube.clone());
    for skipped in &crds.skipped {
        eprintln!("warning: the target CRD {skipped}: objects of its kind are not validated");
    }
    Ok(TargetCrds { crds, label: format!("the CRDs of {} at Kubernetes {kube}{how}", chart.chart) })
}

/// `kubectl` with the user's context flags, quoted.
fn kubectl(args: &MigrateArgs) -> String {
    let mut cmd = String::from("kubectl");
    if let Some(c) = &args.cluster.context {
        cmd.push_str(&format!(" --context {}", shell_quote(c)));
    }
    if let Some(k) = &args.cluster.kubeconfig {
        cmd.push_str(&format!(" --kubeconfig {}", shell_quote(&k.display().to_string())));
    }
    cmd
}

/// This very invocation, without its output choices, plus `extra`: a command that runs as printed.
fn rerun(extra: &[&str]) -> String {
    crate::shell::rerun(std::env::args(), &["-o", "--output", "--format"], &["--before-crds"], extra)
}
