//! The kubelet part for a controller's Pod (a Deployment's long-running Pod whose image is one
//! `cargo xtask controlplane` built, e.g. `…/trainer-controller-manager:v2.3.0` →
//! `trainer-controller-manager-v2.3.0`), on a control plane with admission webhooks on: the
//! real binary runs as the Pod's container does — the Pod's own command and arguments, its
//! volumes (the chart's `--config` ConfigMap, the webhook certificate Secret), a TokenRequest
//! token of the Pod's ServiceAccount, the in-cluster environment — in the sandbox (a private
//! `/tmp`, where Trainer's cert rotator writes) in a network namespace of the Pod's own joined to
//! the control plane's by a veth pair, with a Pod IP of its own
//! (`crate::controlplane::netns::Netns::pod_network`).
//!
//! Which binary: `<image repository's last segment>-<tag>` when built
//! (`…/trainer-controller-manager:v2.2.1` → `trainer-controller-manager-v2.2.1`), else, for an
//! image tagged as no release is (the Trainer charts' JobSet subchart ships `…/jobset/jobset:main`),
//! `<segment>-v<the Pod's app.kubernetes.io/version label>` (`jobset-v0.12.0`, the subchart's
//! version, which is the JobSet release it packages). A name the test declared an alias of a
//! built one runs that one ([`crate::standin::StandIn::start_aliased`]: the relabelled charts
//! 2.3.1 and 2.4.0, repackaged from 2.3.0, run the 2.3.0 manager).
//!
//! As a kubelet does, the stand-in keeps the Secret volumes in step with their Secrets (the
//! rotator writes the certificate into the Secret and waits to see it in the mounted
//! directory), reports the Pod Running with that Pod IP at once and Ready when the container's
//! `readinessProbe` (`httpGet`) answers 200 — then kube-controller-manager's
//! endpointslice-controller publishes the IP and the API server sends webhook calls there — and
//! stops the process when the Pod is deleted. Each Pod has its own network, so a rollout runs as
//! in a cluster: the new Pod's process starts beside the old one, which serves (webhooks
//! included) until the deployment controller deletes its Pod once the new one is Ready. A process
//! that exits by itself is recorded, its Pod reported not ready, and it is started again after the
//! kubelet's crash-loop back-off (10 s, doubling, at most 5 min; `restartCount` counts), as
//! `restartPolicy: Always` does: a manager that loses its leader-election lease on a loaded
//! machine exits and comes back, as in a cluster.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod, Secret};
use kube::api::Patch;
use kube::Api;

use super::pod::{self, Prepare};
use super::sandbox::{self, Mount};
use super::{kube_err, now, push, Context, Record, StandInError};
use crate::controlplane::netns::Netns;
use crate::controlplane::process;

/// The ENTRYPOINT of every controller image built here: Trainer's
/// (`cmd/trainer-controller-manager/Dockerfile`, v2.0.0 to v2.3.0), JobSet's and Kueue's
/// (`Dockerfile` at each tag built).
pub const ENTRYPOINT: &str = "/manager";

/// The built binaries: the bin directory, and names that stand for another built binary.
#[derive(Debug, Clone, Default)]
pub struct Binaries {
    pub dir: PathBuf,
    /// (name asked for, built binary it runs).
    pub aliases: BTreeMap<String, String>,
}

impl Binaries {
    /// The built binary `name`, or the one it is an alias of.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        let name = self.aliases.get(name).map(String::as_str).unwrap_or(name);
        let path = self.dir.join(name);
        if !path.is_file() {
            crate::controlplane::wait_for_build(&self.dir);
        }
        path.is_file().then_some(path)
    }
}

/// The binary built for a container image: `<repository's last segment>-<tag>` in the bin dir.
pub fn binary_for(bin: &Binaries, container: &Container) -> Option<PathBuf> {
    let image = container.image.as_deref()?;
    let (repository, tag) = image.rsplit_once(':')?;
    let name = repository.rsplit('/').next()?;
    bin.find(&format!("{name}-{tag}"))
}

/// [`binary_for`], else `<segment>-v<version>` from the Pod's `app.kubernetes.io/version` label
/// when the image's tag names no built binary (a chart shipping a `main` or `latest` tag).
pub fn binary_for_pod(bin: &Binaries, pod: &Pod, container: &Container) -> Option<PathBuf> {
    if let Some(path) = binary_for(bin, container) {
        return Some(path);
    }
    let version = pod.metadata.labels.as_ref()?.get("app.kubernetes.io/version")?;
    let (repository, _) = container.image.as_deref()?.rsplit_once(':')?;
    let name = repository.rsplit('/').next()?;
    bin.find(&format!("{name}-v{}", version.trim_start_matches('v')))
}

