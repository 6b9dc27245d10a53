//! The CronJob that runs `trainer-audit check --format jsonl` inside the cluster on a schedule,
//! under the read-only ServiceAccount `trainer-audit rbac` prints. Its Pod meets the Pod Security
//! `restricted` level (non-root, no privilege escalation, every capability dropped, the runtime's
//! default seccomp profile) and runs on a read-only root with one `emptyDir` at `/tmp` for the
//! chart cache (the image sets `TRAINER_AUDIT_CACHE_DIR=/tmp/trainer-audit`; the manifest says so
//! too, for images built otherwise). Each run writes one JSON line to its log; the Job completes
//! when the cluster is ready, and fails (no retry) when findings block (exit 1) or the run failed
//! (exit 2).

use serde_json::{json, Value as Json};

/// The image the README's `docker build` line tags.
pub const DEFAULT_IMAGE: &str = concat!("trainer-audit:", env!("CARGO_PKG_VERSION"));
/// The image's non-root user and group (distroless `nonroot`).
pub const IMAGE_USER: u32 = 65532;
pub const NAME: &str = "trainer-audit-check";
/// Selects the CronJob's Pods (`kubectl logs -l`).
pub const SELECTOR: &str = "app.kubernetes.io/name=trainer-audit,app.kubernetes.io/component=check";

/// What the CronJob is made of.
#[derive(Debug, Clone)]
pub struct CronJob {
    pub namespace: String,
    pub service_account: String,
    pub schedule: String,
    /// IANA time zone for the schedule (`spec.timeZone`), or the controller manager's.
    pub time_zone: Option<String>,
    pub image: String,
    /// Target version or range for `check --to`.
    pub to: String,
    /// `check --repo`, when not the default repository.
    pub repo: Option<String>,
    /// Write OpenMetrics text instead of a JSON line: None for JSON Lines in the log.
    pub metrics: Option<Metrics>,
}

/// Where the CronJob's OpenMetrics text goes (`rbac --cronjob --cronjob-format openmetrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metrics {
    /// To the Pod's log.
    Log,
    /// Into `trainer_audit.prom` on this PersistentVolumeClaim, mounted at [`METRICS_DIR`] (a
    /// node_exporter textfile collector or a file server reads it from there; the file is
    /// replaced atomically, as the textfile collector asks).
    Claim(String),
}

/// Where a metrics claim is mounted, and the file written there.
pub const METRICS_DIR: &str = "/metrics";
pub const METRICS_FILE: &str = "/metrics/trainer_audit.prom";

#[derive(Debug, thiserror::Error)]
pub enum CronJobError {
    #[error(
        "invalid --schedule {0:?}: expected five cron fields (minute hour day-of-month month day-of-week, e.g. '0 6 * * 1-5') \
         or one of @yearly, @monthly, @weekly, @daily, @hourly, @every DURATION"
    )]
    Schedule(String),
    #[error("invalid {what} {value:?}: {why}")]
    Name { what: &'static str, value: String, why: &'static str },
}

/// Checks what the API server would reject later with a less direct message.
pub fn validate(c: &CronJob) -> Result<(), CronJobError> {
    dns_label("-n/--namespace", &c.namespace)?;
    dns_subdomain("--service-account", &c.service_account)?;
    if !valid_schedule(&c.schedule) {
        return Err(CronJobError::Schedule(c.schedule.clone()));
    }
    if let Some(Metrics::Claim(claim)) = &c.metrics {
        dns_subdomain("--metrics-pvc", claim)?;
    }
    if c.image.trim().is_empty() || c.image.chars().any(char::is_whitespace) {
        return Err(CronJobError::Name { what: "--image", value: c.image.clone(), why: "an image reference has no spaces" });
    }
    Ok(())
}

