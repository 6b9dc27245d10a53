//! A small read-only Kubernetes API server over a set of objects, for benchmarks and for tests
//! the real one ([`crate::controlplane`]) cannot serve here: 50,000–100,000 objects (loading
//! them into kube-apiserver and etcd takes minutes on these 2 cores, and its own serving would
//! be part of every figure), fifty clusters at once, and a continue token expired or a resource
//! forbidden on demand. It speaks enough of the real protocol for `kube` and `kubectl`:
//! `/version`, `/api`, `/apis` and per-group resource discovery, list and get for every resource
//! present (cluster-wide and per namespace), `limit`/`continue` with 410 Gone for an expired
//! token, `labelSelector` (equality and set-based), `fieldSelector` on
//! `metadata.name`/`metadata.namespace`, 403 for resources configured as forbidden, and 404
//! otherwise. HTTP/1.1 with keep-alive, one thread per connection.
//!
//! It costs next to nothing per request, so a client's time can be measured against it: each
//! object is serialised once when the server starts (the objects never change), the objects a
//! list query selects are remembered per query, and a page is those objects' bytes joined.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use trainer_audit::objects::{is_namespaced, str_at};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ApiResource {
    group: String,
    version: String,
    plural: String,
    kind: String,
    namespaced: bool,
}

/// Plural resource name of a kind, as the API server derives it.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with("ch") || lower.ends_with("sh") || lower.ends_with('x') {
        format!("{lower}es")
    } else if lower.ends_with('y') && !lower.ends_with("ay") && !lower.ends_with("ey") {
        format!("{}ies", &lower[..lower.len() - 1])
    } else {
        format!("{lower}s")
    }
}

/// Built-in resources served even when no object of them exists.
const BUILTIN: &[(&str, &str, &str)] = &[
    ("", "v1", "Namespace"),
    ("", "v1", "Secret"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Pod"),
    ("apps", "v1", "Deployment"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"),
];

/// One served object and its JSON, serialised once.
struct Stored {
    json: Json,
    bytes: Box<[u8]>,
}

/// What a list query selects: (group, version, plural, namespace, labelSelector, fieldSelector).
type Selection = (String, String, String, Option<String>, String, String);

struct Store {
    resources: Vec<ApiResource>,
    /// (group, version, plural) → objects, sorted by namespace and name.
    objects: BTreeMap<(String, String, String), Vec<Stored>>,
    /// Indices into `objects` each list query selected, so paging through a list reads only its page.
    selections: Mutex<HashMap<Selection, Arc<Vec<usize>>>>,
    forbidden: BTreeSet<String>,
    server_version: String,
}

/// A running fake API server; stops accepting when dropped (threads end with their sockets).
pub struct FakeApiServer {
    pub port: u16,
    /// Bumping it expires every continue token handed out before (the next page gets 410).
    pub resource_version: Arc<AtomicU64>,
    /// When set, the next request with a continue token gets 410 Gone (and the flag clears).
    pub expire_next_continue: Arc<std::sync::atomic::AtomicBool>,
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl FakeApiServer {
    /// Serves `objects` (each with apiVersion and kind). `forbidden` lists plurals
    /// (`secrets`) answered with 403 everywhere. `server_version` is `v1.33.2`-style.
    pub fn start(objects: Vec<Json>, forbidden: &[&str], server_version: &str) -> std::io::Result<FakeApiServer> {
        let store = Arc::new(build_store(objects, forbidden, server_version));
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let resource_version = Arc::new(AtomicU64::new(1));
        let expire_next_continue = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (rv, expire, log) = (resource_version.clone(), expire_next_continue.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (store, rv, expire, log) = (store.clone(), rv.clone(), expire.clone(), log.clone());
                std::thread::spawn(move || serve_connection(stream, &store, &rv, &expire, &log));
            }
        });
        Ok(FakeApiServer { port, resource_version, expire_next_continue, requests })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A kubeconfig whose current context `fake` points at this server.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: fake-token\n",
            self.url()
        )
    }
}

