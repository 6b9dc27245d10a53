//! A real Kubernetes control plane for tests, in the manner of controller-runtime's envtest
//! (`pkg/internal/testing/controlplane`): etcd and kube-apiserver built by `cargo xtask
//! controlplane`, started on 127.0.0.1 free ports with per-run certificates, RBAC authorization,
//! ServiceAccount token issuance (TokenRequest works) and Pod Security admission on. One shared
//! control plane per test binary ([`shared_or_skip`]), started lazily by the first test that asks
//! and stopped when the process exits; each scenario on it takes a fresh namespace from
//! [`ControlPlane::namespace`]. A scenario that installs cluster-scoped objects another scenario
//! also installs (Trainer's CRDs, ClusterRoles, ClusterTrainingRuntimes) takes a fresh etcd and
//! API server of its own instead ([`fresh_or_skip`]), stopped when dropped.
//!
//! What it is not: no controller-manager, scheduler or kubelet runs (see `crate::standin` for the
//! Job/Pod/Deployment stand-in), so no garbage collection, no namespace finalization (a deleted
//! namespace stays Terminating: never delete one, take a new one), no `default` ServiceAccount and
//! no `kube-root-ca.crt` ConfigMap in new namespaces. Admission webhooks are OFF
//! (`MutatingAdmissionWebhook`, `ValidatingAdmissionWebhook` disabled, because nothing would serve
//! them): a chart's webhook configurations are stored but never called, so a test shows nothing
//! about what Trainer's own webhooks would admit or reject. In-process admission (PodSecurity,
//! ValidatingAdmissionPolicy, MutatingAdmissionPolicy, JobValidation, …) is on. The
//! `ServiceAccount` admission plugin is off as in envtest: without the ServiceAccount controller
//! it would reject every Pod that names no existing ServiceAccount.

pub mod http;
pub mod pki;
pub mod process;
mod tools;

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use pki::ADMIN_USER;

/// Where `cargo xtask test` puts the bin directory for the tests.
pub const BIN_ENV: &str = "TRAINER_AUDIT_CONTROLPLANE_BIN";
const BINARIES: [&str; 4] = ["etcd", "kube-apiserver", "kubectl", "helm"];
/// Start-up bounds: generous because CI shares two cores with the compiler.
const ETCD_READY: Duration = Duration::from_secs(30);
const APISERVER_READY: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum ControlPlaneError {
    #[error("control plane binaries not found: {0}")]
    Missing(String),
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("generating certificates: {0}")]
    Certificates(String),
    #[error("{component} did not start: {reason}\n--- last lines of its log ---\n{log}")]
    Start { component: String, reason: String, log: String },
    #[error("Kubernetes API call {what} failed: {message}")]
    Api { what: String, message: String },
}

/// A running etcd + kube-apiserver pair.
#[derive(Debug)]
pub struct ControlPlane {
    /// Directory holding etcd, kube-apiserver, kubectl and helm.
    pub bin: PathBuf,
    /// The run's scratch directory (certificates, etcd data, logs, kubeconfigs); removed at exit.
    pub dir: PathBuf,
    /// kube-apiserver's secure port on 127.0.0.1.
    pub port: u16,
    pub pki: pki::Pki,
    /// A kubeconfig for the admin user (`system:masters`).
    pub admin_kubeconfig: PathBuf,
    /// How long etcd + kube-apiserver took to become ready.
    pub startup: Duration,
    pub etcd_log: PathBuf,
    pub apiserver_log: PathBuf,
    // etcd and kube-apiserver: stopped on drop, or by the exit hook in `process` for the shared
    // control plane, which lives in a static and is never dropped.
    children: Mutex<Vec<Child>>,
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        if let Ok(mut children) = self.children.lock() {
            // The API server first, so it does not log etcd's disappearance as an error storm.
            for child in children.iter_mut().rev() {
                process::stop(child, Duration::from_secs(10));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static SHARED: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The bin directory: `$TRAINER_AUDIT_CONTROLPLANE_BIN`, else what `cargo xtask controlplane`
/// recorded in `target/controlplane/current`.
pub fn bin_dir() -> Result<PathBuf, ControlPlaneError> {
    let dir = match std::env::var_os(BIN_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
            let current = target.join("controlplane/current");
            let text = std::fs::read_to_string(&current).map_err(|_| {
                ControlPlaneError::Missing(format!(
                    "{BIN_ENV} is unset and {} does not exist; run `cargo xtask controlplane`",
                    current.display()
                ))
            })?;
            PathBuf::from(text.trim())
        }
    };
    for name in BINARIES {
        if !dir.join(name).is_file() {
            return Err(ControlPlaneError::Missing(format!("{} has no {name}; run `cargo xtask controlplane`", dir.display())));
        }
    }
    Ok(dir)
}

/// True in CI, where a missing control plane fails the test instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// The shared control plane, started on first use. `None` (after a visible SKIPPED line on the
/// terminal) when the binaries are absent outside CI; in CI an absent or broken control plane
/// panics, failing the test.
pub fn shared_or_skip(test: &str) -> Option<&'static ControlPlane> {
    if let Err(e) = bin_dir() {
        assert!(!in_ci(), "{test}: {e}");
        skipped(test, &e.to_string());
        return None;
    }
    match SHARED.get_or_init(|| ControlPlane::start().map_err(|e| e.to_string())) {
        Ok(cp) => Some(cp),
        Err(e) => panic!("{test}: the test control plane failed to start: {e}"),
    }
}

/// A control plane of the test's own, for scenarios that install cluster-scoped objects (CRDs,
/// ClusterRoles, ClusterTrainingRuntimes) that would collide with another scenario's on the
/// shared one; stopped and deleted when dropped. `None` as in [`shared_or_skip`].
pub fn fresh_or_skip(test: &str) -> Option<ControlPlane> {
    if let Err(e) = bin_dir() {
        assert!(!in_ci(), "{test}: {e}");
        skipped(test, &e.to_string());
        return None;
    }
    match ControlPlane::start() {
        Ok(cp) => Some(cp),
        Err(e) => panic!("{test}: the test control plane failed to start: {e}"),
    }
}

/// Prints a SKIPPED line straight to the terminal: libtest captures `eprintln!` of passing tests,
/// which would hide it.
pub fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

fn free_port() -> Result<u16, ControlPlaneError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| ControlPlaneError::Io("binding a free port".into(), e))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| ControlPlaneError::Io("reading a free port".into(), e))
}