/// Kubernetes' cron (robfig/cron's standard parser): five fields or a descriptor. A `TZ=`
/// prefix is refused by the API server (use `--time-zone`).
fn valid_schedule(s: &str) -> bool {
    let s = s.trim();
    if let Some(every) = s.strip_prefix("@every ") {
        return !every.trim().is_empty();
    }
    if s.starts_with('@') {
        return ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"].contains(&s);
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    fields.len() == 5 && fields.iter().all(|f| f.chars().all(|c| c.is_ascii_alphanumeric() || "*/,-?".contains(c)))
}

fn dns_label(what: &'static str, value: &str) -> Result<(), CronJobError> {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    ok.then_some(()).ok_or(CronJobError::Name {
        what,
        value: value.to_string(),
        why: "a namespace is at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
    })
}

fn dns_subdomain(what: &'static str, value: &str) -> Result<(), CronJobError> {
    let ok = !value.is_empty()
        && value.len() <= 253
        && value.split('.').all(|part| {
            !part.is_empty()
                && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        });
    ok.then_some(()).ok_or(CronJobError::Name {
        what,
        value: value.to_string(),
        why: "a name is lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
    })
}

/// The container's arguments: the command it runs.
pub fn args(c: &CronJob) -> Vec<String> {
    let format = if c.metrics.is_some() { "openmetrics" } else { "jsonl" };
    let mut args: Vec<String> = ["check", "--to", c.to.as_str(), "--format", format].iter().map(|s| s.to_string()).collect();
    if let Some(Metrics::Claim(_)) = &c.metrics {
        args.extend(["-o".to_string(), METRICS_FILE.to_string()]);
    }
    if let Some(repo) = &c.repo {
        args.extend(["--repo".to_string(), repo.clone()]);
    }
    args
}

/// The CronJob object.
pub fn object(c: &CronJob) -> Json {
    let labels = json!({"app.kubernetes.io/name": "trainer-audit", "app.kubernetes.io/component": "check"});
    let mut spec = json!({
        "schedule": c.schedule.trim(),
        // One run at a time; a run missed by more than an hour is skipped, not caught up.
        "concurrencyPolicy": "Forbid",
        "startingDeadlineSeconds": 3600,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {
            "metadata": {"labels": labels},
            "spec": {
                // Exit 1 (blocking findings) is an answer, not a crash: never retried.
                "backoffLimit": 0,
                "activeDeadlineSeconds": 1800,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": c.service_account,
                        "restartPolicy": "Never",
                        "securityContext": {
                            "runAsNonRoot": true,
                            "runAsUser": IMAGE_USER,
                            "runAsGroup": IMAGE_USER,
                            "seccompProfile": {"type": "RuntimeDefault"}
                        },
                        "containers": [{
                            "name": "trainer-audit",
                            "image": c.image.trim(),
                            "args": args(c),
                            "env": [{"name": "TRAINER_AUDIT_CACHE_DIR", "value": "/tmp/trainer-audit"}],
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "1Gi"}},
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "readOnlyRootFilesystem": true,
                                "capabilities": {"drop": ["ALL"]}
                            },
                            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]
                        }],
                        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}]
                    }
                }
            }
        }
    });
    if let Some(Metrics::Claim(claim)) = &c.metrics {
        let pod = &mut spec["jobTemplate"]["spec"]["template"]["spec"];
        if let Some(mounts) = pod["containers"][0]["volumeMounts"].as_array_mut() {
            mounts.push(json!({"name": "metrics", "mountPath": METRICS_DIR}));
        }
        if let Some(volumes) = pod["volumes"].as_array_mut() {
            volumes.push(json!({"name": "metrics", "persistentVolumeClaim": {"claimName": claim}}));
        }
    }
    if let (Some(tz), Some(obj)) = (&c.time_zone, spec.as_object_mut()) {
        obj.insert("timeZone".into(), Json::String(tz.clone()));
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": NAME, "namespace": c.namespace, "labels": labels},
        "spec": spec
    })
}