fn build_store(objects: Vec<Json>, forbidden: &[&str], server_version: &str) -> Store {
    let mut resources: BTreeSet<ApiResource> = BUILTIN
        .iter()
        .map(|(g, v, k)| ApiResource {
            group: g.to_string(),
            version: v.to_string(),
            plural: plural(k),
            kind: k.to_string(),
            namespaced: is_namespaced(k),
        })
        .collect();
    for crd in objects.iter().filter(|o| str_at(o, &["kind"]) == "CustomResourceDefinition") {
        let spec = &crd["spec"];
        for v in spec.get("versions").and_then(Json::as_array).into_iter().flatten() {
            if v.get("served").and_then(Json::as_bool) == Some(false) {
                continue;
            }
            resources.insert(ApiResource {
                group: str_at(spec, &["group"]).to_string(),
                version: str_at(v, &["name"]).to_string(),
                plural: str_at(spec, &["names", "plural"]).to_string(),
                kind: str_at(spec, &["names", "kind"]).to_string(),
                namespaced: str_at(spec, &["scope"]) == "Namespaced",
            });
        }
    }
    let mut by_resource: BTreeMap<(String, String, String), Vec<Json>> = BTreeMap::new();
    for o in objects {
        let api_version = str_at(&o, &["apiVersion"]).to_string();
        let (group, version) =
            api_version.rsplit_once('/').map(|(g, v)| (g.to_string(), v.to_string())).unwrap_or((String::new(), api_version.clone()));
        let kind = str_at(&o, &["kind"]).to_string();
        let known = resources.iter().find(|r| r.group == group && r.version == version && r.kind == kind).cloned();
        let r = known.unwrap_or_else(|| {
            let r = ApiResource {
                group: group.clone(),
                version: version.clone(),
                plural: plural(&kind),
                kind: kind.clone(),
                namespaced: is_namespaced(&kind),
            };
            resources.insert(r.clone());
            r
        });
        by_resource.entry((r.group, r.version, r.plural)).or_default().push(o);
    }
    for items in by_resource.values_mut() {
        items.sort_by(|a, b| {
            (str_at(a, &["metadata", "namespace"]), str_at(a, &["metadata", "name"]))
                .cmp(&(str_at(b, &["metadata", "namespace"]), str_at(b, &["metadata", "name"])))
        });
    }
    let objects = by_resource
        .into_iter()
        .map(|(k, items)| {
            let stored = items
                .into_iter()
                .map(|json| {
                    let bytes = serde_json::to_vec(&json).unwrap_or_default().into_boxed_slice();
                    Stored { json, bytes }
                })
                .collect();
            (k, stored)
        })
        .collect();
    Store {
        resources: resources.into_iter().collect(),
        objects,
        selections: Mutex::new(HashMap::new()),
        forbidden: forbidden.iter().map(|s| s.to_string()).collect(),
        server_version: server_version.to_string(),
    }
}

fn status(code: u16, reason: &str, message: &str) -> (u16, Vec<u8>) {
    reply(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}),
    )
}

fn reply(code: u16, body: Json) -> (u16, Vec<u8>) {
    (code, serde_json::to_vec(&body).unwrap_or_default())
}

fn serve_connection(stream: TcpStream, store: &Store, rv: &AtomicU64, expire: &std::sync::atomic::AtomicBool, log: &Mutex<Vec<String>>) {
    let Ok(read_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    // As Go's net/http does: a response goes out whole, not held back waiting for an ACK.
    let _ = stream.set_nodelay(true);
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let mut length = 0usize;
        let mut close = false;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" || h == "\n" {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap_or(0),
                    "connection" => close = v.trim().eq_ignore_ascii_case("close"),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length.min(1 << 20)];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if let Ok(mut l) = log.lock() {
            l.push(format!("{method} {target}"));
        }
        if target.contains("continue=") && expire.swap(false, Ordering::SeqCst) {
            rv.fetch_add(1, Ordering::SeqCst);
        }
        let (code, body) =
            if method == "GET" { handle(store, rv, &target) } else { status(405, "MethodNotAllowed", "this API server is read-only") };
        let head = format!("HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        let mut response = Vec::with_capacity(head.len() + body.len());
        response.extend_from_slice(head.as_bytes());
        response.extend_from_slice(&body);
        if out.write_all(&response).and_then(|_| out.flush()).is_err() || close {
            return;
        }
    }
}

