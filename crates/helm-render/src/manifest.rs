//! From rendered template text to release content, as Helm v4.2.3 does it: documents split on
//! `---` (left-trimmed only, so trailing newlines survive), hooks recognised by annotation
//! (unknown events drop the document), both lists stably sorted by kind in install order, and
//! the `---\n# Source: …` blocks `helm template` prints.

use std::collections::BTreeMap;

use crate::yaml::read_first_head;
use gotmpl::Value;

/// A rendered object that is part of the release.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Template path, e.g. `kubeflow-trainer/templates/manager/deployment.yaml`.
    pub path: String,
    pub content: String,
    pub kind: String,
    pub name: String,
}

/// A rendered hook.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub path: String,
    pub content: String,
    pub kind: String,
    pub name: String,
    pub events: Vec<String>,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub output_log_policies: Vec<String>,
}

/// Helm v4's install order (known kinds first, in this order).
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

const HOOK_EVENTS: &[&str] =
    &["pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback", "post-rollback", "test"];

/// v4.2.3's `SplitManifests`: separator `(?:^|\s*\n)---\s*`, input and documents left-trimmed,
/// whitespace-only documents dropped.
pub fn split_manifests(text: &str) -> Vec<String> {
    split_manifest_slices(text).into_iter().map(str::to_string).collect()
}

/// [`split_manifests`] without copying: the documents as slices of `text`.
pub fn split_manifest_slices(text: &str) -> Vec<&str> {
    let is_ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C');
    let input = text.trim_start();
    let b = input.as_bytes();
    let mut docs = Vec::new();
    let mut start = 0;
    if input.starts_with("---") {
        start = skip_ws(b, 3);
    }
    // Every separator other than the leading one contains "\n---"; its match begins where the
    // run of whitespace before that newline begins (the regex is leftmost-first).
    let finder = memchr::memmem::Finder::new(b"\n---");
    let mut from = start;
    while let Some(found) = finder.find(&b[from..]) {
        let nl = from + found;
        let mut sep_start = nl;
        while sep_start > start && is_ws(b[sep_start - 1]) {
            sep_start -= 1;
        }
        docs.push(&input[start..sep_start]);
        start = skip_ws(b, nl + 4);
        from = start;
    }
    docs.push(&input[start..]);
    docs.into_iter().filter(|d| !d.trim().is_empty()).map(|d| d.trim_start()).collect()
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | b'\x0C') {
        i += 1;
    }
    i
}

fn kind_rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|k| *k == kind)
}

