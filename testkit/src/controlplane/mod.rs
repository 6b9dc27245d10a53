//! A real Kubernetes control plane for tests, in the manner of controller-runtime's envtest
//! (`pkg/internal/testing/controlplane`) plus the controller manager: etcd, kube-apiserver and
//! kube-controller-manager built by `cargo xtask controlplane`, started on 127.0.0.1 ports that
//! cannot be raced for ([`ports`]) with per-run certificates, RBAC authorization, ServiceAccount
//! token issuance (TokenRequest works) and Pod Security admission on. One shared control plane
//! per test binary ([`shared_or_skip`]), started lazily by the first test that asks and stopped
//! when the process exits; each scenario on it takes a fresh namespace from
//! [`ControlPlane::namespace`]. A scenario that installs cluster-scoped objects another scenario
//! also installs (Trainer's CRDs, ClusterRoles, ClusterTrainingRuntimes) takes a fresh control
//! plane of its own instead ([`fresh_or_skip`]), stopped when dropped.
//!
//! kube-controller-manager runs the controllers in [`CONTROLLERS`] (job, deployment, ReplicaSet,
//! garbage collector, namespace) as the admin, without leader election and without a serving
//! port. No scheduler or kubelet runs: `crate::standin` binds and "runs" the Pods of the
//! namespaces it is started on. Not run: the ServiceAccount and root-CA publishers (no `default`
//! ServiceAccount and no `kube-root-ca.crt` ConfigMap in new namespaces), the node lifecycle
//! controller, and the rest. Admission webhooks are OFF by default (`MutatingAdmissionWebhook`,
//! `ValidatingAdmissionWebhook` disabled, because nothing would serve them): a chart's webhook
//! configurations are stored but never called. With [`Webhooks::On`] they are on, and the control
//! plane runs in a network namespace of its own ([`netns`]) where the stand-in runs the
//! controllers whose binaries were built, so the API server reaches their webhook servers through
//! their Services' endpoints (kube-controller-manager's `endpointslice-controller` then runs too).
//! In-process admission (PodSecurity,
//! ValidatingAdmissionPolicy, MutatingAdmissionPolicy, JobValidation, …) is on. The
//! `ServiceAccount` admission plugin is off as in envtest: without the ServiceAccount controller
//! it would reject every Pod that names no existing ServiceAccount.

pub mod http;
pub mod netns;
pub mod pki;
pub mod ports;
pub mod process;
mod tools;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use pki::ADMIN_USER;

/// Where `cargo xtask test` puts the bin directory for the tests.
pub const BIN_ENV: &str = "TRAINER_AUDIT_CONTROLPLANE_BIN";
const BINARIES: [&str; 6] = ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "helm", "trainer-controller-manager-v2.3.0"];
/// The controllers `cargo xtask controlplane` builds for the stand-in to run as their Pods (named
/// as the stand-in maps the charts' images, `testkit::standin`): Trainer's manager at every
/// version a rehearsal installs (2.3.0, 2.2.1, 2.2.0, 2.1.0, 2.0.0), JobSet's at the version each
/// of those charts pins (0.12.0, 0.11.0 for both 2.2s, 0.10.1, 0.8.2), Kueue's at 0.17.0. Not required by [`bin_dir`]: a scenario asserts the ones it runs.
pub const CONTROLLER_BINARIES: [&str; 10] = [
    "trainer-controller-manager-v2.3.0",
    "trainer-controller-manager-v2.2.1",
    "trainer-controller-manager-v2.2.0",
    "trainer-controller-manager-v2.1.0",
    "trainer-controller-manager-v2.0.0",
    "jobset-v0.12.0",
    "jobset-v0.11.0",
    "jobset-v0.10.1",
    "jobset-v0.8.2",
    "kueue-v0.17.0",
];
/// The kube-controller-manager controllers that run: those whose work the tests wait on (Jobs'
/// Pods, Deployments' ReplicaSets and Pods, cascading and orphaning deletes, namespace
/// deletion). Not the node lifecycle controller (the stand-in node posts no heartbeats), nor the
/// ServiceAccount, token or root-CA publishers (see the module doc).
pub const CONTROLLERS: [&str; 5] =
    ["job-controller", "deployment-controller", "replicaset-controller", "garbage-collector-controller", "namespace-controller"];