fn decode_query(q: &str) -> BTreeMap<String, String> {
    q.split('&').filter_map(|kv| kv.split_once('=').or(Some((kv, "")))).map(|(k, v)| (unescape(k), unescape(v))).collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn handle(store: &Store, rv: &AtomicU64, target: &str) -> (u16, Vec<u8>) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = decode_query(query);
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => {
            let v = store.server_version.trim_start_matches('v');
            let mut parts = v.split('.');
            reply(
                200,
                json!({"major": parts.next().unwrap_or("1"), "minor": parts.next().unwrap_or("0"), "gitVersion": store.server_version, "platform": "linux/amd64"}),
            )
        }
        ["api"] => reply(200, json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})),
        ["apis"] => {
            let mut groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for r in store.resources.iter().filter(|r| !r.group.is_empty()) {
                groups.entry(&r.group).or_default().insert(&r.version);
            }
            let groups: Vec<Json> = groups
                .into_iter()
                .map(|(g, vs)| {
                    let versions: Vec<Json> = vs.iter().map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v})).collect();
                    let preferred = versions[0].clone();
                    json!({"name": g, "versions": versions, "preferredVersion": preferred})
                })
                .collect();
            reply(200, json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["api", version] => discovery(store, "", version),
        ["apis", group, version] => discovery(store, group, version),
        ["api", version, rest @ ..] => resource_request(store, rv, "", version, rest, &query),
        ["apis", group, version, rest @ ..] => resource_request(store, rv, group, version, rest, &query),
        _ => status(404, "NotFound", "the server could not find the requested resource"),
    }
}