/// A Pod whose container this module runs, if any: the first container with a built binary.
pub fn runnable(context: &Context, pod: &Pod) -> Option<(Container, PathBuf)> {
    context.netns.as_ref()?;
    let spec = pod.spec.as_ref()?;
    spec.containers.iter().find_map(|c| binary_for_pod(&context.bin, pod, c).map(|b| (c.clone(), b)))
}

/// A controller process the stand-in started.
struct Running {
    pod: String,
    container: String,
    binary: String,
    /// The network namespace it runs in and its Pod IP there.
    netns: Arc<Netns>,
    /// The control plane's namespace, which holds the Pod's network until the Pod is gone.
    control_plane: Option<Arc<Netns>>,
    ip: String,
    child: Child,
    /// The sandbox's arguments, to start the process again after it exits.
    args: Vec<String>,
    /// Where its log goes (`<container>.log`, then `<container>.<restart>.log`).
    dir: PathBuf,
    /// Restarts so far, and when the next one is due while the process is down.
    restarts: u32,
    down_until: Option<Instant>,
    log: PathBuf,
    /// Secret volumes to keep in step: (Secret name, directory bound into the sandbox).
    secrets: Vec<(String, PathBuf)>,
    /// `readinessProbe.httpGet`: (port, path).
    probe: Option<(u16, String)>,
    ready: bool,
}

/// The controller processes, keyed by Pod UID.
#[derive(Default)]
pub struct Controllers {
    running: BTreeMap<String, Running>,
}

impl Drop for Controllers {
    /// The stand-in stopping is the node going away: its processes stop with it.
    fn drop(&mut self) {
        for running in self.running.values_mut() {
            process::stop(&mut running.child, Duration::from_secs(10));
        }
    }
}

impl std::fmt::Debug for Controllers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.running.values().map(|r| (&r.pod, &r.binary, r.ready))).finish()
    }
}

fn probe_of(container: &Container) -> Option<(u16, String)> {
    let get = container.readiness_probe.as_ref()?.http_get.as_ref()?;
    let port = match &get.port {
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => u16::try_from(*n).ok()?,
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(name) => {
            let port = container.ports.iter().flatten().find(|p| p.name.as_deref() == Some(name.as_str()))?;
            u16::try_from(port.container_port).ok()?
        }
    };
    Some((port, get.path.clone().unwrap_or_else(|| "/".into())))
}

