//! A citation's quotes and claims of absence: each key names text of the cited source (a rule's
//! `source:` or a compatibility row's); each quote is text the cited lines hold that supports
//! the claim, each `absent` entry text the cited file (or directory) does not hold; `cargo
//! xtask citations` checks both against the source at its tag. A quote that is only a name (an
//! object's `name:` line, a bare identifier or flag, a function's signature) shows that a file
//! mentions something, not what the claim says of it: [`only_a_name`] flags those.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a cited file or directory does not contain: one text, or several (`[ca.crt, tls.crt]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Texts {
    One(String),
    Many(Vec<String>),
}

impl Texts {
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let all: Vec<&str> = match self {
            Texts::One(t) => vec![t.as_str()],
            Texts::Many(ts) => ts.iter().map(String::as_str).collect(),
        };
        all.into_iter()
    }
}

/// Claims of absence keyed like `quotes`.
pub type Absent = BTreeMap<String, Texts>;

/// A `quotes` key that does not appear in its source, or a quote that is empty.
pub fn unquoted_key<'a>(source: &str, quotes: &'a BTreeMap<String, String>) -> Option<&'a str> {
    quotes.iter().find(|(k, v)| k.trim().is_empty() || v.trim().is_empty() || !source.contains(k.as_str())).map(|(k, _)| k.as_str())
}

/// An `absent` key that does not appear in its source, or one with no text or an empty one.
pub fn unabsent_key<'a>(source: &str, absent: &'a Absent) -> Option<&'a str> {
    absent
        .iter()
        .find(|(k, v)| {
            k.trim().is_empty() || v.iter().next().is_none() || v.iter().any(|t| t.trim().is_empty()) || !source.contains(k.as_str())
        })
        .map(|(k, _)| k.as_str())
}

/// Whether a citation key names a directory (`…/tree/v2.3.0/charts/x/crds`, `templates/crd`): its
/// last path segment has no file extension. A directory's quote is the name of an entry in it.
pub fn names_directory(key: &str) -> bool {
    let path = key.split('#').next().unwrap_or(key).trim_end_matches('/');
    let last = path.rsplit('/').next().unwrap_or(path);
    !last.contains('.')
}

/// Why a quote of a file citation is only a name, or None when it says more: an object's
/// `name:` line (it shows the file is that object, not what the object sets), a bare identifier
/// or flag (a field or option is mentioned, not declared or used as the claim says), or a
/// function's signature with nothing of its body.
pub fn only_a_name(quote: &str) -> Option<&'static str> {
    let q = quote.trim();
    let line = q.trim_start_matches("- ");
    if line.strip_prefix("name: ").is_some_and(|value| !value.contains(": ") && !value.contains('\n')) {
        return Some("an object's name: line");
    }
    let bare = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '=');
    if !q.is_empty() && q.chars().all(bare) {
        return Some("a bare identifier or flag");
    }
    // A Go function's signature and nothing of its body: `func (x Status) IsPending() bool`,
    // `func newEffectiveVersion(v *version.Version) T {`, or one cut at its parameters.
    if q.starts_with("func ") && !q.contains('\n') {
        let body = q.split_once('{').map(|(_, b)| b.trim()).unwrap_or("");
        if body.is_empty() {
            return Some("a function's signature");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_told_from_quotes_that_say_something() {
        for name in [
            "name: trainjobs.trainer.kubeflow.org",
            "- name: kubeflow-trainer-controller-manager",
            "name: '{{ include \"jobset.fullname\" . }}-webhook-server-cert'",
            "SkipHooks",
            "--include-crds",
            "take-ownership",
            "format=k8s-label-key",
            "func MustBaseEnvSet(",
            "func (r *Rollback) Run(",
            "func (x Status) IsPending() bool",
            "func (cr *CertRotator) writeSecret(cert, key []byte, caArtifacts *KeyPairArtifacts,",
            "func newEffectiveVersion(binaryVersion *version.Version) MutableEffectiveVersion {",
        ] {
            assert!(only_a_name(name).is_some(), "{name}");
        }
        for says in [
            "volumeClaimPolicies:",
            "name: kubeflow-trainer-controller-manager labels: app.kubernetes.io/name: trainer",
            "- RestartJobAndIgnoreMaxRestarts",
            "SkipHooks bool `json:\"skipHooks,omitempty\" yaml:\"skipHooks,omitempty\"`",
            "if lastRelease.Info.Status.IsPending() {",
            "{{- if .Values.crds.enabled }}",
            "func (x Status) IsPending() bool { return x == StatusPendingInstall",
            "rule: self.templates.all(t, !has(t.metadata.namespace)",
            "*obj.TimeoutSeconds = 10",
        ] {
            assert!(only_a_name(says).is_none(), "{says}");
        }
        assert!(names_directory("https://github.com/kubeflow/trainer/tree/v2.2.1/charts/kubeflow-trainer/crds"));
        assert!(names_directory("charts/kubeflow-trainer/templates/crd"));
        assert!(!names_directory("charts/kubeflow-trainer/Chart.yaml"));
        assert!(!names_directory("pkg/action/upgrade.go#L304"));
    }
}
