//! The stand-in for the node side of a cluster, which the test control plane does not run: the
//! scheduler's binding and the kubelet. kube-controller-manager runs for real beside the API server
//! (its job, deployment, ReplicaSet, garbage-collector and namespace controllers, see
//! `crate::controlplane`); a [`StandIn`] polls one namespace and
//!
//! - creates the Node [`NODE_NAME`] (once per control plane), Ready, with room for any Pod;
//! - binds each unbound Pod of the namespace to it ([`kubelet`]);
//! - runs a Pod that runs to completion (a Job's: `restartPolicy` `Never`/`OnFailure`) — volumes
//!   laid out, its containers' commands run one after another in the sandbox ([`pod`],
//!   [`sandbox`]) — and writes its phase, so the real job controller counts it, retries it
//!   with its own backoff, and completes or fails the Job;
//! - reports a long-running Pod (a Deployment's) started and ready once the ConfigMaps and
//!   Secrets its volumes name exist, without running its image: the real ReplicaSet and
//!   deployment controllers then make the Deployment available;
//! - completes the deletion of a Pod being deleted (grace period 0), as a kubelet does once its
//!   containers are stopped, so cascading deletes, rollouts and namespace deletion finish.
//!
//! Pods of other namespaces are left alone (another stand-in may serve them). What the
//! controllers did is observed and kept as [`Record`]s for the test to assert on ([`observe`]),
//! beside what the stand-in itself did.

mod controller;
mod kubelet;
mod observe;
mod pod;
pub mod sandbox;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams};
use kube::Api;

use crate::controlplane::ControlPlane;

/// The node Pods are bound to.
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
    /// The job controller could not create the Job's Pod (its `FailedCreate` Event); `message` is
    /// the API server's answer, verbatim.
    PodRejected {
        job: String,
        message: String,
    },
    /// A Pod could not be started (missing ConfigMap, unsupported volume, …); it stays Pending as
    /// on a node (a Job's stays active; a Deployment's is offered again on the next poll).
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
    /// The Deployment's ReplicaSet could not create Pods (`ReplicaFailure`); `message` is the
    /// condition's, which quotes the API server's answer.
    DeploymentPodRejected {
        name: String,
        message: String,
    },
    /// A controller's real binary was started for its Pod ([`controller`], webhooks on).
    ControllerStarted {
        pod: String,
        binary: String,
        argv: Vec<String>,
    },
    /// Its readiness probe answered 200: the Pod was reported Ready.
    ControllerReady {
        pod: String,
    },
    /// The process exited by itself; `output` is the end of its log.
    ControllerExited {
        pod: String,
        exit_code: i32,
        output: String,
    },
    /// An exited process was started again after its back-off (`restartPolicy: Always`).
    ControllerRestarted {
        pod: String,
        restart_count: u32,
    },
    /// The stand-in stopped it (its Pod deleted, or a newer Pod of the same binary started).
    ControllerStopped {
        pod: String,
        why: String,
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
    /// The control plane's bin directory (controllers' binaries) and the test's aliases.
    bin: controller::Binaries,
    /// The control plane's network namespace when webhooks are on: controller Pods run there.
    netns: Option<Arc<crate::controlplane::netns::Netns>>,
}

/// A running stand-in for one namespace; stops when dropped.
pub struct StandIn {
    /// Where the Pods' files live (`<pod>/<container>.log` for a controller's output).
    scratch: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    records: Arc<Mutex<Vec<Record>>>,
}

impl StandIn {
    /// Starts polling `namespace` (which may not exist yet: `helm --create-namespace`).
    pub fn start(cp: &ControlPlane, namespace: &str) -> Result<StandIn, StandInError> {
        Self::start_aliased(cp, namespace, std::collections::BTreeMap::new())
    }

    /// [`Self::start`], where a controller image whose binary is named in `aliases` (e.g.
    /// `trainer-controller-manager-v2.4.0`, a relabelled chart's image) runs the built binary it
    /// maps to (`trainer-controller-manager-v2.3.0`).
    pub fn start_aliased(
        cp: &ControlPlane,
        namespace: &str,
        aliases: std::collections::BTreeMap<String, String>,
    ) -> Result<StandIn, StandInError> {
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
            scratch: scratch.clone(),
            shim_dir,
            bin: controller::Binaries { dir: cp.bin.clone(), aliases },
            netns: cp.netns.clone(),
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
        Ok(StandIn { scratch, stop, thread: Some(thread), records })
    }