impl ControlPlane {
    /// Starts a new control plane (tests normally use [`shared_or_skip`]).
    pub fn start() -> Result<ControlPlane, ControlPlaneError> {
        let started = Instant::now();
        let bin = bin_dir()?;
        let dir = tempfile::Builder::new()
            .prefix("trainer-audit-controlplane-")
            .tempdir()
            .map_err(|e| ControlPlaneError::Io("creating the control plane's directory".into(), e))?
            .keep();
        // Also removed on drop; this covers the shared one and a test that panics while starting.
        process::remove_at_exit(&dir);
        let pki_dir = dir.join("pki");
        std::fs::create_dir_all(&pki_dir).map_err(|e| ControlPlaneError::Io(format!("creating {}", pki_dir.display()), e))?;
        let pki = pki::write(&pki_dir)?;

        let (client_port, peer_port) = (free_port()?, free_port()?);
        let etcd_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let etcd_log = dir.join("etcd.log");
        let mut etcd = Command::new(bin.join("etcd"));
        etcd.arg(format!("--data-dir={}", dir.join("etcd").display()))
            .arg(format!("--listen-client-urls={etcd_url}"))
            .arg(format!("--advertise-client-urls={etcd_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=default={peer_url}"))
            // envtest's choice: test data need not survive a crash.
            .arg("--unsafe-no-fsync=true")
            .arg("--log-level=warn");
        let mut etcd_child = process::spawn_logged(etcd, &etcd_log)?;
        process::wait_ready("etcd", &mut etcd_child, &etcd_log, ETCD_READY, || tools::http_get_ok(client_port, "/health"))?;

        let port = free_port()?;
        let apiserver_log = dir.join("kube-apiserver.log");
        let mut apiserver = Command::new(bin.join("kube-apiserver"));
        apiserver
            .arg(format!("--etcd-servers={etcd_url}"))
            .arg("--bind-address=127.0.0.1")
            .arg("--advertise-address=127.0.0.1")
            .arg(format!("--secure-port={port}"))
            .arg(format!("--cert-dir={}", pki_dir.display()))
            .arg(format!("--tls-cert-file={}", pki.serving_cert.display()))
            .arg(format!("--tls-private-key-file={}", pki.serving_key.display()))
            .arg(format!("--client-ca-file={}", pki.ca_cert.display()))
            .arg("--authorization-mode=RBAC")
            .arg(format!("--service-account-issuer=https://127.0.0.1:{port}"))
            .arg(format!("--service-account-key-file={}", pki.sa_pub.display()))
            .arg(format!("--service-account-signing-key-file={}", pki.sa_key.display()))
            .arg("--service-cluster-ip-range=10.0.0.0/24")
            .arg("--allow-privileged=true")
            .arg("--disable-admission-plugins=ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook");
        let mut apiserver_child = process::spawn_logged(apiserver, &apiserver_log)?;

        let admin_kubeconfig = dir.join("admin.kubeconfig");
        let server = format!("https://127.0.0.1:{port}");
        let admin = tools::kubeconfig_certs(&server, &pki.ca_cert, &pki.admin_cert, &pki.admin_key, ADMIN_USER);
        std::fs::write(&admin_kubeconfig, admin)
            .map_err(|e| ControlPlaneError::Io(format!("writing {}", admin_kubeconfig.display()), e))?;
        let kubectl = bin.join("kubectl");
        process::wait_ready("kube-apiserver", &mut apiserver_child, &apiserver_log, APISERVER_READY, || {
            tools::readyz(&kubectl, &admin_kubeconfig)
        })?;
        Ok(ControlPlane {
            bin,
            dir,
            port,
            pki,
            admin_kubeconfig,
            startup: started.elapsed(),
            etcd_log,
            apiserver_log,
            children: Mutex::new(vec![etcd_child, apiserver_child]),
        })
    }