/// The CronJob as a YAML document (after a `---`), with a comment on reading its output.
pub fn manifest(c: &CronJob) -> Result<String, helm_render::yaml::EmitError> {
    let yaml = crate::objects::yaml_of(&object(c))?;
    let command = crate::shell::join(std::iter::once("trainer-audit").chain(args(c).iter().map(String::as_str)));
    let logs = crate::shell::join(["kubectl", "logs", "-n", &c.namespace, "-l", SELECTOR, "--prefix"]);
    let what = match &c.metrics {
        None => format!("# Each run logs one JSON line (schema trainer-audit.dev/fleet/v1); read them with:\n#   {logs}"),
        Some(Metrics::Log) => format!("# Each run logs the cluster's readiness as OpenMetrics text; read it with:\n#   {logs}"),
        Some(Metrics::Claim(claim)) => format!(
            "# Each run replaces {METRICS_FILE} on the PersistentVolumeClaim {claim} with the cluster's readiness as\n\
# OpenMetrics text (for a node_exporter textfile collector that mounts the same claim); errors are logged:\n#   {logs}"
        ),
    };
    Ok(format!("---\n# Runs on schedule: {command}\n{what}\n{yaml}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cronjob() -> CronJob {
        CronJob {
            namespace: "kubeflow-system".into(),
            service_account: "trainer-audit".into(),
            schedule: "0 6 * * 1-5".into(),
            time_zone: None,
            image: DEFAULT_IMAGE.into(),
            to: "*".into(),
            repo: None,
            metrics: None,
        }
    }

    #[test]
    fn with_a_metrics_claim_the_check_writes_openmetrics_there() {
        let c = CronJob { metrics: Some(Metrics::Claim("trainer-metrics".into())), ..cronjob() };
        assert!(validate(&c).is_ok());
        let o = object(&c);
        let pod = &o["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0]["args"], json!(["check", "--to", "*", "--format", "openmetrics", "-o", METRICS_FILE]));
        assert_eq!(pod["containers"][0]["volumeMounts"][1], json!({"name": "metrics", "mountPath": "/metrics"}));
        assert_eq!(pod["volumes"][1], json!({"name": "metrics", "persistentVolumeClaim": {"claimName": "trainer-metrics"}}));
        let log = CronJob { metrics: Some(Metrics::Log), ..cronjob() };
        assert_eq!(args(&log), ["check", "--to", "*", "--format", "openmetrics"]);
        assert!(validate(&CronJob { metrics: Some(Metrics::Claim("Bad_Claim".into())), ..cronjob() }).is_err());
    }

    #[test]
    fn schedules_and_names_are_checked_before_the_api_server_sees_them() {
        assert!(validate(&cronjob()).is_ok());
        for good in ["@daily", "@every 6h", "*/15 * * * *", "0 6 * * MON-FRI", "0 0 1 JAN ?"] {
            assert!(valid_schedule(good), "{good}");
        }
        for bad in ["", "daily", "0 6 * *", "0 6 * * * *", "TZ=UTC 0 6 * * *", "@fortnightly", "0 6 * * 1;rm"] {
            assert!(!valid_schedule(bad), "{bad}");
        }
        let bad_ns = CronJob { namespace: "Kubeflow".into(), ..cronjob() };
        assert!(validate(&bad_ns).unwrap_err().to_string().contains("\"Kubeflow\""));
        assert!(validate(&CronJob { service_account: "a..b".into(), ..cronjob() }).is_err());
        assert!(validate(&CronJob { image: "my image".into(), ..cronjob() }).is_err());
    }

    #[test]
    fn the_pod_is_restricted_and_runs_check_as_json_lines() {
        let c =
            CronJob { time_zone: Some("Europe/Berlin".into()), repo: Some("oci://r.example/charts/kubeflow-trainer".into()), ..cronjob() };
        let o = object(&c);
        assert_eq!(o["spec"]["timeZone"], "Europe/Berlin");
        let pod = &o["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
        let container = &pod["containers"][0];
        assert_eq!(container["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
        assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(
            container["args"],
            json!(["check", "--to", "*", "--format", "jsonl", "--repo", "oci://r.example/charts/kubeflow-trainer"])
        );
        assert_eq!(pod["volumes"][0]["emptyDir"]["sizeLimit"], "256Mi");
        // `*` is a YAML alias indicator: it must come out quoted.
        let text = manifest(&c).unwrap();
        assert!(text.contains("- '*'") || text.contains("- \"*\""), "{text}");
        assert!(text.starts_with("---\n# Runs on schedule: trainer-audit check --to '*' --format jsonl --repo"), "{text}");
    }
}