fn discovery(store: &Store, group: &str, version: &str) -> (u16, Vec<u8>) {
    let resources: Vec<Json> = store
        .resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .map(|r| json!({"name": r.plural, "singularName": r.kind.to_ascii_lowercase(), "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "list"]}))
        .collect();
    if resources.is_empty() {
        return status(404, "NotFound", "the server could not find the requested resource");
    }
    let gv = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    reply(200, json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}

fn resource_request(
    store: &Store,
    rv: &AtomicU64,
    group: &str,
    version: &str,
    rest: &[&str],
    query: &BTreeMap<String, String>,
) -> (u16, Vec<u8>) {
    let (namespace, plural, name) = match rest {
        ["namespaces", ns, plural] => (Some(*ns), *plural, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
        [plural] => (None, *plural, None),
        [plural, name] => (None, *plural, Some(*name)),
        _ => return status(404, "NotFound", "the server could not find the requested resource"),
    };
    // `GET /api/v1/namespaces/x` is a get of the Namespace x, not a list.
    let (namespace, plural, name) =
        if rest.len() == 2 && rest[0] == "namespaces" { (None, "namespaces", Some(rest[1])) } else { (namespace, plural, name) };
    let Some(resource) = store.resources.iter().find(|r| r.group == group && r.version == version && r.plural == plural) else {
        return status(404, "NotFound", "the server could not find the requested resource");
    };
    if store.forbidden.contains(plural) {
        let scope = namespace.map(|n| format!(" in the namespace \"{n}\"")).unwrap_or_else(|| " at the cluster scope".into());
        let gr = if group.is_empty() { plural.to_string() } else { format!("{plural}.{group}") };
        return status(
            403,
            "Forbidden",
            &format!("{gr} is forbidden: User \"fake\" cannot list resource \"{plural}\" in API group \"{group}\"{scope}"),
        );
    }
    let empty = Vec::new();
    let key = (group.to_string(), version.to_string(), plural.to_string());
    let all = store.objects.get(&key).unwrap_or(&empty);
    let in_scope = |o: &Json| namespace.is_none_or(|ns| str_at(o, &["metadata", "namespace"]) == ns);
    if let Some(name) = name {
        return match all.iter().find(|o| in_scope(&o.json) && str_at(&o.json, &["metadata", "name"]) == name) {
            Some(o) => (200, o.bytes.to_vec()),
            None => status(404, "NotFound", &format!("{plural} \"{name}\" not found")),
        };
    }
    let labels_query = query.get("labelSelector").cloned().unwrap_or_default();
    let labels = match parse_selector(&labels_query) {
        Ok(l) => l,
        Err(e) => return status(400, "BadRequest", &format!("unable to parse requirement: {e}")),
    };
    let fields = query.get("fieldSelector").cloned().unwrap_or_default();
    let selection = (key.0, key.1, key.2, namespace.map(str::to_string), labels_query, fields);
    let cached = store.selections.lock().ok().and_then(|m| m.get(&selection).cloned());
    let matching = cached.unwrap_or_else(|| {
        let fields = &selection.5;
        let picked: Vec<usize> = (0..all.len())
            .filter(|&i| {
                let o = &all[i].json;
                in_scope(o) && labels.iter().all(|r| r.matches(o)) && field_match(fields, o)
            })
            .collect();
        let picked = Arc::new(picked);
        if let Ok(mut m) = store.selections.lock() {
            m.insert(selection.clone(), picked.clone());
        }
        picked
    });
    let current = rv.load(Ordering::SeqCst);
    let offset = match query.get("continue").filter(|c| !c.is_empty()) {
        None => 0,
        Some(token) => match token.split_once('-').and_then(|(v, o)| Some((v.parse::<u64>().ok()?, o.parse::<usize>().ok()?))) {
            Some((v, o)) if v == current => o,
            Some(_) => {
                return status(410, "Expired", "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
            }
            None => return status(400, "BadRequest", "invalid continue token"),
        },
    };
    let limit = query.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0).unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(matching.len());
    let page = &matching[offset.min(end)..end];
    let mut metadata = json!({"resourceVersion": current.to_string()});
    if end < matching.len() {
        metadata["continue"] = Json::String(format!("{current}-{end}"));
        metadata["remainingItemCount"] = json!(matching.len() - end);
    }
    let list_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    // The list as `json!` would serialise it, with the items' bytes spliced in where `[]` stands.
    let (head, tail) = match serde_json::to_vec(
        &json!({"kind": format!("{}List", resource.kind), "apiVersion": list_version, "metadata": metadata, "items": []}),
    ) {
        Ok(mut shell) if shell.ends_with(b"[]}") => {
            let tail = shell.split_off(shell.len() - 2);
            (shell, tail)
        }
        _ => return status(500, "InternalError", "could not serialise the list"),
    };
    let mut body = Vec::with_capacity(head.len() + tail.len() + page.iter().map(|&i| all[i].bytes.len() + 1).sum::<usize>());
    body.extend_from_slice(&head);
    for (n, &i) in page.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&all[i].bytes);
    }
    body.extend_from_slice(&tail);
    (200, body)
}

fn field_match(selector: &str, o: &Json) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|req| {
        let (key, value, negate) = if let Some((k, v)) = req.split_once("!=") {
            (k, v, true)
        } else if let Some((k, v)) = req.split_once("==") {
            (k, v, false)
        } else if let Some((k, v)) = req.split_once('=') {
            (k, v, false)
        } else {
            return false;
        };
        let actual = match key.trim() {
            "metadata.name" => str_at(o, &["metadata", "name"]),
            "metadata.namespace" => str_at(o, &["metadata", "namespace"]),
            _ => return false,
        };
        (actual == value.trim()) != negate
    })
}

/// One label requirement.
#[derive(Debug)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl Requirement {
    fn matches(&self, o: &Json) -> bool {
        let labels = o.pointer("/metadata/labels").and_then(Json::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Json::as_str);
        match self {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        }
    }
}

