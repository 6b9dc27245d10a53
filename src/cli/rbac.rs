//! `trainer-audit rbac`: the least-privilege ClusterRole and binding the tool needs (get and
//! list on exactly what it reads), and with `--cronjob` a CronJob running `check` in the cluster.

use std::process::ExitCode;

use clap::Args;

use super::CliError;
use crate::cronjob::{validate, CronJob};
use crate::report::format::{Command, Format};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  trainer-audit rbac | kubectl apply -f -\n  trainer-audit rbac --cronjob --schedule '0 6 * * 1-5' --to '~2.3' | kubectl apply -f -"
)]
pub struct RbacArgs {
    /// ServiceAccount the binding names
    #[arg(long, default_value = "trainer-audit")]
    pub service_account: String,
    /// Namespace of that ServiceAccount
    #[arg(long, short = 'n', default_value = "kubeflow-system")]
    pub namespace: String,
    /// Also print a CronJob that runs `check --format jsonl` in the cluster with that account
    #[arg(long, requires = "schedule")]
    pub cronjob: bool,
    /// When the CronJob runs: five cron fields ('0 6 * * 1-5') or @daily, @hourly, …
    #[arg(long, requires = "cronjob", value_name = "CRON")]
    pub schedule: Option<String>,
    /// IANA time zone of the schedule (e.g. Europe/Berlin; default: the controller manager's)
    #[arg(long, requires = "cronjob", value_name = "ZONE")]
    pub time_zone: Option<String>,
    /// Image the CronJob runs (build it with the repository's Dockerfile and push it where the cluster pulls from)
    #[arg(long, requires = "cronjob", default_value = crate::cronjob::DEFAULT_IMAGE)]
    pub image: String,
    /// Target version or range the CronJob checks against (default: the newest release)
    #[arg(long, requires = "cronjob", default_value = "*", value_name = "V")]
    pub to: String,
    /// Chart repository the CronJob checks against (default: the published Trainer repository)
    #[arg(long, requires = "cronjob", value_name = "oci://REF")]
    pub repo: Option<String>,
    /// What each run writes: a JSON line, or OpenMetrics text (to the log, or with
    /// --metrics-pvc to a file for a textfile collector)
    #[arg(long, requires = "cronjob", value_parser = Command::CronJob.format_parser(), default_value = "jsonl")]
    pub cronjob_format: Format,
    /// PersistentVolumeClaim the OpenMetrics file is written to (mounted at /metrics, file trainer_audit.prom)
    #[arg(long, requires = "cronjob", value_name = "CLAIM")]
    pub metrics_pvc: Option<String>,
}

pub fn run(args: RbacArgs) -> Result<ExitCode, CliError> {
    let mut text = crate::rbac::manifest(&args.service_account, &args.namespace);
    if args.cronjob {
        let cronjob = CronJob {
            namespace: args.namespace.clone(),
            service_account: args.service_account.clone(),
            schedule: args.schedule.clone().unwrap_or_default(),
            time_zone: args.time_zone.clone(),
            image: args.image.clone(),
            to: args.to.clone(),
            repo: args.repo.clone(),
            metrics: match (args.cronjob_format, &args.metrics_pvc) {
                (Format::Openmetrics, None) => Some(crate::cronjob::Metrics::Log),
                (Format::Openmetrics, Some(claim)) => Some(crate::cronjob::Metrics::Claim(claim.clone())),
                (_, None) => None,
                (_, Some(_)) => {
                    return Err(CliError::Usage("--metrics-pvc holds OpenMetrics text: add --cronjob-format openmetrics".into()))
                }
            },
        };
        validate(&cronjob).map_err(|e| CliError::Usage(e.to_string()))?;
        if let Some(repo) = &args.repo {
            super::oci_reference(Some(repo), "rbac --cronjob --repo")?;
        }
        // As `check --to` will read it.
        chart_source::versions::VersionRequest::parse(Some(&args.to)).map_err(|e| CliError::Usage(format!("invalid --to: {e}")))?;
        text.push_str(&crate::cronjob::manifest(&cronjob).map_err(|e| CliError::Io(e.to_string()))?);
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