impl Controllers {
    /// Starts the Pod's controller. `Ok(Some(reason))` leaves it Pending (a missing volume).
    pub async fn start(
        &mut self,
        client: &kube::Client,
        context: &Context,
        records: &Mutex<Vec<Record>>,
        pod: &Pod,
        container: &Container,
        binary: &Path,
    ) -> Result<Option<String>, StandInError> {
        let Some(netns) = context.netns.clone() else { return Ok(Some("no network namespace".into())) };
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let dir = context.scratch.join(&name);
        // A container without `command` runs its image's ENTRYPOINT (the kustomize overlays give
        // none); every controller image built here has `ENTRYPOINT ["/manager"]`.
        let mut pod = pod.clone();
        if let Some(c) = pod.spec.iter_mut().flat_map(|s| s.containers.iter_mut()).find(|c| c.name == container.name) {
            if c.command.as_ref().is_none_or(|command| command.is_empty()) {
                c.command = Some(vec![ENTRYPOINT.to_string()]);
            }
        }
        let pod = &pod;
        let runs = match pod::prepare(client, context, pod, &dir).await {
            Ok(runs) => runs,
            Err(Prepare::Stuck(reason)) => return Ok(Some(reason)),
            Err(Prepare::Fatal(e)) => return Err(e),
        };
        let Some((_, _, mut run)) = runs.into_iter().find(|(init, c, _)| !init && c.name == container.name) else {
            return Ok(Some(format!("container \"{}\" not prepared", container.name)));
        };
        // The image's binary at the path the Pod's command names.
        let Some(entry) = run.argv.first().cloned() else { return Ok(Some("no command".into())) };
        run.mounts.push(Mount { source: binary.to_path_buf(), target: entry, read_only: true });
        run.env.retain(|(k, _)| k != "POD_IP");
        let binary_name = binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let network = netns
            .pod_network(&uid, context.port)
            .map_err(|e| StandInError::Io(format!("making the network namespace of Pod {name}"), e))?;
        let (netns, ip) = (network.netns.clone(), network.ip.clone());
        let control_plane = context.netns.clone();
        let secrets: Vec<(String, PathBuf)> = pod
            .spec
            .iter()
            .flat_map(|s| s.volumes.iter().flatten())
            .filter_map(|v| {
                let secret = v.secret.as_ref()?;
                // Volumes with `items` are written once (none of the charts' controllers use them).
                secret.items.is_none().then(|| (secret.secret_name.clone().unwrap_or_default(), dir.join("volumes").join(&v.name)))
            })
            .collect();
        let log = dir.join(format!("{}.log", container.name));
        let args = sandbox::bwrap_args(&run);
        let mut command = std::process::Command::new("bwrap");
        command.args(&args);
        netns.enter_on_exec(&mut command);
        let child = process::spawn_logged(command, &log)
            .map_err(|e| StandInError::Io(format!("starting {binary_name}"), std::io::Error::other(e.to_string())))?;
        push(records, Record::ControllerStarted { pod: name.clone(), binary: binary_name.clone(), argv: run.argv.clone() });
        let started = now();
        let patch = serde_json::json!({"status": {"phase": "Running", "startTime": started, "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                {"type": "Initialized", "status": "True", "lastTransitionTime": started},
                {"type": "Ready", "status": "False", "lastTransitionTime": started},
                {"type": "ContainersReady", "status": "False", "lastTransitionTime": started}],
            "containerStatuses": [{"name": container.name, "image": container.image.clone().unwrap_or_default(), "imageID": "",
                "ready": false, "started": true, "restartCount": 0, "state": {"running": {"startedAt": started}}}]}});
        let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
        pods.patch_status(&name, &super::as_kubelet_patch(), &Patch::Merge(&patch))
            .await
            .map_err(|e| kube_err(&format!("Pod {name} Running"), e))?;
        self.running.insert(
            uid,
            Running {
                pod: name,
                container: container.name.clone(),
                binary: binary_name,
                netns,
                control_plane,
                ip,
                child,
                args,
                dir: dir.clone(),
                restarts: 0,
                down_until: None,
                log,
                secrets,
                probe: probe_of(container),
                ready: false,
            },
        );
        Ok(None)
    }

    /// Stops the process of a Pod being deleted.
    pub fn stop(&mut self, uid: &str, records: &Mutex<Vec<Record>>) {
        if let Some(mut running) = self.running.remove(uid) {
            process::stop(&mut running.child, Duration::from_secs(10));
            if let Some(control_plane) = &running.control_plane {
                control_plane.release(uid);
            }
            push(records, Record::ControllerStopped { pod: running.pod, why: "its Pod was deleted".into() });
        }
    }

    /// Each poll: an exited process is recorded and started again when its back-off is over;
    /// Secret volumes follow their Secrets; a passing readiness probe makes the Pod Ready.
    pub async fn tick(&mut self, client: &kube::Client, context: &Context, records: &Mutex<Vec<Record>>) -> Result<(), StandInError> {
        if context.netns.is_none() {
            return Ok(());
        }
        let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &context.namespace);
        for running in self.running.values_mut() {
            if let Some(due) = running.down_until {
                if Instant::now() < due {
                    continue;
                }
                running.restarts += 1;
                running.log = running.dir.join(format!("{}.{}.log", running.container, running.restarts));
                let mut command = std::process::Command::new("bwrap");
                command.args(&running.args);
                running.netns.enter_on_exec(&mut command);
                running.child = process::spawn_logged(command, &running.log)
                    .map_err(|e| StandInError::Io(format!("restarting {}", running.binary), std::io::Error::other(e.to_string())))?;
                running.down_until = None;
                running.ready = false;
                push(records, Record::ControllerRestarted { pod: running.pod.clone(), restart_count: running.restarts });
                let patch = serde_json::json!({"status": {"containerStatuses": [{"name": running.container, "ready": false,
                    "restartCount": running.restarts, "state": {"running": {"startedAt": now()}}}]}});
                let _ = pods.patch_status(&running.pod, &super::as_kubelet_patch(), &Patch::Strategic(&patch)).await;
                continue;
            }
            if let Ok(Some(status)) = running.child.try_wait() {
                use std::os::unix::process::ExitStatusExt;
                let code = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(9));
                push(
                    records,
                    Record::ControllerExited { pod: running.pod.clone(), exit_code: code, output: process::log_tail(&running.log, 40) },
                );
                // The kubelet's crash-loop back-off: 10 s, doubled per restart, at most 5 min.
                let backoff = Duration::from_secs(10u64.saturating_mul(1 << running.restarts.min(5)).min(300));
                running.down_until = Some(Instant::now() + backoff);
                let patch = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now()},
                    {"type": "ContainersReady", "status": "False", "lastTransitionTime": now()}],
                    "containerStatuses": [{"name": running.container, "ready": false}]}});
                let _ = pods.patch_status(&running.pod, &super::as_kubelet_patch(), &Patch::Strategic(&patch)).await;
                continue;
            }
            for (secret, dir) in &running.secrets {
                if let Some(s) = secrets.get_opt(secret).await.map_err(|e| kube_err(&format!("reading Secret {secret}"), e))? {
                    for (key, bytes) in s.data.unwrap_or_default() {
                        sync_file(dir, &key, &bytes.0).map_err(|e| StandInError::Io(format!("updating volume {}", dir.display()), e))?;
                    }
                }
            }
            if running.ready {
                continue;
            }
            let ready = match &running.probe {
                Some((port, path)) => {
                    let addr: SocketAddr = format!("{}:{port}", running.ip)
                        .parse()
                        .map_err(|e| StandInError::Io("Pod IP".into(), std::io::Error::other(format!("{e}"))))?;
                    running.netns.http_get_ok(addr, path).is_ok()
                }
                None => true,
            };
            if ready {
                running.ready = true;
                let at = now();
                // Strategic merge: conditions merge by type, container statuses by name.
                let patch = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at},
                    {"type": "ContainersReady", "status": "True", "lastTransitionTime": at}],
                    "containerStatuses": [{"name": running.container, "ready": true}]}});
                pods.patch_status(&running.pod, &super::as_kubelet_patch(), &Patch::Strategic(&patch))
                    .await
                    .map_err(|e| kube_err(&format!("Pod {} Ready", running.pod), e))?;
                push(records, Record::ControllerReady { pod: running.pod.clone() });
            }
        }
        Ok(())
    }
}

