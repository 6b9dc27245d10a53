//! Containers and images inside any object: pod templates of workloads, Jobs, JobSets and
//! Trainer runtimes, found by walking the object for `containers` / `initContainers` lists, and
//! image references classified by how firmly they are pinned.

use serde::Serialize;
use serde_json::Value as Json;

use super::str_at;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Container {
    pub name: String,
    pub image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security_context: Option<Json>,
}

/// Every container (init containers included) anywhere in the object, in document order.
pub fn containers(object: &Json) -> Vec<Container> {
    let mut out = Vec::new();
    walk(object, &mut out, 0);
    out
}

fn walk(v: &Json, out: &mut Vec<Container>, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Json::Object(map) => {
            for (key, child) in map {
                if matches!(key.as_str(), "containers" | "initContainers" | "ephemeralContainers") {
                    if let Some(items) = child.as_array() {
                        out.extend(items.iter().filter(|c| c.get("image").is_some() || c.get("name").is_some()).map(container));
                        continue;
                    }
                }
                walk(child, out, depth + 1);
            }
        }
        Json::Array(items) => items.iter().for_each(|i| walk(i, out, depth + 1)),
        _ => {}
    }
}

fn strings(v: Option<&Json>) -> Vec<String> {
    v.and_then(Json::as_array)
        .map(|a| a.iter().map(|s| s.as_str().map(str::to_string).unwrap_or_else(|| s.to_string())).collect())
        .unwrap_or_default()
}

fn container(c: &Json) -> Container {
    Container {
        name: str_at(c, &["name"]).to_string(),
        image: str_at(c, &["image"]).to_string(),
        command: strings(c.get("command")),
        args: strings(c.get("args")),
        security_context: c.get("securityContext").filter(|s| !s.is_null()).cloned(),
    }
}

/// The pod spec of a Pod, a workload, a Job or a CronJob (None for other kinds).
pub fn pod_spec<'a>(kind: &str, object: &'a Json) -> Option<&'a Json> {
    match kind {
        "Pod" => object.get("spec"),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" | "ReplicationController" => {
            object.pointer("/spec/template/spec")
        }
        "CronJob" => object.pointer("/spec/jobTemplate/spec/template/spec"),
        _ => None,
    }
}

/// How firmly an image reference is pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pin {
    /// `@sha256:…`: immutable.
    Digest,
    /// A tag other than `latest`: mutable, but conventionally stable.
    Tag,
    /// `:latest`.
    Latest,
    /// No tag: the runtime pulls `latest`.
    Untagged,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ImageRef {
    pub reference: String,
    /// Registry and path, without tag or digest.
    pub repository: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tag: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub digest: String,
    pub pin: Pin,
}

impl ImageRef {
    pub fn parse(reference: &str) -> ImageRef {
        let (name, digest) = match reference.split_once('@') {
            Some((n, d)) => (n, d.to_string()),
            None => (reference, String::new()),
        };
        // A ':' after the last '/' is a tag; before it, a registry port.
        let last_slash = name.rfind('/').map(|i| i + 1).unwrap_or(0);
        let (repository, tag) = match name[last_slash..].rfind(':') {
            Some(i) => (name[..last_slash + i].to_string(), name[last_slash + i + 1..].to_string()),
            None => (name.to_string(), String::new()),
        };
        let pin = if !digest.is_empty() {
            Pin::Digest
        } else if tag.is_empty() {
            Pin::Untagged
        } else if tag == "latest" {
            Pin::Latest
        } else {
            Pin::Tag
        };
        ImageRef { reference: reference.to_string(), repository, tag, digest, pin }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_are_classified() {
        let r = ImageRef::parse("docker.io/alpine:3.21");
        assert_eq!((r.repository.as_str(), r.tag.as_str(), r.pin), ("docker.io/alpine", "3.21", Pin::Tag));
        assert_eq!(ImageRef::parse("localhost:5000/x/y").pin, Pin::Untagged);
        assert_eq!(ImageRef::parse("localhost:5000/x/y").repository, "localhost:5000/x/y");
        assert_eq!(ImageRef::parse("ghcr.io/a/b:latest").pin, Pin::Latest);
        let d = ImageRef::parse("ghcr.io/a/b:v1@sha256:abc");
        assert_eq!((d.tag.as_str(), d.digest.as_str(), d.pin), ("v1", "sha256:abc", Pin::Digest));
    }

    #[test]
    fn containers_are_found_at_any_depth() {
        let jobset = serde_json::json!({"spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": {
            "initContainers": [{"name": "init", "image": "i:1"}],
            "containers": [{"name": "node", "image": "n:2", "command": ["torchrun"], "args": ["a", 1]}]
        }}}}}]}});
        let found = containers(&jobset);
        assert_eq!(found.len(), 2);
        let node = found.iter().find(|c| c.name == "node").unwrap();
        assert_eq!(node.args, ["a", "1"]);
        assert!(found.iter().any(|c| c.name == "init" && c.image == "i:1"));
    }
}
