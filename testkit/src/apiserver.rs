//! A throwaway kube-apiserver + etcd for differential tests, started from a directory holding
//! both binaries (`TRAINER_AUDIT_CPBIN`), with token auth and `AlwaysAllow`, and a tiny client
//! that sends JSON with `curl` and returns status, body and warnings. Stopped (and its data
//! removed) on drop. Until the shared control-plane harness lands this is the whole harness.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const TOKEN: &str = "trainer-audit-admin";

pub struct ApiServer {
    etcd: Child,
    apiserver: Child,
    pub url: String,
    dir: tempfile::TempDir,
}

/// One HTTP exchange.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub warnings: Vec<String>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}

impl ApiServer {
    /// Starts both processes; `None` with the reason when something is missing or times out.
    pub fn start(bin: &Path) -> Result<ApiServer, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let d = dir.path();
        let run =
            |cmd: &str, args: &[&str]| Command::new(cmd).args(args).current_dir(d).stdout(Stdio::null()).stderr(Stdio::null()).status();
        run("openssl", &["genrsa", "-out", "sa.key", "2048"]).map_err(|e| format!("openssl: {e}"))?;
        run("openssl", &["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]).map_err(|e| format!("openssl: {e}"))?;
        std::fs::write(d.join("tokens.csv"), format!("{TOKEN},admin,admin,system:masters\n")).map_err(|e| e.to_string())?;
        let (client, peer, secure) = (free_port(), free_port(), free_port());
        let log = |name: &str| std::fs::File::create(d.join(name)).map(Stdio::from).unwrap_or_else(|_| Stdio::null());
        let etcd = Command::new(bin.join("etcd"))
            .args([
                "--data-dir",
                &d.join("etcd").to_string_lossy(),
                "--listen-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
            ])
            .stdout(log("etcd.log"))
            .stderr(log("etcd.err"))
            .spawn()
            .map_err(|e| format!("etcd: {e}"))?;
        let apiserver = Command::new(bin.join("kube-apiserver"))
            .args([
                "--etcd-servers",
                &format!("http://127.0.0.1:{client}"),
                "--secure-port",
                &secure.to_string(),
                "--bind-address",
                "127.0.0.1",
                "--cert-dir",
                &d.join("certs").to_string_lossy(),
                "--service-account-issuer",
                "https://kubernetes.default.svc",
                "--service-account-key-file",
                &d.join("sa.pub").to_string_lossy(),
                "--service-account-signing-key-file",
                &d.join("sa.key").to_string_lossy(),
                "--token-auth-file",
                &d.join("tokens.csv").to_string_lossy(),
                "--authorization-mode",
                "AlwaysAllow",
                "--service-cluster-ip-range",
                "10.0.0.0/24",
            ])
            .stdout(log("apiserver.log"))
            .stderr(log("apiserver.err"))
            .spawn()
            .map_err(|e| format!("kube-apiserver: {e}"))?;
        let s = ApiServer { etcd, apiserver, url: format!("https://127.0.0.1:{secure}"), dir };
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            if s.request("GET", "/readyz", None).is_ok_and(|r| r.status == 200) {
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Err("kube-apiserver did not become ready in 90 s".into())
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Sends one request with `curl`; the body is JSON.
    pub fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Reply, String> {
        let mut cmd = Command::new("curl");
        cmd.args(["-sk", "-X", method, "-H", &format!("Authorization: Bearer {TOKEN}"), "-D", "-"]);
        if let Some(b) = body {
            cmd.args(["-H", "Content-Type: application/json", "--data-binary", "@-"]);
            cmd.stdin(Stdio::piped());
            let _ = b;
        }
        cmd.arg(format!("{}{path}", self.url)).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().map_err(|e| format!("curl: {e}"))?;
        if let (Some(b), Some(mut stdin)) = (body, child.stdin.take()) {
            use std::io::Write;
            stdin.write_all(b.to_string().as_bytes()).map_err(|e| e.to_string())?;
        }
        let mut out = String::new();
        child.stdout.take().ok_or("no stdout")?.read_to_string(&mut out).map_err(|e| e.to_string())?;
        child.wait().map_err(|e| e.to_string())?;
        // Headers of the last response, then the body.
        let (head, body) = out.rsplit_once("\r\n\r\n").ok_or_else(|| format!("no HTTP response from {path}"))?;
        let head = head.rsplit("\r\n\r\n").next().unwrap_or(head);
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("no status line")?;
        let warnings = head
            .lines()
            .filter_map(|l| l.strip_prefix("warning: ").or_else(|| l.strip_prefix("Warning: ")))
            .map(|w| {
                let w = w.trim().trim_start_matches("299 - ");
                let w = w.strip_prefix('"').and_then(|w| w.strip_suffix('"')).unwrap_or(w);
                w.replace("\\\"", "\"")
            })
            .collect();
        Ok(Reply { status, body: serde_json::from_str(body).unwrap_or(Value::Null), warnings })
    }

    /// Applies a CRD and waits until it is Established.
    pub fn apply_crd(&self, crd: &Value) -> Result<(), String> {
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).ok_or("CRD without a name")?;
        let mut crd = crd.clone();
        if let Some(m) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("annotations");
            m.remove("labels");
        }
        let existing = self.request("GET", &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"), None)?;
        let reply = if existing.status == 200 {
            crd["metadata"]["resourceVersion"] = existing.body["metadata"]["resourceVersion"].clone();
            self.request("PUT", &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"), Some(&crd))?
        } else {
            self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Some(&crd))?
        };
        if reply.status >= 300 {
            return Err(format!("applying CRD {name}: {} {}", reply.status, reply.body));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let r = self.request("GET", &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"), None)?;
            let established = r
                .body
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Established" && c["status"] == "True"));
            if established {
                std::thread::sleep(Duration::from_millis(1500));
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!("CRD {name} not Established in 30 s"))
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = self.apiserver.kill();
        let _ = self.apiserver.wait();
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
    }
}
