//! Reading a live cluster with the `kube` client, read-only (GET only): kubeconfig or in-cluster
//! configuration, server version, API group discovery, then every catalog resource listed in
//! pages (`limit`/`continue`, relisting once when a continue token expires), a few at a time.
//! A missing CRD (404) is normal; a 403 becomes a warning naming the permission, and namespaced
//! resources are retried in the namespaces that matter before giving up; transient failures
//! (connection errors, 429, 5xx) are retried with backoff.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value as Json;

// Every cause an error carries, each said once (`client error (Connect): tcp connect error:
// Connection refused (os error 111)`): the registry client's helper serves any error.
use chart_source::oci::client::error_chain;

use super::catalog::{Resource, RESOURCES};
use super::{ClusterError, ClusterInfo, ClusterState};
use crate::objects::str_at;
use kube_version::KubeVersion;

mod page;
use page::Page;

/// Items per page.
pub const PAGE_SIZE: usize = 500;
/// Lists in flight at once.
pub const CONCURRENCY: usize = 4;
/// The namespace Trainer's charts install into by default.
pub const DEFAULT_NAMESPACE: &str = "kubeflow-system";

#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Namespaces to read namespaced resources from when cluster-wide lists are forbidden.
    pub namespaces: Vec<String>,
    /// Report progress on stderr.
    pub progress: bool,
}

/// The kubeconfig context a live read uses: `context` when given, else the kubeconfig's current
/// context; None when no kubeconfig is readable (in a pod: the in-cluster config has none).
pub fn context_in_use(kubeconfig: Option<&std::path::Path>, context: Option<&str>) -> Option<String> {
    if let Some(c) = context {
        return Some(c.to_string());
    }
    let config = match kubeconfig {
        Some(path) => kube::config::Kubeconfig::read_from(path).ok()?,
        None => kube::config::Kubeconfig::read().ok()?,
    };
    config.current_context
}

/// A context the kubeconfig does not hold, named with the contexts it does hold.
fn missing_context(options: &LiveOptions) -> Option<String> {
    let wanted = options.context.as_deref()?;
    let (config, which) = match &options.kubeconfig {
        Some(path) => (kube::config::Kubeconfig::read_from(path).ok()?, format!("kubeconfig {}", path.display())),
        None => (kube::config::Kubeconfig::read().ok()?, "the kubeconfig ($KUBECONFIG, else ~/.kube/config)".to_string()),
    };
    if config.contexts.iter().any(|c| c.name == wanted) {
        return None;
    }
    let names: Vec<String> = config.contexts.iter().map(|c| format!("{:?}", c.name)).collect();
    let holds = if names.is_empty() { "holds no context".to_string() } else { format!("holds {}", names.join(", ")) };
    Some(format!("context {wanted:?} is not in {which}, which {holds}: pass one of them with --context (or --all-contexts for every one)"))
}