fn kind_less(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (kind_rank(a), kind_rank(b)) {
        (None, None) => a.cmp(b),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

/// The head fields Helm reads from each document.
#[derive(Debug)]
struct Head {
    kind: String,
    name: String,
    annotations: BTreeMap<String, String>,
}

fn scalar_string(v: &Value) -> String {
    match v {
        Value::Nil | Value::Invalid => String::new(),
        other => crate::funcs::strval(other),
    }
}

/// Why the head (kind, name, annotations) of a rendered document could not be read (Helm's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// Not YAML go-yaml v2 reads.
    #[error("error converting YAML to JSON: {0}")]
    Yaml(#[source] crate::yaml::YamlError),
    /// A document that is a list, string or other non-map (`found`: its JSON kind).
    #[error("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {found} into Go value of type util.SimpleHead")]
    NotAMap { found: &'static str },
    /// The second head-parsing thread died (it panicked): the document's head is unknown.
    #[error("YAML head parser thread failed")]
    WorkerFailed,
}

/// A rendered document `SortManifests` refuses, with the template it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("YAML parse error on {path}: {head}")]
pub struct SortError {
    pub path: String,
    #[source]
    pub head: HeadError,
}

fn parse_head(doc: &str) -> Result<Head, HeadError> {
    let v = read_first_head(doc).map_err(HeadError::Yaml)?;
    let m = match &v {
        Value::Map(m) => m.entries.borrow().clone(),
        Value::Nil | Value::Invalid => Default::default(),
        other => return Err(HeadError::NotAMap { found: crate::chart::json_kind(other) }),
    };
    let kind = m.get("kind").map(scalar_string).unwrap_or_default();
    let (mut name, mut annotations) = (String::new(), BTreeMap::new());
    if let Some(Value::Map(meta)) = m.get("metadata") {
        let meta = meta.entries.borrow();
        name = meta.get("name").map(scalar_string).unwrap_or_default();
        if let Some(Value::Map(a)) = meta.get("annotations") {
            annotations = a.entries.borrow().iter().map(|(k, v)| (k.clone(), scalar_string(v))).collect();
        }
    }
    Ok(Head { kind, name, annotations })
}

fn split_list(value: &str) -> Vec<String> {
    value.split(',').map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()).collect()
}

/// `SortManifests`: files in path order, documents in file order, hooks split off, both sorted
/// stably by kind.
pub fn sort_manifests<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<(Vec<Manifest>, Vec<Hook>), SortError> {
    let mut docs: Vec<(&str, &str)> = Vec::new();
    for (path, content) in files {
        let base = path.rsplit('/').next().unwrap_or(path);
        if base.starts_with('_') || content.trim().is_empty() {
            continue;
        }
        docs.extend(split_manifest_slices(content).into_iter().map(|d| (path, d)));
    }
    // Heads are independent: parse them on two threads (the YAML of large CRDs dominates).
    let heads = parse_heads_parallel(&docs);
    let mut manifests = Vec::new();
    let mut hooks = Vec::new();
    for ((path, doc), head) in docs.into_iter().zip(heads) {
        let path = path.to_string();
        let doc = doc.to_string();
        {
            let head = head.map_err(|head| SortError { path: path.clone(), head })?;
            let Some(hook_types) = head.annotations.get("helm.sh/hook") else {
                manifests.push(Manifest { path: path.clone(), content: doc, kind: head.kind, name: head.name });
                continue;
            };
            let mut events = Vec::new();
            let mut unknown = false;
            for t in hook_types.split(',') {
                let t = t.trim().to_lowercase();
                let t = if t == "test-success" { "test".to_string() } else { t };
                if HOOK_EVENTS.contains(&t.as_str()) {
                    events.push(t);
                } else {
                    unknown = true;
                    break;
                }
            }
            if unknown {
                continue;
            }
            let weight = head.annotations.get("helm.sh/hook-weight").and_then(|w| w.trim().parse::<i64>().ok()).unwrap_or(0);
            hooks.push(Hook {
                path: path.clone(),
                kind: head.kind,
                name: head.name,
                events,
                weight,
                delete_policies: head.annotations.get("helm.sh/hook-delete-policy").map(|v| split_list(v)).unwrap_or_default(),
                output_log_policies: head.annotations.get("helm.sh/hook-output-log-policy").map(|v| split_list(v)).unwrap_or_default(),
                content: doc,
            });
        }
    }
    manifests.sort_by(|a, b| kind_less(&a.kind, &b.kind));
    hooks.sort_by(|a, b| kind_less(&a.kind, &b.kind));
    Ok((manifests, hooks))
}

fn parse_heads_parallel(docs: &[(&str, &str)]) -> Vec<Result<Head, HeadError>> {
    let total: usize = docs.iter().map(|(_, d)| d.len()).sum();
    if docs.len() < 2 || total < 256 * 1024 {
        return docs.iter().map(|(_, d)| parse_head(d)).collect();
    }
    // Largest documents first, handed out one at a time, so two workers finish together.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(docs[i].1.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(k) else { break };
            done.push((i, parse_head(docs[i].1)));
        }
        done
    };
    let mut results: Vec<Option<Result<Head, HeadError>>> = (0..docs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let other = scope.spawn(work);
        for (i, head) in work() {
            results[i] = Some(head);
        }
        if let Ok(done) = other.join() {
            for (i, head) in done {
                results[i] = Some(head);
            }
        }
    });
    results.into_iter().map(|r| r.unwrap_or(Err(HeadError::WorkerFailed))).collect()
}

/// One `---\n# Source: …\n…\n` block.
pub fn source_block(path: &str, content: &str) -> String {
    format!("---\n# Source: {path}\n{content}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_helm_4_2() {
        assert_eq!(split_manifests("a: 1\n---b: 2\n"), ["a: 1", "b: 2\n"]);
        assert_eq!(split_manifests("---\nkind: A\n---\n---   \n"), ["kind: A", "---   \n"]);
        assert_eq!(split_manifests("kind: A\r\n---\r\nkind: B\r\n"), ["kind: A", "kind: B\r\n"]);
        assert_eq!(split_manifests("x: 1\n\n\n"), ["x: 1\n\n\n"]);
    }

    /// The hand-written splitter against Helm's regex itself (Rust's engine is leftmost-first,
    /// like Go's), over every string of a small alphabet that stresses separators.
    #[test]
    fn splitter_agrees_with_helms_regex() {
        let sep = regex::Regex::new(r"(?:^|\s*\n)---\s*").unwrap();
        let reference = |text: &str| -> Vec<String> {
            let input = text.trim_start();
            sep.split(input).filter(|d| !d.trim().is_empty()).map(|d| d.trim_start().to_string()).collect()
        };
        let alphabet = ['a', ' ', '\n', '-', '\t'];
        for len in 0..=8u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut k = n;
                let text: String = (0..len)
                    .map(|_| {
                        let c = alphabet[k % alphabet.len()];
                        k /= alphabet.len();
                        c
                    })
                    .collect();
                assert_eq!(split_manifests(&text), reference(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn sorts_by_install_order_and_extracts_hooks() {
        let mut files = BTreeMap::new();
        files.insert("p/templates/a.yaml".to_string(), "kind: Deployment\nmetadata:\n  name: d\n---\nkind: Zebra\n".to_string());
        files.insert("p/templates/b.yaml".to_string(), "kind: Namespace\n---\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: post-install, Post-Upgrade\n    helm.sh/hook-weight: \"5\"\n".to_string());
        files.insert("p/templates/c.yaml".to_string(), "kind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-foo\n".to_string());
        let (m, h) = sort_manifests(files.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap();
        let kinds: Vec<&str> = m.iter().map(|m| m.kind.as_str()).collect();
        assert_eq!(kinds, ["Namespace", "Deployment", "Zebra"]);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].events, ["post-install", "post-upgrade"]);
        assert_eq!(h[0].weight, 5);
    }
}