/// Writes `key` into `dir` when its bytes differ (rename over the old file, as atomically as a
/// kubelet's projection).
fn sync_file(dir: &Path, key: &str, bytes: &[u8]) -> std::io::Result<()> {
    if key.contains('/') || key == ".." {
        return Ok(());
    }
    let path = dir.join(key);
    if std::fs::read(&path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("..{key}.tmp"));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(image: &str) -> Container {
        Container { name: "manager".into(), image: Some(image.into()), ..Default::default() }
    }

    #[test]
    fn an_image_maps_to_its_built_binary_only_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trainer-controller-manager-v2.3.0"), b"").unwrap();
        let bin = Binaries { dir: dir.path().to_path_buf(), ..Default::default() };
        assert_eq!(
            binary_for(&bin, &container("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0")),
            Some(dir.path().join("trainer-controller-manager-v2.3.0"))
        );
        assert_eq!(binary_for(&bin, &container("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.1")), None);
        assert_eq!(binary_for(&bin, &container("registry.k8s.io/jobset/jobset:v0.12.0")), None);
        assert_eq!(binary_for(&bin, &container("no-tag")), None);
    }

    #[test]
    fn an_alias_runs_the_binary_it_names_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trainer-controller-manager-v2.3.0"), b"").unwrap();
        let aliases = [("trainer-controller-manager-v2.4.0".to_string(), "trainer-controller-manager-v2.3.0".to_string())].into();
        let bin = Binaries { dir: dir.path().to_path_buf(), aliases };
        assert_eq!(
            binary_for(&bin, &container("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.4.0")),
            Some(dir.path().join("trainer-controller-manager-v2.3.0"))
        );
        assert_eq!(binary_for(&bin, &container("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.1")), None);
    }

    #[test]
    fn a_main_tagged_image_maps_by_the_pods_chart_version() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("jobset-v0.12.0"), b"").unwrap();
        let bin = Binaries { dir: dir.path().to_path_buf(), ..Default::default() };
        let image = container("us-central1-docker.pkg.dev/k8s-staging-images/jobset/jobset:main");
        let mut pod = Pod::default();
        assert_eq!(binary_for_pod(&bin, &pod, &image), None);
        pod.metadata.labels = Some([("app.kubernetes.io/version".to_string(), "0.12.0".to_string())].into());
        assert_eq!(binary_for_pod(&bin, &pod, &image), Some(dir.path().join("jobset-v0.12.0")));
        pod.metadata.labels = Some([("app.kubernetes.io/version".to_string(), "0.11.0".to_string())].into());
        assert_eq!(binary_for_pod(&bin, &pod, &image), None);
    }
}