/// A client for the cluster `options` name, and how messages name that cluster: its API
/// server's URL and the context (`https://10.0.0.1:6443 (context "prod")`).
async fn client(options: &LiveOptions) -> Result<(kube::Client, String), ClusterError> {
    use kube::config::{Config, KubeConfigOptions, Kubeconfig};
    if let Some(missing) = missing_context(options) {
        return Err(ClusterError::Live(missing));
    }
    let kc_options = KubeConfigOptions { context: options.context.clone(), ..Default::default() };
    let config = match &options.kubeconfig {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|e| ClusterError::Live(format!("cannot read kubeconfig {}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(kubeconfig, &kc_options)
                .await
                .map_err(|e| ClusterError::Live(format!("kubeconfig {}: {e}", path.display())))?
        }
        None if options.context.is_some() => Config::from_kubeconfig(&kc_options)
            .await
            .map_err(|e| ClusterError::Live(format!("cannot use context {:?}: {e}", options.context.as_deref().unwrap_or(""))))?,
        None => {
            if let Some(missing) = missing_kubeconfig() {
                return Err(ClusterError::Live(format!(
                    "no cluster configured: {missing}, and this is not a pod; pass --kubeconfig FILE or --context NAME, set KUBECONFIG, or use --snapshot FILE"
                )));
            }
            // The kube crate quotes paths twice ('"/path"'): once is enough.
            Config::infer().await.map_err(|e| {
                let reason = e.to_string().replace("'\"", "\"").replace("\"'", "\"");
                ClusterError::Live(format!(
                    "no cluster configured ({reason}): pass --kubeconfig/--context, set KUBECONFIG, or use --snapshot FILE"
                ))
            })?
        }
    };
    let context = context_in_use(options.kubeconfig.as_deref(), options.context.as_deref());
    let server = match &context {
        Some(c) => format!("{} (context {c:?})", config.cluster_url),
        None => format!("{} (in-cluster configuration)", config.cluster_url),
    };
    let client = kube::Client::try_from(config).map_err(|e| ClusterError::Live(format!("cannot build the Kubernetes client: {e}")))?;
    Ok((client, server))
}

/// Outside a pod, the kubeconfig the kube crate would read when none of its files exists: `the
/// kubeconfig "/x" (from $KUBECONFIG) does not exist`.
fn missing_kubeconfig() -> Option<String> {
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        return None;
    }
    let (paths, from): (Vec<PathBuf>, &str) = match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(list) => (std::env::split_paths(&list).collect(), "from $KUBECONFIG"),
        None => (vec![PathBuf::from(std::env::var_os("HOME")?).join(".kube").join("config")], "the default"),
    };
    if paths.iter().any(|p| p.exists()) {
        return None;
    }
    let shown: Vec<String> = paths.iter().map(|p| format!("{:?}", p.display().to_string())).collect();
    Some(format!("the kubeconfig {} ({from}) does not exist", shown.join(", ")))
}

fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => matches!(s.code, 429 | 500 | 502 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => true,
        _ => false,
    }
}

/// A list page bigger than this is refused (500 objects are a few MiB even with managedFields).
pub const MAX_PAGE_BYTES: u64 = 512 * 1024 * 1024;

/// GET one page of `r` at `path`, retrying transient failures (0.2 s, 0.4 s, 0.8 s).
async fn get_page(client: &kube::Client, r: &Resource, path: &str) -> Result<Page, kube::Error> {
    let mut delay = Duration::from_millis(200);
    let mut attempt = 0;
    loop {
        match fetch_page(client, r, path).await {
            Err(e) if attempt < 3 && is_transient(&e) => {
                attempt += 1;
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            other => return other,
        }
    }
}

async fn fetch_page(client: &kube::Client, r: &Resource, path: &str) -> Result<Page, kube::Error> {
    use futures::AsyncReadExt;
    let request = http::Request::get(path).body(Vec::new()).map_err(kube::Error::HttpError)?;
    let mut body = Vec::new();
    client.request_stream(request).await?.take(MAX_PAGE_BYTES + 1).read_to_end(&mut body).await.map_err(kube::Error::ReadEvents)?;
    if body.len() as u64 > MAX_PAGE_BYTES {
        let message = format!("a page of {path} is over {} MiB", MAX_PAGE_BYTES / (1024 * 1024));
        return Err(kube::Error::ReadEvents(std::io::Error::other(message)));
    }
    Page::parse(&body, r).map_err(kube::Error::SerdeError)
}

/// Query-component encoding (RFC 3986 unreserved kept).
fn percent_encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn list_path(r: &Resource, namespace: Option<&str>, continue_token: Option<&str>) -> String {
    let base = if r.group.is_empty() { format!("/api/{}", r.version) } else { format!("/apis/{}/{}", r.group, r.version) };
    let scope = namespace.map(|ns| format!("/namespaces/{ns}")).unwrap_or_default();
    let mut query = vec![format!("limit={PAGE_SIZE}")];
    if let Some(s) = r.label_selector {
        query.push(format!("labelSelector={}", percent_encode(s)));
    }
    if let Some(s) = r.field_selector {
        query.push(format!("fieldSelector={}", percent_encode(s)));
    }
    if let Some(c) = continue_token {
        query.push(format!("continue={}", percent_encode(c)));
    }
    format!("{base}{scope}/{}?{}", r.plural, query.join("&"))
}

enum Listed {
    Items(Vec<Json>),
    Absent,
    Forbidden,
}

/// Every page of one list, normalised; items get their apiVersion and kind (list items may
/// omit them).
async fn list_all(client: &kube::Client, r: &Resource, namespace: Option<&str>) -> Result<Listed, ClusterError> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    let mut relisted = false;
    loop {
        match get_page(client, r, &list_path(r, namespace, token.as_deref())).await {
            Ok(page) => {
                // Trimmed page by page, so 50,000 TrainJobs never sit in memory whole.
                items.extend(page.items);
                token = page.continue_token;
                if token.is_none() {
                    return Ok(Listed::Items(items));
                }
            }
            Err(kube::Error::Api(s)) if s.code == 410 && !relisted => {
                // The continue token expired (the list changed under us): start over once.
                relisted = true;
                items.clear();
                token = None;
            }
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Listed::Absent),
            Err(kube::Error::Api(s)) if s.code == 403 => return Ok(Listed::Forbidden),
            Err(e) => {
                let scope = namespace.map(|n| format!(" in namespace {n}")).unwrap_or_default();
                return Err(ClusterError::Live(format!("cannot {}{scope}: {e}", r.permission())));
            }
        }
    }
}

