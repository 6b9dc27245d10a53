//! `check --format openmetrics`: a fleet's (or one cluster's) readiness as metrics in the
//! OpenMetrics 1.0 text format, which Prometheus' text exposition parser also reads (so it suits
//! node_exporter's textfile collector and a Pushgateway): per cluster the verdict, the exit code,
//! the findings by severity and by rule, the installed and target versions, and when the
//! cluster was read.
//!
//! Only gauges are written (Prometheus' text format 0.0.4 knows no `info` or `stateset` type),
//! every family once with its `# HELP` and `# TYPE` before its samples, no sample timestamps
//! (the textfile collector refuses them: the read time is a metric of its own), and `# EOF` last
//! (a comment to Prometheus' parser). Label values escape `\`, `"` and newlines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::audit::finding::{Finding, Severity};

/// The verdicts a check's cluster can have, each a sample of `trainer_audit_cluster_verdict`.
pub const VERDICTS: [&str; 3] = ["ready", "blocked", "failed"];

/// One cluster's part.
#[derive(Debug, Clone)]
pub struct Cluster<'a> {
    pub cluster: &'a str,
    /// `ready`, `blocked` or `failed`.
    pub verdict: &'a str,
    pub exit_code: u8,
    pub installed: Option<&'a str>,
    pub target: Option<&'a str>,
    /// The deployment method (`helm`, `argocd`, …).
    pub method: Option<&'a str>,
    /// None when the cluster failed (nothing was counted).
    pub findings: Option<&'a [Finding]>,
    /// When the cluster was read (a snapshot's capture time), in Unix seconds; None when not known.
    pub read_at: Option<i64>,
}

/// A serde-named deployment method (`argocd`) for a label.
pub fn method_name(method: crate::engine::Method) -> String {
    serde_json::to_value(method).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Escapes a label value.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{}\"", label(v))).collect();
    format!("{{{}}}", inner.join(","))
}

fn family(out: &mut String, name: &str, help: &str, samples: &[(String, String)]) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    if name.ends_with("_seconds") {
        let _ = writeln!(out, "# UNIT {name} seconds");
    }
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{labels} {value}");
    }
}

/// The exposition for these clusters, in their order; `fail_on` is the gate they were judged at.
pub fn render(clusters: &[Cluster], fail_on: Severity) -> String {
    let mut out = String::new();
    let mut verdicts = Vec::new();
    let mut exits = Vec::new();
    let mut by_severity = Vec::new();
    let mut by_rule = Vec::new();
    let mut info = Vec::new();
    let mut read = Vec::new();
    for c in clusters {
        for v in VERDICTS {
            let value = if v == c.verdict { "1" } else { "0" };
            verdicts.push((labels(&[("cluster", c.cluster), ("verdict", v), ("fail_on", fail_on.as_str())]), value.to_string()));
        }
        exits.push((labels(&[("cluster", c.cluster)]), c.exit_code.to_string()));
        if let Some(findings) = c.findings {
            for s in [Severity::Error, Severity::Warning, Severity::Info] {
                let n = findings.iter().filter(|f| f.severity == s).count();
                by_severity.push((labels(&[("cluster", c.cluster), ("severity", s.as_str())]), n.to_string()));
            }
            let mut rules: BTreeMap<(&str, Severity), usize> = BTreeMap::new();
            for f in findings {
                *rules.entry((f.id.as_str(), f.severity)).or_default() += 1;
            }
            for ((rule, severity), n) in rules {
                by_rule.push((labels(&[("cluster", c.cluster), ("rule", rule), ("severity", severity.as_str())]), n.to_string()));
            }
        }
        if c.verdict != "failed" {
            let pairs = [
                ("cluster", c.cluster),
                ("installed", c.installed.unwrap_or("")),
                ("target", c.target.unwrap_or("")),
                ("method", c.method.unwrap_or("")),
            ];
            info.push((labels(&pairs), "1".to_string()));
        }
        if let Some(t) = c.read_at {
            read.push((labels(&[("cluster", c.cluster)]), t.to_string()));
        }
    }
    family(
        &mut out,
        "trainer_audit_cluster_verdict",
        "The cluster's upgrade verdict: 1 for the verdict it has, 0 for the others.",
        &verdicts,
    );
    family(
        &mut out,
        "trainer_audit_cluster_exit_code",
        "What trainer-audit check exits with for this cluster alone (0 ready, 1 blocked, 2 failed).",
        &exits,
    );
    family(&mut out, "trainer_audit_findings", "Findings for the upgrade, by severity.", &by_severity);
    family(&mut out, "trainer_audit_rule_findings", "Findings for the upgrade, by rule and severity.", &by_rule);
    family(
        &mut out,
        "trainer_audit_cluster_info",
        "The installed and target Kubeflow Trainer chart versions and how Trainer is deployed (value always 1).",
        &info,
    );
    family(
        &mut out,
        "trainer_audit_read_timestamp_seconds",
        "When the cluster was read (a snapshot: when it was taken), in Unix seconds.",
        &read,
    );
    out.push_str("# EOF\n");
    out
}

/// An RFC 3339 time (a snapshot's `capturedAt`) in Unix seconds.
pub fn unix_seconds(rfc3339: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).ok().map(|t| t.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_whole_and_labels_escaped() {
        let clusters = [
            Cluster {
                cluster: "prod \"east\"\\1",
                verdict: "blocked",
                exit_code: 1,
                installed: Some("2.2.1"),
                target: Some("2.3.0"),
                method: Some("helm"),
                findings: Some(&[]),
                read_at: unix_seconds("2026-11-30T09:00:00Z"),
            },
            Cluster {
                cluster: "lab",
                verdict: "failed",
                exit_code: 2,
                installed: None,
                target: None,
                method: None,
                findings: None,
                read_at: None,
            },
        ];
        let text = render(&clusters, Severity::Error);
        assert!(text.ends_with("\n# EOF\n"));
        assert!(
            text.contains("trainer_audit_cluster_verdict{cluster=\"prod \\\"east\\\"\\\\1\",verdict=\"blocked\",fail_on=\"error\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("trainer_audit_cluster_verdict{cluster=\"lab\",verdict=\"failed\",fail_on=\"error\"} 1\n"));
        assert!(text.contains("trainer_audit_read_timestamp_seconds{cluster=\"prod \\\"east\\\"\\\\1\"} 1796029200\n"), "{text}");
        // A failed cluster has no counts or versions: absent, not zero.
        assert!(!text.contains("trainer_audit_findings{cluster=\"lab\""));
        assert!(!text.contains("trainer_audit_cluster_info{cluster=\"lab\""));
        assert_eq!(text.matches("# TYPE ").count(), 6);
    }
}
