//! Raw requests to the control plane's API server as the admin, for tests that compare their own
//! verdicts with the server's (status code, JSON body, the `Warning` headers): one kube client
//! with a reused connection pool and several requests in flight ([`Api::send_all`]), instead of a
//! process per request. Also applies CRDs and waits until they are served.

use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::{ControlPlane, ControlPlaneError};

/// One request: method, path (with query) and an optional JSON body.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
}

impl Call {
    pub fn new(method: &'static str, path: impl Into<String>, body: Option<Value>) -> Call {
        Call { method, path: path.into(), body }
    }
}

/// One HTTP exchange.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    /// `Warning` headers, the `299 - "…"` wrapping removed (`unknown field "spec.x"`).
    pub warnings: Vec<String>,
}

/// A client for one control plane.
pub struct Api {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
}

fn api_error(what: &str, e: impl std::fmt::Display) -> ControlPlaneError {
    ControlPlaneError::Api { what: what.to_string(), message: e.to_string() }
}

impl ControlPlane {
    /// A raw client authenticated as the admin.
    pub fn api(&self) -> Result<Api, ControlPlaneError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| api_error("tokio runtime", e))?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = runtime.block_on(async {
            let kc =
                kube::config::Kubeconfig::read_from(&self.admin_kubeconfig).map_err(|e| api_error("reading the admin kubeconfig", e))?;
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .map_err(|e| api_error("loading the admin kubeconfig", e))?;
            kube::Client::try_from(config).map_err(|e| api_error("building the client", e))
        })?;
        Ok(Api { runtime, client })
    }
}

/// The text of a `Warning` header value: `299 - "unknown field \"x\""` → `unknown field "x"`.
pub fn warning_text(header: &str) -> String {
    let w = header.trim().trim_start_matches("299 - ").trim_start_matches("299 ").trim_start_matches("- ");
    let w = w.strip_prefix('"').and_then(|w| w.strip_suffix('"')).unwrap_or(w);
    w.replace("\\\"", "\"").replace("\\\\", "\\")
}

async fn exchange(client: &kube::Client, call: &Call) -> Result<Reply, String> {
    exchange_as(client, call, "application/json").await
}

async fn exchange_as(client: &kube::Client, call: &Call, content_type: &str) -> Result<Reply, String> {
    let body = call.body.as_ref().map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let request = http::Request::builder()
        .method(call.method)
        .uri(&call.path)
        .header("Content-Type", content_type)
        .header("Accept", "application/json")
        .body(kube::client::Body::from(body))
        .map_err(|e| format!("{} {}: {e}", call.method, call.path))?;
    let response = client.send(request).await.map_err(|e| format!("{} {}: {e}", call.method, call.path))?;
    let status = response.status().as_u16();
    let warnings = response.headers().get_all("warning").iter().filter_map(|v| v.to_str().ok()).map(warning_text).collect();
    let bytes = response.into_body().collect_bytes().await.map_err(|e| format!("{} {}: reading the body: {e}", call.method, call.path))?;
    Ok(Reply { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), warnings })
}

impl Api {
    pub fn request(&self, method: &'static str, path: &str, body: Option<&Value>) -> Result<Reply, String> {
        let call = Call { method, path: path.to_string(), body: body.cloned() };
        self.runtime.block_on(exchange(&self.client, &call))
    }

    /// A server-side apply of `body` at `path` (`PATCH`, `application/apply-patch+yaml`, of which
    /// JSON is a part) by `manager`, conflicts forced: what `helm upgrade --server-side` and
    /// `kubectl apply --server-side --force-conflicts` send.
    pub fn server_side_apply(&self, path: &str, body: &Value, manager: &str) -> Result<Reply, String> {
        let call = Call { method: "PATCH", path: format!("{path}?fieldManager={manager}&force=true"), body: Some(body.clone()) };
        self.runtime.block_on(exchange_as(&self.client, &call, "application/apply-patch+yaml"))
    }

    /// Sends every call with up to `in_flight` at a time; replies in the calls' order.
    pub fn send_all(&self, calls: &[Call], in_flight: usize) -> Vec<Result<Reply, String>> {
        let client = &self.client;
        self.runtime.block_on(stream::iter(calls.iter().map(|c| exchange(client, c))).buffered(in_flight.max(1)).collect())
    }

    /// Creates or replaces a CRD (labels and annotations dropped) and waits until it is
    /// Established and its resource is served.
    pub fn apply_crd(&self, crd: &Value) -> Result<(), String> {
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).ok_or("CRD without a name")?;
        let mut crd = crd.clone();
        if let Some(m) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("annotations");
            m.remove("labels");
        }
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
        let existing = self.request("GET", &path, None)?;
        let reply = if existing.status == 200 {
            crd["metadata"]["resourceVersion"] = existing.body["metadata"]["resourceVersion"].clone();
            self.request("PUT", &path, Some(&crd))?
        } else {
            self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Some(&crd))?
        };
        if reply.status >= 300 {
            return Err(format!("applying CRD {name}: {} {}", reply.status, reply.body));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let r = self.request("GET", &path, None)?;
            let established = r
                .body
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Established" && c["status"] == "True"));
            let group = crd.pointer("/spec/group").and_then(Value::as_str).unwrap_or("");
            let plural = crd.pointer("/spec/names/plural").and_then(Value::as_str).unwrap_or("");
            let served =
                crd.pointer("/spec/versions").and_then(Value::as_array).into_iter().flatten().filter(|v| v["served"] == true).all(|v| {
                    let version = v.get("name").and_then(Value::as_str).unwrap_or("");
                    self.request("GET", &format!("/apis/{group}/{version}/{plural}?limit=1"), None).is_ok_and(|r| r.status == 200)
                });
            if established && served {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!("CRD {name} not Established and served in 60 s"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_headers() {
        assert_eq!(warning_text(r#"299 - "unknown field \"spec.x\"""#), r#"unknown field "spec.x""#);
        assert_eq!(warning_text("299 - plain"), "plain");
    }
}