    /// What a controller Pod's container wrote, every run in order (`kubectl logs` and
    /// `--previous` together): `<container>.log`, then `<container>.<restart>.log`.
    pub fn controller_log(&self, pod: &str, container: &str) -> String {
        let dir = self.scratch.join(pod);
        let mut runs: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix(container)?.strip_suffix(".log")?;
                let restart = if rest.is_empty() { 0 } else { rest.strip_prefix('.')?.parse().ok()? };
                Some((restart, e.path()))
            })
            .collect();
        runs.sort();
        runs.iter().map(|(_, path)| std::fs::read_to_string(path).unwrap_or_default()).collect::<Vec<_>>().join("")
    }

    /// What every controller Pod's containers wrote so far: (Pod, its logs, every run in order).
    pub fn controller_logs(&self) -> Vec<(String, String)> {
        let mut pods: Vec<String> = std::fs::read_dir(&self.scratch)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        pods.sort();
        pods.into_iter()
            .filter_map(|pod| {
                let mut containers: Vec<String> = std::fs::read_dir(self.scratch.join(&pod))
                    .ok()?
                    .flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        let stem = name.strip_suffix(".log")?;
                        Some(stem.split('.').next().unwrap_or(stem).to_string())
                    })
                    .collect();
                containers.sort();
                containers.dedup();
                let logs: String = containers.iter().map(|c| self.controller_log(&pod, c)).collect();
                (!logs.is_empty()).then_some((pod, logs))
            })
            .collect()
    }

    /// The live record list, for a test that watches it from another thread while a command
    /// runs (a timeline of what the controllers did during an upgrade).
    pub fn shared_records(&self) -> Arc<Mutex<Vec<Record>>> {
        self.records.clone()
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
    let mut kubelet = kubelet::Kubelet::default();
    let mut observer = observe::Observer::default();
    let mut last_error = String::new();
    let mut node_ready = false;
    while !stop.load(Ordering::SeqCst) {
        let outcome = async {
            if !node_ready {
                ensure_node(&client).await?;
                node_ready = true;
            }
            kubelet.tick(&client, &context, &records).await?;
            observer.tick(&client, &context, &records).await
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

/// The Node [`NODE_NAME`], Ready, created once per control plane (a second stand-in finds it).
/// No kubelet heartbeats follow: the node lifecycle controller does not run.
async fn ensure_node(client: &kube::Client) -> Result<(), StandInError> {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = serde_json::json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE_NAME, "labels": {"kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}}});
    let node: Node = serde_json::from_value(node).map_err(|e| StandInError::Kube("the Node object".into(), e.to_string()))?;
    match nodes.create(&as_kubelet_post(), &node).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => return Ok(()),
        Err(e) => return Err(kube_err(&format!("creating Node {NODE_NAME}"), e)),
    }
    let now = now();
    let room = serde_json::json!({"cpu": "64", "memory": "256Gi", "pods": "250", "ephemeral-storage": "1Ti"});
    let status = serde_json::json!({"status": {"capacity": room, "allocatable": room,
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": NODE_NAME}],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "the test stand-in is ready",
            "lastHeartbeatTime": now, "lastTransitionTime": now}]}});
    nodes.patch_status(NODE_NAME, &as_kubelet_patch(), &Patch::Merge(&status)).await.map_err(|e| kube_err("Node status", e))?;
    Ok(())
}

/// Field managers as on a cluster, where the API server names a manager after the client's user
/// agent: the product reads managedFields, so the stand-in's writes must look like theirs.
const KUBELET: &str = "kubelet";
const SCHEDULER: &str = "kube-scheduler";

fn as_scheduler_post() -> kube::api::PostParams {
    kube::api::PostParams { field_manager: Some(SCHEDULER.into()), ..Default::default() }
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
