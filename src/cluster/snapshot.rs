//! Snapshot files: Kubernetes `List`s as `kubectl get … -o yaml|json` writes them (several Lists
//! or plain objects in one multi-document file are fine), with an optional `ClusterInfo` item
//! (`trainer-audit.dev/v1alpha1`) carrying the server version and capture time. Writing goes
//! through a temporary file and a rename, so a failed write leaves nothing behind.

use std::path::Path;

use serde_json::Value as Json;

use super::{ClusterError, ClusterInfo, ClusterState, CLUSTER_INFO_API_VERSION};
use crate::objects::str_at;
use kube_version::KubeVersion;

mod fast;
mod lines;
mod shares;

/// Bigger files are refused before reading (50,000 TrainJobs are about 60 MB of YAML).
pub const MAX_SNAPSHOT_BYTES: u64 = 512 * 1024 * 1024;
/// More items than this are refused.
pub const MAX_SNAPSHOT_ITEMS: usize = 250_000;

/// Why snapshot text is not a cluster state; the caller adds the file's name.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("more than {max} items: refused (capture fewer resources)", max = MAX_SNAPSHOT_ITEMS)]
    TooManyItems,
    /// Counted before parsing, from the top-level `- ` entries of a YAML List.
    #[error("about {entries} items, more than {max}: refused (capture fewer resources)", max = MAX_SNAPSHOT_ITEMS)]
    AboutTooManyItems { entries: usize },
    /// A List item without `kind` or `apiVersion` (shown shortened).
    #[error("an item has no kind or apiVersion (write snapshots with kubectl get -o yaml): {}", short(.item))]
    ItemWithoutKind { item: Json },
    /// A document with no `kind`: neither an object nor a List (shown shortened).
    #[error("a document is neither a Kubernetes object nor a List: {}", short(.document))]
    NotAnObject { document: Json },
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// `serverVersion` of the ClusterInfo item is not a Kubernetes version.
    #[error("ClusterInfo serverVersion: {0} (write snapshots with trainer-audit snapshot)")]
    ServerVersion(#[source] kube_version::BadKubeVersion),
    /// serde-saphyr's error, of which only the first line is shown.
    #[error("invalid YAML: {}", first_line(&.0.to_string()))]
    Yaml(#[source] serde_saphyr::Error),
}

pub fn read_file(path: &Path) -> Result<ClusterState, ClusterError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| ClusterError::Snapshot(format!("cannot read snapshot {shown}: {e}")))?;
    if meta.len() > MAX_SNAPSHOT_BYTES {
        return Err(ClusterError::Snapshot(format!(
            "snapshot {shown} is {} MiB, over the {} MiB limit: capture fewer namespaces or resources",
            meta.len() / (1024 * 1024),
            MAX_SNAPSHOT_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| ClusterError::Snapshot(format!("cannot read snapshot {shown}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| ClusterError::Snapshot(format!("snapshot {shown} is not UTF-8 text")))?;
    let state = parse(&text).map_err(|e| ClusterError::Snapshot(format!("snapshot {shown}: {e}")))?;
    // A cluster always has objects the audit reads (namespaces, CRDs): none means the file is
    // not a capture of one, and every verdict on it would rest on nothing.
    if state.objects.is_empty() {
        return Err(ClusterError::Snapshot(format!(
            "snapshot {shown} holds 0 objects: it is not a capture of a cluster (write one with `trainer-audit snapshot -o FILE`)"
        )));
    }
    Ok(state)
}

/// One document of a snapshot: a List (its items normalised as they are read, so a large file
/// never sits in memory whole), a `ClusterInfo`, or a single object.
#[cfg_attr(test, derive(Debug, PartialEq))]
struct Doc {
    kind: String,
    items: Vec<Json>,
    info: Option<ClusterInfo>,
    /// Items read (before normalisation drops what the audit does not need).
    seen: usize,
    /// The document itself when it is not a List.
    object: Option<Json>,
}

struct Items<'a> {
    kept: &'a mut Vec<Json>,
    info: &'a mut Option<ClusterInfo>,
    seen: &'a mut usize,
}

fn cluster_info(item: &Json) -> Result<Option<ClusterInfo>, SnapshotError> {
    if str_at(item, &["kind"]) != "ClusterInfo" || str_at(item, &["apiVersion"]) != CLUSTER_INFO_API_VERSION {
        return Ok(None);
    }
    let text = |k: &str| Some(str_at(item, &[k]).to_string()).filter(|s| !s.is_empty());
    let read_warnings = item
        .get("readWarnings")
        .and_then(Json::as_array)
        .map(|ws| ws.iter().filter_map(Json::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let server_version = text("serverVersion").map(|v| KubeVersion::parse(&v)).transpose().map_err(SnapshotError::ServerVersion)?;
    Ok(Some(ClusterInfo { server_version, captured_at: text("capturedAt"), read_warnings, ..ClusterInfo::default() }))
}

impl<'a> Items<'a> {
    fn take(&mut self, item: Json) -> Result<(), SnapshotError> {
        *self.seen += 1;
        if *self.seen > MAX_SNAPSHOT_ITEMS {
            return Err(SnapshotError::TooManyItems);
        }
        if str_at(&item, &["kind"]).is_empty() || str_at(&item, &["apiVersion"]).is_empty() {
            return Err(SnapshotError::ItemWithoutKind { item });
        }
        if let Some(info) = cluster_info(&item)? {
            *self.info = Some(info);
        } else if let Some(kept) = super::normalise(item) {
            self.kept.push(kept);
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Items<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(mut self, d: D) -> Result<(), D::Error> {
        struct Seq<'b, 'c>(&'b mut Items<'c>);
        impl<'de> serde::de::Visitor<'de> for Seq<'_, '_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of Kubernetes objects")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(item) = seq.next_element::<Json>()? {
                    self.0.take(item).map_err(serde::de::Error::custom)?;
                }
                Ok(())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
                Ok(())
            }
        }
        d.deserialize_any(Seq(&mut self))
    }
}

impl<'de> serde::Deserialize<'de> for Doc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Doc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Kubernetes object or List")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Doc, E> {
                Ok(Doc { kind: String::new(), items: Vec::new(), info: None, seen: 0, object: None })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let (mut items, mut info, mut seen) = (Vec::new(), None, 0);
                let mut has_items = false;
                let mut rest = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "items" {
                        has_items = true;
                        map.next_value_seed(Items { kept: &mut items, info: &mut info, seen: &mut seen })?;
                    } else {
                        rest.insert(key, map.next_value::<Json>()?);
                    }
                }
                let kind = rest.get("kind").and_then(Json::as_str).unwrap_or("").to_string();
                let object = (!has_items || !kind.ends_with("List")).then_some(Json::Object(rest));
                Ok(Doc { kind, items, info, seen, object })
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads snapshot text (JSON or YAML, one or more documents).
pub fn parse(text: &str) -> Result<ClusterState, SnapshotError> {
    let docs: Vec<Doc> = if text.trim_start().starts_with('{') {
        serde_json::Deserializer::from_str(text).into_iter::<Doc>().collect::<Result<_, _>>().map_err(SnapshotError::Json)?
    } else {
        // Top-level sequence entries start at column 0 in `kubectl -o yaml` Lists: count them
        // first, so a file with a million items is refused in milliseconds, not after parsing.
        let entries = memchr::memmem::find_iter(text.as_bytes(), b"\n- ").count();
        if entries > MAX_SNAPSHOT_ITEMS {
            return Err(SnapshotError::AboutTooManyItems { entries });
        }
        let budget = yaml_budget();
        match shares::read(text, &budget).or_else(|| fast::read(text, &budget)) {
            Some(docs) => docs,
            None => read_yaml(text, budget)?,
        }
    };
    let mut info: Option<ClusterInfo> = None;
    let mut objects = Vec::new();
    let mut seen = 0;
    for doc in docs {
        seen += doc.seen;
        if doc.info.is_some() {
            info = doc.info;
        }
        objects.extend(doc.items);
        match doc.object {
            Some(Json::Object(m)) if m.is_empty() => {}
            Some(object) => {
                if doc.kind.is_empty() {
                    return Err(SnapshotError::NotAnObject { document: object });
                }
                let mut single = Items { kept: &mut objects, info: &mut info, seen: &mut seen };
                single.take(object)?;
            }
            None => {}
        }
    }
    let mut info = info.unwrap_or_default();
    let warnings = std::mem::take(&mut info.read_warnings);
    Ok(ClusterState::from_normalised(info, objects, warnings))
}

/// serde-saphyr's default budget suits configuration files; a snapshot is data. The file size
/// is already bounded, so only nesting and aliases stay limited.
fn yaml_budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = usize::MAX;
    budget.max_events = usize::MAX;
    budget.max_total_scalar_bytes = MAX_SNAPSHOT_BYTES as usize;
    budget.max_reader_input_bytes = Some(MAX_SNAPSHOT_BYTES as usize);
    budget.max_depth = 200;
    budget
}

/// YAML documents through serde-saphyr: the reference reading, and the one whose errors users
/// see (the fast path leaves every error to it).
fn read_yaml(text: &str, budget: serde_saphyr::Budget) -> Result<Vec<Doc>, SnapshotError> {
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_multiple_with_options::<Doc>(text, options).map_err(SnapshotError::Yaml)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

fn short(v: &Json) -> String {
    let text = v.to_string();
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// The state as one `List` (ClusterInfo first); JSON when the path ends in `.json`, else YAML.
pub fn render(state: &ClusterState, json: bool) -> Result<String, ClusterError> {
    let mut info = serde_json::json!({"apiVersion": CLUSTER_INFO_API_VERSION, "kind": "ClusterInfo"});
    if let Some(v) = &state.info.server_version {
        info["serverVersion"] = Json::String(v.to_string());
    }
    if let Some(t) = &state.info.captured_at {
        info["capturedAt"] = Json::String(t.clone());
    }
    if !state.warnings.is_empty() {
        info["readWarnings"] = Json::from(state.warnings.clone());
    }
    let items: Vec<Json> = std::iter::once(info).chain(state.objects.iter().cloned()).collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    if json {
        let text = serde_json::to_string_pretty(&list).map_err(|e| ClusterError::Snapshot(e.to_string()))?;
        return Ok(format!("{text}\n"));
    }
    crate::objects::yaml_of(&list).map_err(|e| ClusterError::Snapshot(e.to_string()))
}
