//! The stand-in for the controllers and kubelet that the test control plane does not run. While a
//! test drives a real `helm install`/`upgrade` or `kubectl`, a [`StandIn`] polls one namespace
//! and does what the Kubernetes components would, so that waiting on them behaves as on a cluster:
//!
//! - **Job controller**: for each unfinished Job, create its Pod from the template exactly as the
//!   job controller does (`generateName`, the template's labels, a controller owner reference), so
//!   admission — Pod Security above all — decides for real. A rejected Pod is what the job
//!   controller meets too: it records a `FailedCreate` Warning Event on the Job with the API
//!   server's message and retries with backoff; the Job never fails for it, and whoever waits on
//!   it (Helm's hook wait) runs into its own timeout. An admitted Pod is bound to a node named
//!   [`NODE_NAME`] and run by the kubelet part ([`pod`], [`sandbox`]); a failed run is retried
//!   with a new Pod until `backoffLimit` failures (no backoff delay between attempts), after
//!   which the Job gets `FailureTarget` + `Failed` (reason `BackoffLimitExceeded`); a success
//!   gets `SuccessCriteriaMet` + `Complete` with `completionTime`, as the API server's Job status
//!   validation in 1.36 requires. Indexed Jobs, `podFailurePolicy`, `successPolicy` and
//!   parallel Pods are not modelled: Pods run one after another.
//! - **Deployment and ReplicaSet controllers**: once a Deployment's spec is stored, ask admission
//!   about its Pod template with a server-side dry-run Pod create (nothing is stored). Admitted:
//!   write the status the controller reaches with all replicas available (`observedGeneration`,
//!   replica counts, `Available=True`, `Progressing=True/NewReplicaSetAvailable`). Refused: write
//!   what the controller shows when its ReplicaSet cannot create Pods (`Available=False`,
//!   `ReplicaFailure=True/FailedCreate` with the API server's message) and ask again later. No
//!   ReplicaSet or Pod objects are made and no containers run.
//! - **Garbage collector**: only its part of an orphaning Deployment delete (`kubectl delete
//!   --cascade=orphan` waits for it): the `orphan` finalizer removed. Pods of deleted Jobs stay
//!   (they are inert).
//!
//! Everything the stand-in saw and did is kept as [`Record`]s for the test to assert on.

mod deployment;
mod job;
mod pod;
pub mod sandbox;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use kube::api::PatchParams;

use crate::controlplane::ControlPlane;

/// The node name Pods are bound to (no Node object exists; binding does not require one).
pub const NODE_NAME: &str = "standin-node";
/// How often the namespace is polled.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum StandInError {
    #[error("bubblewrap (bwrap) is not installed: `cargo xtask test` installs Debian's bubblewrap")]
    NoSandbox,
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("stand-in API call {0} failed: {1}")]
    Kube(String, String),
}

/// What the stand-in saw or did, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The API server refused the Job's Pod; `message` is its answer, verbatim.
    PodRejected {
        job: String,
        message: String,
    },
    /// An admitted Pod could not be started (missing ConfigMap, unsupported volume, …); it stays
    /// Pending as on a node, and the Job stays active.
    PodStuck {
        job: String,
        pod: String,
        reason: String,
    },
    /// A container ran to its end.
    ContainerRan {
        job: String,
        pod: String,
        container: String,
        exit_code: i32,
        output: String,
    },
    JobComplete {
        job: String,
    },
    JobFailed {
        job: String,
        reason: String,
    },
    DeploymentAvailable {
        name: String,
        generation: i64,
    },
    /// Admission refused the Deployment's Pod template (dry run); `message` is its answer.
    DeploymentPodRejected {
        name: String,
        message: String,
    },
    /// The stand-in's own API call failed (a bug in the stand-in or a broken control plane).
    Error {
        what: String,
        message: String,
    },
}

/// What the polling thread needs from the control plane.
#[derive(Debug, Clone)]
struct Context {
    namespace: String,
    kubeconfig: PathBuf,
    ca_cert: PathBuf,
    port: u16,
    scratch: PathBuf,
    shim_dir: PathBuf,
}

/// A running stand-in for one namespace; stops when dropped.
pub struct StandIn {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    records: Arc<Mutex<Vec<Record>>>,
}