fn describe(r: &Resource) -> String {
    let mut what = r.permission();
    if let Some(s) = r.label_selector.or(r.field_selector) {
        what.push_str(&format!(" ({s})"));
    }
    what
}

pub async fn read(options: &LiveOptions) -> Result<ClusterState, ClusterError> {
    let (client, server) = client(options).await?;
    let version = client
        .apiserver_version()
        .await
        .map_err(|e| ClusterError::Live(format!("cannot reach the Kubernetes API server {server}: {}", error_chain(&e))))?;
    let groups: BTreeSet<String> = client
        .list_api_groups()
        .await
        .map_err(|e| ClusterError::Live(format!("API discovery failed: {e}")))?
        .groups
        .into_iter()
        .flat_map(|g| g.versions.into_iter().map(|v| v.group_version))
        .collect();
    let served = |r: &Resource| r.group.is_empty() || groups.contains(&r.api_version());
    let wanted: Vec<&Resource> = RESOURCES.iter().filter(|r| served(r)).collect();
    let mut results: Vec<(&Resource, Listed)> = futures::stream::iter(wanted)
        .map(|r| {
            let client = client.clone();
            async move { list_all(&client, r, None).await.map(|l| (r, l)) }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    results.sort_by_key(|(r, _)| RESOURCES.iter().position(|x| x == *r));
    // Namespaces worth a second try for namespaced lists forbidden cluster-wide.
    let mut namespaces: BTreeSet<String> = options.namespaces.iter().cloned().collect();
    namespaces.insert(DEFAULT_NAMESPACE.to_string());
    for (_, listed) in &results {
        if let Listed::Items(items) = listed {
            for d in items.iter().filter(|i| str_at(i, &["kind"]) == "Deployment" && super::neighbours::is_trainer_deployment(i)) {
                namespaces.insert(str_at(d, &["metadata", "namespace"]).to_string());
            }
        }
    }
    let mut objects = Vec::new();
    let mut warnings = Vec::new();
    for (r, listed) in results {
        match listed {
            Listed::Items(items) => objects.extend(items),
            Listed::Absent => {}
            Listed::Forbidden if !r.namespaced => {
                warnings.push(format!("forbidden: cannot {} cluster-wide; grant it (see `trainer-audit rbac`)", describe(r)))
            }
            Listed::Forbidden => {
                for ns in &namespaces {
                    match list_all(&client, r, Some(ns)).await? {
                        Listed::Items(items) => objects.extend(items),
                        Listed::Absent => {}
                        Listed::Forbidden => warnings
                            .push(format!("forbidden: cannot {} in namespace {ns}; grant it (see `trainer-audit rbac`)", describe(r))),
                    }
                }
            }
        }
        if options.progress {
            eprintln!("read {}", r.permission().trim_start_matches("list "));
        }
    }
    // A server whose version is not MAJOR.MINOR… is read as one of unknown version (the
    // commands that need it then ask for --kube-version).
    let server_version = match KubeVersion::parse(&version.git_version) {
        Ok(v) => Some(v),
        Err(e) => {
            warnings.push(format!("the API server's version: {e}; pass --kube-version"));
            None
        }
    };
    let info = ClusterInfo { server_version, ..ClusterInfo::default() };
    Ok(ClusterState::from_normalised(info, objects, warnings))
}
