//! The GitOps review for code-scanning and merge-request tools. SARIF 2.1.0: one result per
//! finding, located at its GitOps file and line (a URI relative to the tree root, under the base
//! id `%SRCROOT%` whose absolute location `originalUriBaseIds` records), with the engine options
//! it depends on as related locations. GitHub's upload-sarif takes a relative URI as relative to
//! the checkout (github/codeql-action src/fingerprints.ts, v4.36.2), so run the review with the
//! repository root as the tree. GitLab Code Quality: the CodeClimate subset GitLab reads
//! (`description`, `check_name`, `fingerprint`, `severity`, `location.path`,
//! `location.lines.begin`; docs.gitlab.com/ci/testing/code_quality, "Code Quality report format").

use std::path::Path;

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::audit::finding::Severity;
use crate::audit::rules::Rule;
use crate::gitops::Location;
use crate::gitops_review::{GitopsReview, LocatedFinding};

pub const BASE_ID: &str = "%SRCROOT%";

/// A relative path as a URI reference: every byte but unreserved characters and `/` escaped.
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn physical(at: &Location) -> serde_json::Value {
    json!({
        "artifactLocation": {"uri": uri_path(&at.file), "uriBaseId": BASE_ID},
        "region": {"startLine": at.line, "startColumn": at.column},
    })
}

/// `root` is the tree the locations are relative to (made absolute for `originalUriBaseIds`).
pub fn sarif(review: &GitopsReview, rules: &[Rule], root: &Path) -> serde_json::Value {
    let findings: Vec<&LocatedFinding> = review.findings().collect();
    let (descriptors, index) = super::sarif::descriptors(findings.iter().map(|f| &f.finding), rules);
    let results = findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.finding.id,
                "ruleIndex": index[f.finding.id.as_str()],
                "level": f.finding.severity.sarif_level(),
                "message": {"text": message(f)},
                "locations": [{"physicalLocation": physical(&f.at)}],
                "partialFingerprints": {"trainerAudit/v1": fingerprint(f)},
            });
            if !f.related.is_empty() {
                let related: Vec<serde_json::Value> = f
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, r)| json!({"id": i + 1, "physicalLocation": physical(&r.at), "message": {"text": r.what}}))
                    .collect();
                result["relatedLocations"] = json!(related);
            }
            result
        })
        .collect();
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut uri = format!("file://{}", uri_path(&root.to_string_lossy()));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    let mut doc = super::sarif::log(descriptors, results, Some(json!({ BASE_ID: {"uri": uri} })));
    let decision = review.decision();
    doc["runs"][0]["invocations"] = json!([{
        "executionSuccessful": true,
        "exitCode": review.decision().exit_code(),
        "properties": {"verdict": decision.verdict, "summary": decision.line(), "counts": decision.counts, "failOn": decision.fail_on},
    }]);
    doc
}

/// The reference, subject and message, then the evidence (a code-scanning alert shows nothing
/// else of the finding but the rule's help).
fn message(f: &LocatedFinding) -> String {
    let mut text = format!("{}: {}: {}", f.reference, f.finding.subject, f.finding.message);
    for e in &f.finding.evidence {
        text.push_str(&format!("\n- {e}"));
    }
    text
}

/// The same finding on the same reference and subject keeps its fingerprint when lines move.
fn fingerprint(f: &LocatedFinding) -> String {
    let text = format!("{}\n{}\n{}\n{}", f.finding.id, f.reference, f.at.file, f.finding.subject);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// GitLab Code Quality report (`artifacts:reports:codequality`).
pub fn codequality(review: &GitopsReview) -> serde_json::Value {
    let items: Vec<serde_json::Value> = review
        .findings()
        .map(|f| {
            let severity = match f.finding.severity {
                Severity::Error => "critical",
                Severity::Warning => "major",
                Severity::Info => "info",
            };
            json!({
                "description": format!("{} {}", f.finding.id, message(f)),
                "check_name": f.finding.id,
                "fingerprint": fingerprint(f),
                "severity": severity,
                "location": {"path": f.at.file, "lines": {"begin": f.at.line}},
            })
        })
        .collect();
    json!(items)
}