/// Added with admission webhooks on ([`Webhooks::On`]): the endpointslice controller publishes
/// the controller Pods' IP as their Services' endpoints, where the API server then sends webhook
/// calls; the ResourceQuota controller computes quotas' usage, without which quota admission
/// refuses every write it covers ("status unknown for quota"), so that a quota can refuse what a
/// running controller creates.
pub const WEBHOOK_CONTROLLERS: [&str; 2] = ["endpointslice-controller", "resourcequota-controller"];

/// Whether the API server calls admission webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Webhooks {
    /// `MutatingAdmissionWebhook`/`ValidatingAdmissionWebhook` off: a chart's webhook
    /// configurations are stored, never called (no controller serves them). On the host's
    /// loopback.
    Off,
    /// On, with `--enable-aggregator-routing=true`: the whole control plane runs in a network
    /// namespace of its own ([`netns`]), where the stand-in runs the controllers' Pods.
    On,
}
/// Start-up bounds: generous because CI shares two cores with the compiler.
const ETCD_READY: Duration = Duration::from_secs(30);
const APISERVER_READY: Duration = Duration::from_secs(120);
const CONTROLLER_MANAGER_READY: Duration = Duration::from_secs(120);

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
    pub controller_manager_log: PathBuf,
    /// The control plane's network namespace, with [`Webhooks::On`].
    pub netns: Option<Arc<netns::Netns>>,
    pub webhooks: Webhooks,
    // The host side of the API server's port with [`Webhooks::On`] (after `children`: dropped
    // once they are stopped).
    // etcd and kube-apiserver: stopped on drop, or by the exit hook in `process` for the shared
    // control plane, which lives in a static and is never dropped.
    children: Mutex<Vec<Child>>,
    _proxy: Option<netns::Proxy>,
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