    /// `https://127.0.0.1:<port>`.
    pub fn server(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// A fresh directory under the run's directory.
    pub fn scratch(&self, label: &str) -> PathBuf {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = self.dir.join(format!("{label}-{n}"));
        let _ = std::fs::create_dir_all(&dir);
        dir
    }

    /// Creates a namespace named `<prefix>-<n>` (unique in this run) with `labels`, and returns
    /// its name. Namespaces are never deleted: nothing would finalize them.
    pub fn namespace(&self, prefix: &str, labels: &[(&str, &str)]) -> Result<String, ControlPlaneError> {
        let name = format!("{prefix}-{}", COUNTER.fetch_add(1, Ordering::Relaxed));
        let labels: serde_json::Map<String, serde_json::Value> = labels.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
        let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}});
        self.kubectl_ok(&self.admin_kubeconfig, &["create", "-f", "-"], Some(&body.to_string()))?;
        Ok(name)
    }

    /// Runs the built `kubectl` with `kubeconfig` (and nothing from the machine's environment that
    /// could point it elsewhere).
    pub fn kubectl(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        tools::run(self.bin.join("kubectl"), kubeconfig, args, stdin, &[])
    }

    /// [`Self::kubectl`] that fails unless kubectl exits 0; returns stdout.
    pub fn kubectl_ok(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Result<String, ControlPlaneError> {
        let out = self.kubectl(kubeconfig, args, stdin);
        if !out.status.success() {
            return Err(ControlPlaneError::Api {
                what: format!("kubectl {}", args.join(" ")),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Server-side applies `yaml` as the admin (field manager `kubectl`).
    pub fn apply(&self, yaml: &str) -> Result<String, ControlPlaneError> {
        self.kubectl_ok(&self.admin_kubeconfig, &["apply", "--server-side", "-f", "-"], Some(yaml))
    }

    /// `kubectl wait --for=<condition> <object> --timeout=<secs>s` as the admin.
    pub fn wait_for(&self, namespace: &str, object: &str, condition: &str, timeout: Duration) -> Result<String, ControlPlaneError> {
        let timeout = format!("--timeout={}s", timeout.as_secs().max(1));
        let condition = format!("--for={condition}");
        self.kubectl_ok(&self.admin_kubeconfig, &["wait", "-n", namespace, object, &condition, &timeout], None)
    }

    /// Runs the built `helm` with `kubeconfig` and its cache, config and data directories in a
    /// fresh scratch directory, so no test sees the machine's Helm state or another test's.
    pub fn helm(&self, kubeconfig: &Path, args: &[&str]) -> std::process::Output {
        let home = self.scratch("helm-home");
        let env = [
            ("HELM_CACHE_HOME", home.join("cache")),
            ("HELM_CONFIG_HOME", home.join("config")),
            ("HELM_DATA_HOME", home.join("data")),
            ("HOME", home.clone()),
        ];
        tools::run(self.bin.join("helm"), kubeconfig, args, None, &env)
    }

    /// Creates ServiceAccount `namespace/name` (if absent), requests a token for it
    /// (TokenRequest, one hour) and writes a kubeconfig that authenticates with that token.
    pub fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> Result<PathBuf, ControlPlaneError> {
        let sa = serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}});
        self.apply(&sa.to_string())?;
        let token = self.kubectl_ok(&self.admin_kubeconfig, &["create", "token", "-n", namespace, name, "--duration=1h"], None)?;
        let path = self.scratch("kubeconfig").join(format!("{namespace}-{name}.kubeconfig"));
        let user = format!("system:serviceaccount:{namespace}:{name}");
        let text = tools::kubeconfig_token(&self.server(), &self.pki.ca_cert, token.trim(), &user);
        std::fs::write(&path, text).map_err(|e| ControlPlaneError::Io(format!("writing {}", path.display()), e))?;
        Ok(path)
    }
}