impl StandIn {
    /// Starts polling `namespace` (which may not exist yet: `helm --create-namespace`).
    pub fn start(cp: &ControlPlane, namespace: &str) -> Result<StandIn, StandInError> {
        if !sandbox::available() {
            return Err(StandInError::NoSandbox);
        }
        let scratch = cp.scratch(&format!("standin-{namespace}"));
        let shim_dir = scratch.join("shims");
        sandbox::write_shims(&shim_dir, &cp.bin.join("kubectl"))
            .map_err(|e| StandInError::Io(format!("writing shims in {}", shim_dir.display()), e))?;
        let context = Context {
            namespace: namespace.to_string(),
            kubeconfig: cp.admin_kubeconfig.clone(),
            ca_cert: cp.pki.ca_cert.clone(),
            port: cp.port,
            scratch,
            shim_dir,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let records = Arc::new(Mutex::new(Vec::new()));
        let (thread_stop, thread_records) = (stop.clone(), records.clone());
        let thread = std::thread::Builder::new()
            .name(format!("standin-{namespace}"))
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(e) => return push(&thread_records, Record::Error { what: "tokio runtime".into(), message: e.to_string() }),
                };
                runtime.block_on(poll(context, thread_stop, thread_records));
            })
            .map_err(|e| StandInError::Io("starting the stand-in thread".into(), e))?;
        Ok(StandIn { stop, thread: Some(thread), records })
    }

    /// Everything recorded so far.
    pub fn records(&self) -> Vec<Record> {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Stops polling and returns the records.
    pub fn stop(mut self) -> Vec<Record> {
        self.halt();
        self.records()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.halt();
    }
}

fn push(records: &Mutex<Vec<Record>>, record: Record) {
    if let Ok(mut r) = records.lock() {
        r.push(record);
    }
}

async fn client(kubeconfig: &std::path::Path) -> Result<kube::Client, StandInError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| StandInError::Kube("reading the admin kubeconfig".into(), e.to_string()))?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .map_err(|e| StandInError::Kube("loading the admin kubeconfig".into(), e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| StandInError::Kube("building the client".into(), e.to_string()))
}

async fn poll(context: Context, stop: Arc<AtomicBool>, records: Arc<Mutex<Vec<Record>>>) {
    let client = match client(&context.kubeconfig).await {
        Ok(client) => client,
        Err(e) => return push(&records, Record::Error { what: "client".into(), message: e.to_string() }),
    };
    let mut jobs = job::Jobs::default();
    let mut deployments = deployment::Deployments::default();
    let mut last_error = String::new();
    while !stop.load(Ordering::SeqCst) {
        let outcome = async {
            deployments.tick(&client, &context, &records).await?;
            jobs.tick(&client, &context, &records).await
        }
        .await;
        if let Err(e) = outcome {
            // Report each distinct failure once; a namespace that does not exist yet is normal.
            let message = e.to_string();
            if message != last_error {
                push(&records, Record::Error { what: "poll".into(), message: message.clone() });
                last_error = message;
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

fn kube_err(what: &str, e: kube::Error) -> StandInError {
    let message = match &e {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    };
    StandInError::Kube(what.into(), message)
}

/// Field managers as on a cluster, where the API server names a manager after the client's user
/// agent: the product reads managedFields, so the stand-in's writes must look like theirs.
const CONTROLLER_MANAGER: &str = "kube-controller-manager";
const KUBELET: &str = "kubelet";

fn as_controller_patch() -> PatchParams {
    PatchParams { field_manager: Some(CONTROLLER_MANAGER.into()), ..Default::default() }
}

fn as_controller_post() -> kube::api::PostParams {
    kube::api::PostParams { field_manager: Some(CONTROLLER_MANAGER.into()), ..Default::default() }
}

fn as_kubelet_patch() -> PatchParams {
    PatchParams { field_manager: Some(KUBELET.into()), ..Default::default() }
}

fn as_kubelet_post() -> kube::api::PostParams {
    kube::api::PostParams { field_manager: Some(KUBELET.into()), ..Default::default() }
}

fn now() -> serde_json::Value {
    let time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    serde_json::to_value(time).unwrap_or(serde_json::Value::Null)
}