/// Waits while `cargo xtask test` is still building the controllers into `dir` (its marker
/// `.building` names a live process and `.complete` is not written yet): it builds them beside the
/// first tests, and a test that would run a controller must run the real one, as it would with the
/// directory complete. Returns at once when no build is under way.
pub fn wait_for_build(dir: &Path) {
    let mut told = false;
    while !dir.join(".complete").is_file() {
        let Ok(pid) = std::fs::read_to_string(dir.join(".building")) else { return };
        if !Path::new("/proc").join(pid.trim()).is_dir() {
            return;
        }
        if !told {
            eprintln!("testkit: waiting for the control plane's controllers, still being built in {}", dir.display());
            told = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
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
    fresh_with_or_skip(test, Webhooks::Off)
}

/// [`fresh_or_skip`] with admission webhooks as asked.
pub fn fresh_with_or_skip(test: &str, webhooks: Webhooks) -> Option<ControlPlane> {
    if let Err(e) = bin_dir() {
        assert!(!in_ci(), "{test}: {e}");
        skipped(test, &e.to_string());
        return None;
    }
    match ControlPlane::start_with(webhooks) {
        Ok(cp) => Some(cp),
        Err(e) => panic!("{test}: the test control plane failed to start: {e}"),
    }
}

/// Prints a SKIPPED line straight to the terminal: libtest captures `eprintln!` of passing tests,
/// which would hide it.
pub fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

fn pick_port() -> Result<u16, ControlPlaneError> {
    ports::pick().map_err(|e| ControlPlaneError::Io("choosing a free loopback port".into(), e))
}

/// Starts a server on ports from [`ports::pick`] and waits until it is ready; when it exits
/// saying its port was taken meanwhile, starts it again on new ports (up to
/// [`ports::START_ATTEMPTS`] times). `spawn` gets the attempt's ports and returns the child and
/// its readiness probe.
fn start_on_free_ports<const N: usize, P: FnMut() -> Result<(), String>>(
    component: &str,
    log: &Path,
    timeout: Duration,
    mut spawn: impl FnMut([u16; N]) -> Result<(Child, P), ControlPlaneError>,
) -> Result<(Child, [u16; N]), ControlPlaneError> {
    let mut attempt = 1;
    loop {
        let mut picked = [0u16; N];
        for port in picked.iter_mut() {
            *port = pick_port()?;
        }
        let (mut child, probe) = spawn(picked)?;
        match process::wait_ready(component, &mut child, log, timeout, probe) {
            Ok(()) => return Ok((child, picked)),
            Err(ControlPlaneError::Start { log: tail, .. }) if ports::in_use(&tail) && attempt < ports::START_ATTEMPTS => {
                process::stop(&mut child, Duration::from_secs(5));
                let _ =
                    writeln!(std::io::stderr(), "testkit: {component} lost the race for port(s) {picked:?}; starting it again on others");
                attempt += 1;
            }
            Err(e) => {
                process::stop(&mut child, Duration::from_secs(5));
                return Err(e);
            }
        }
    }
}

impl ControlPlane {
    /// Starts a new control plane (tests normally use [`shared_or_skip`]).
    pub fn start() -> Result<ControlPlane, ControlPlaneError> {
        Self::start_with(Webhooks::Off)
    }

    /// Starts a new control plane with admission webhooks on or off.
    pub fn start_with(webhooks: Webhooks) -> Result<ControlPlane, ControlPlaneError> {
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
        let (netns, proxy) = match webhooks {
            Webhooks::Off => (None, None),
            Webhooks::On => {
                let netns = Arc::new(
                    netns::Netns::create().map_err(|e| ControlPlaneError::Io("making the control plane's network namespace".into(), e))?,
                );
                let proxy = netns::Proxy::start(netns.clone())
                    .map_err(|e| ControlPlaneError::Io("binding the API server's loopback proxy".into(), e))?;
                (Some(netns), Some(proxy))
            }
        };
        let enter = |command: &mut Command| {
            if let Some(netns) = &netns {
                netns.enter_on_exec(command);
            }
        };

        let etcd_log = dir.join("etcd.log");
        let etcd_data = dir.join("etcd");
        let (etcd_child, [client_port, _]) = start_on_free_ports("etcd", &etcd_log, ETCD_READY, |[client_port, peer_port]| {
            let etcd_url = format!("http://127.0.0.1:{client_port}");
            let peer_url = format!("http://127.0.0.1:{peer_port}");
            let _ = std::fs::remove_dir_all(&etcd_data);
            let mut etcd = Command::new(bin.join("etcd"));
            etcd.arg(format!("--data-dir={}", etcd_data.display()))
                .arg(format!("--listen-client-urls={etcd_url}"))
                .arg(format!("--advertise-client-urls={etcd_url}"))
                .arg(format!("--listen-peer-urls={peer_url}"))
                .arg(format!("--initial-advertise-peer-urls={peer_url}"))
                .arg(format!("--initial-cluster=default={peer_url}"))
                // envtest's choice: test data need not survive a crash.
                .arg("--unsafe-no-fsync=true")
                .arg("--log-level=warn");
            enter(&mut etcd);
            let child = process::spawn_logged(etcd, &etcd_log)?;
            let netns = netns.clone();
            Ok((child, move || match &netns {
                None => tools::http_get_ok(client_port, "/health"),
                Some(netns) => netns.http_get_ok(std::net::SocketAddr::from(([127, 0, 0, 1], client_port)), "/health"),
            }))
        })?;
        let etcd_url = format!("http://127.0.0.1:{client_port}");

        let apiserver_log = dir.join("kube-apiserver.log");
        let admin_kubeconfig = dir.join("admin.kubeconfig");
        let kubectl = bin.join("kubectl");
        let spawn_apiserver = |[port]: [u16; 1]| {
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
                .arg("--allow-privileged=true");
            // One-off observations on other Kubernetes versions (`cargo xtask kube-versions`) add
            // what their server needs: from 1.37 a loopback advertise address needs
            // `--endpoint-reconciler-type=none`.
            if let Some(extra) = std::env::var_os("TRAINER_AUDIT_APISERVER_EXTRA_ARGS") {
                apiserver.args(extra.to_string_lossy().split_whitespace());
            }
            match webhooks {
                Webhooks::Off => {
                    apiserver.arg("--disable-admission-plugins=ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook");
                }
                Webhooks::On => {
                    // A webhook Service is called at its EndpointSlice's address (the Pod IP in
                    // the namespace) with the certificate checked for `<service>.<namespace>.svc`.
                    apiserver.arg("--disable-admission-plugins=ServiceAccount").arg("--enable-aggregator-routing=true");
                }
            }
            enter(&mut apiserver);
            let child = process::spawn_logged(apiserver, &apiserver_log)?;
            let server = format!("https://127.0.0.1:{port}");
            let admin = tools::kubeconfig_certs(&server, &pki.ca_cert, &pki.admin_cert, &pki.admin_key, ADMIN_USER);
            std::fs::write(&admin_kubeconfig, admin)
                .map_err(|e| ControlPlaneError::Io(format!("writing {}", admin_kubeconfig.display()), e))?;
            let (kubectl, kubeconfig) = (kubectl.clone(), admin_kubeconfig.clone());
            Ok((child, move || tools::readyz(&kubectl, &kubeconfig)))
        };
        let (apiserver_child, port) = match &proxy {
            None => {
                let (child, [port]) = start_on_free_ports("kube-apiserver", &apiserver_log, APISERVER_READY, spawn_apiserver)?;
                (child, port)
            }
            // The proxy holds the host's port; inside the namespace nothing else can take it.
            Some(proxy) => {
                let (mut child, probe) = spawn_apiserver([proxy.port])?;
                if let Err(e) = process::wait_ready("kube-apiserver", &mut child, &apiserver_log, APISERVER_READY, probe) {
                    process::stop(&mut child, Duration::from_secs(5));
                    return Err(e);
                }
                (child, proxy.port)
            }
        };

        let controller_manager_log = dir.join("kube-controller-manager.log");
        let mut children = vec![etcd_child, apiserver_child];
        let mut kcm = Command::new(bin.join("kube-controller-manager"));
        let mut controllers: Vec<&str> = CONTROLLERS.to_vec();
        if webhooks == Webhooks::On {
            controllers.extend(WEBHOOK_CONTROLLERS);
        }
        kcm.arg(format!("--kubeconfig={}", admin_kubeconfig.display()))
            .arg(format!("--controllers={}", controllers.join(",")))
            .arg("--leader-elect=false")
            // No serving port at all: nothing here scrapes its metrics or health.
            .arg("--secure-port=0")
            .arg("--v=2");
        enter(&mut kcm);
        let mut kcm_child = process::spawn_logged(kcm, &controller_manager_log)?;
        let ready =
            process::wait_ready("kube-controller-manager", &mut kcm_child, &controller_manager_log, CONTROLLER_MANAGER_READY, || {
                controllers_started(&controller_manager_log, &controllers)
            });
        children.push(kcm_child);
        // Built before the readiness verdict so that a failure still stops every child on drop.
        let cp = ControlPlane {
            bin,
            dir,
            port,
            pki,
            admin_kubeconfig,
            startup: started.elapsed(),
            etcd_log,
            apiserver_log,
            controller_manager_log,
            netns,
            webhooks,
            children: Mutex::new(children),
            _proxy: proxy,
        };
        ready?;
        Ok(cp)
    }
}

/// kube-controller-manager is ready when every controller in [`CONTROLLERS`] is started and the
/// garbage collector has synced its monitors: its log (`--v=2`) then has `"Controller
/// starting..." controller="<name>"` for each and the collector's `"Proceeding to collect
/// garbage"` (k8s.io/kubernetes v1.36.1 `cmd/kube-controller-manager/app/controllermanager.go`,
/// `pkg/controller/garbagecollector/garbagecollector.go`).
fn controllers_started(log: &Path, controllers: &[&str]) -> Result<(), String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("reading {}: {e}", log.display()))?;
    let missing: Vec<&str> =
        controllers.iter().copied().filter(|name| !text.contains(&format!("\"Controller starting...\" controller=\"{name}\""))).collect();
    if !missing.is_empty() {
        return Err(format!("not started yet: {}", missing.join(", ")));
    }
    if !text.contains("Proceeding to collect garbage") {
        return Err("the garbage collector has not synced its monitors yet".into());
    }
    Ok(())
}

impl ControlPlane {
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