/// `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
fn parse_selector(s: &str) -> Result<Vec<Requirement>, String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let set = |rest: &str| -> Result<Vec<String>, String> {
                let inner =
                    rest.trim().strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(|| format!("{p:?}: expected (values)"))?;
                Ok(inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect())
            };
            if let Some(k) = p.strip_prefix('!') {
                Ok(Requirement::NotExists(k.trim().to_string()))
            } else if let Some((k, v)) = p.split_once("!=") {
                Ok(Requirement::NotEquals(k.trim().into(), v.trim().into()))
            } else if let Some((k, v)) = p.split_once("==") {
                Ok(Requirement::Equals(k.trim().into(), v.trim().into()))
            } else if let Some((k, v)) = p.split_once('=') {
                Ok(Requirement::Equals(k.trim().into(), v.trim().into()))
            } else if let Some((k, rest)) = p.split_once(" notin ") {
                Ok(Requirement::NotIn(k.trim().into(), set(rest)?))
            } else if let Some((k, rest)) = p.split_once(" in ") {
                Ok(Requirement::In(k.trim().into(), set(rest)?))
            } else if p.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c)) {
                Ok(Requirement::Exists(p))
            } else {
                Err(format!("{p:?} is not a valid requirement"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_follow_kubernetes_semantics() {
        let o = json!({"metadata": {"labels": {"owner": "helm", "tier": "a"}}});
        let ok = |s: &str| parse_selector(s).unwrap().iter().all(|r| r.matches(&o));
        assert!(ok("owner=helm"));
        assert!(ok("owner==helm,tier in (a, b)"));
        assert!(!ok("owner!=helm"));
        assert!(ok("tier notin (b),missing notin (x)"));
        assert!(ok("owner,!missing"));
        assert!(!ok("!owner"));
        assert!(parse_selector("tier in a").is_err());
        assert_eq!(plural("ClusterTrainingRuntime"), "clustertrainingruntimes");
        assert_eq!(plural("Ingress"), "ingresses");
        assert_eq!(plural("NetworkPolicy"), "networkpolicies");
    }

    #[test]
    fn a_page_is_the_list_serde_json_would_write() {
        let objects: Vec<Json> = (0..5)
            .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}"), "namespace": "a", "labels": {"n": i.to_string()}}, "data": {"k": "v"}}))
            .collect();
        let store = build_store(objects.clone(), &[], "v1.33.4");
        let rv = AtomicU64::new(7);
        let expected = |items: &[Json], metadata: Json| {
            serde_json::to_vec(&json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": metadata, "items": items})).unwrap()
        };
        let first = handle(&store, &rv, "/api/v1/configmaps?limit=2");
        assert_eq!(first, (200, expected(&objects[..2], json!({"resourceVersion": "7", "continue": "7-2", "remainingItemCount": 3}))));
        let last = handle(&store, &rv, "/api/v1/namespaces/a/configmaps?limit=2&continue=7-4");
        assert_eq!(last, (200, expected(&objects[4..], json!({"resourceVersion": "7"}))));
        let none = handle(&store, &rv, "/api/v1/configmaps?labelSelector=n%3D9");
        assert_eq!(none, (200, expected(&[], json!({"resourceVersion": "7"}))));
        let one = handle(&store, &rv, "/api/v1/namespaces/a/configmaps/c3");
        assert_eq!(one, (200, serde_json::to_vec(&objects[3]).unwrap()));
        let again = handle(&store, &rv, "/api/v1/configmaps?limit=2");
        assert_eq!(again, first);
    }
}
