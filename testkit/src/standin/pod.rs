//! The kubelet part of the stand-in for one bound Pod that runs to completion (`restartPolicy`
//! `Never` or `OnFailure`, a Job's): lay out
//! its volumes (ConfigMap, Secret, emptyDir, projected ServiceAccount token) and the
//! ServiceAccount credentials at `/var/run/secrets/kubernetes.io/serviceaccount` (a token from
//! TokenRequest bound to the Pod, `ca.crt`, `namespace`), set the in-cluster environment, run the
//! init containers and then the containers one by one, and write the Pod's status.
//!
//! Anything a node would fail to start (a missing ConfigMap or ServiceAccount, a volume type not
//! modelled here, a container without `command`, whose image entrypoint is unknown without the
//! image) leaves the Pod Pending: on a cluster the Pod would sit in ContainerCreating and its Job
//! would never finish either.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Container, KeyToPath, Pod, Secret, ServiceAccount};
use kube::api::Patch;
use kube::Api;

use super::sandbox::{self, Mount, Run};
use super::{kube_err, now, push, Context, Record, StandInError};

const SA_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// A container without `activeDeadlineSeconds` is stopped after this long.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

pub enum Outcome {
    Succeeded,
    Failed,
    Stuck(String),
}

/// Files of a volume: relative path → bytes.
type Files = BTreeMap<String, Vec<u8>>;

pub async fn run(
    client: &kube::Client,
    context: &Context,
    records: &Mutex<Vec<Record>>,
    job: &str,
    pod: &Pod,
) -> Result<Outcome, StandInError> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
    let dir = context.scratch.join(&name);
    let spec = pod.spec.clone().unwrap_or_default();
    let runs = match prepare(client, context, pod, &dir).await {
        Ok(runs) => runs,
        Err(Prepare::Stuck(reason)) => return Ok(Outcome::Stuck(reason)),
        Err(Prepare::Fatal(e)) => return Err(e),
    };
    let started = now();
    let patch = serde_json::json!({"status": {"phase": "Running", "startTime": started, "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
        "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": started}]}});
    pods.patch_status(&name, &super::as_kubelet_patch(), &Patch::Merge(&patch))
        .await
        .map_err(|e| kube_err(&format!("Pod {name} Running"), e))?;

    let timeout = spec.active_deadline_seconds.map(|s| Duration::from_secs(s.max(1) as u64)).unwrap_or(DEFAULT_TIMEOUT);
    let mut statuses = (Vec::new(), Vec::new());
    let mut all_ok = true;
    for (is_init, container, mut run) in runs {
        run.timeout = timeout;
        let scratch = dir.join(format!("run-{}", container.name));
        std::fs::create_dir_all(&scratch).map_err(|e| StandInError::Io(format!("creating {}", scratch.display()), e))?;
        let container_started = now();
        let exit = if all_ok {
            sandbox::execute(&run, &scratch)
                .map_err(|e| StandInError::Io(format!("running container {} of Pod {name} with bwrap", container.name), e))?
        } else {
            continue;
        };
        push(
            records,
            Record::ContainerRan {
                job: job.into(),
                pod: name.clone(),
                container: container.name.clone(),
                exit_code: exit.code,
                output: exit.output.clone(),
            },
        );
        all_ok = exit.code == 0;
        let status = serde_json::json!({"name": container.name, "image": container.image.clone().unwrap_or_default(), "imageID": "",
            "ready": false, "restartCount": 0, "started": false,
            "state": {"terminated": {"exitCode": exit.code, "reason": if exit.timed_out { "DeadlineExceeded" } else if exit.code == 0 { "Completed" } else { "Error" },
                "startedAt": container_started, "finishedAt": now()}}});
        if is_init {
            statuses.0.push(status)
        } else {
            statuses.1.push(status)
        }
    }
    let phase = if all_ok { "Succeeded" } else { "Failed" };
    let patch = serde_json::json!({"status": {"phase": phase, "initContainerStatuses": statuses.0, "containerStatuses": statuses.1}});
    pods.patch_status(&name, &super::as_kubelet_patch(), &Patch::Merge(&patch))
        .await
        .map_err(|e| kube_err(&format!("Pod {name} {phase}"), e))?;
    Ok(if all_ok { Outcome::Succeeded } else { Outcome::Failed })
}

/// A long-running Pod (`restartPolicy: Always`, a Deployment's): no image is run, so once the
/// volumes a node would need exist, the Pod is reported started and ready as a kubelet reports a
/// container that passes its probes. `Some(reason)` while a volume's ConfigMap or Secret is
/// missing (the Pod stays Pending, as in `ContainerCreating`).
pub async fn serve(client: &kube::Client, context: &Context, pod: &Pod) -> Result<Option<String>, StandInError> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let spec = pod.spec.clone().unwrap_or_default();
    for volume in spec.volumes.clone().unwrap_or_default() {
        let missing = if let Some(cm) = &volume.config_map {
            let found = match config_map(client, context, &cm.name, None, cm.optional.unwrap_or(false)).await {
                Ok(found) => found.is_some(),
                Err(Prepare::Fatal(e)) => return Err(e),
                Err(Prepare::Stuck(_)) => false,
            };
            (!found).then(|| format!("configmap \"{}\" not found", cm.name))
        } else if let Some(secret) = &volume.secret {
            let secret_name = secret.secret_name.clone().unwrap_or_default();
            let found = match secret_files(client, context, &secret_name, None, secret.optional.unwrap_or(false)).await {
                Ok(found) => found.is_some(),
                Err(Prepare::Fatal(e)) => return Err(e),
                Err(Prepare::Stuck(_)) => false,
            };
            (!found).then(|| format!("secret \"{secret_name}\" not found"))
        } else {
            None
        };
        if let Some(missing) = missing {
            return Ok(Some(format!("MountVolume.SetUp failed for volume \"{}\": {missing}", volume.name)));
        }
    }
    let now = now();
    let condition = |kind: &str| serde_json::json!({"type": kind, "status": "True", "lastTransitionTime": now});
    let statuses: Vec<serde_json::Value> = spec
        .containers
        .iter()
        .map(|c| {
            serde_json::json!({"name": c.name, "image": c.image.clone().unwrap_or_default(), "imageID": "", "ready": true,
                "started": true, "restartCount": 0, "state": {"running": {"startedAt": now}}})
        })
        .collect();
    let patch = serde_json::json!({"status": {"phase": "Running", "startTime": now, "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
        "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}],
        "conditions": [condition("PodReadyToStartContainers"), condition("Initialized"), condition("Ready"), condition("ContainersReady"), condition("PodScheduled")],
        "containerStatuses": statuses}});
    let pods: Api<Pod> = Api::namespaced(client.clone(), &context.namespace);
    pods.patch_status(&name, &super::as_kubelet_patch(), &Patch::Merge(&patch))
        .await
        .map_err(|e| kube_err(&format!("Pod {name} Ready"), e))?;
    Ok(None)
}

pub(super) enum Prepare {
    Stuck(String),
    Fatal(StandInError),
}

impl From<StandInError> for Prepare {
    fn from(e: StandInError) -> Self {
        Prepare::Fatal(e)
    }
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Prepare {
    move |e| Prepare::Fatal(StandInError::Io(what, e))
}

/// Volumes on disk and one [`Run`] per container (init containers first).
pub(super) async fn prepare(
    client: &kube::Client,
    context: &Context,
    pod: &Pod,
    dir: &Path,
) -> Result<Vec<(bool, Container, Run)>, Prepare> {
    let spec = pod.spec.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let mut volumes: BTreeMap<String, PathBuf> = BTreeMap::new();
    for volume in spec.volumes.clone().unwrap_or_default() {
        let files = if let Some(cm) = &volume.config_map {
            match config_map(client, context, &cm.name, cm.items.as_deref(), cm.optional.unwrap_or(false)).await? {
                Some(files) => files,
                None => {
                    return Err(Prepare::Stuck(format!(
                        "MountVolume.SetUp failed for volume \"{}\": configmap \"{}\" not found",
                        volume.name, cm.name
                    )))
                }
            }
        } else if let Some(secret) = &volume.secret {
            let secret_name = secret.secret_name.clone().unwrap_or_default();
            match secret_files(client, context, &secret_name, secret.items.as_deref(), secret.optional.unwrap_or(false)).await? {
                Some(files) => files,
                None => {
                    return Err(Prepare::Stuck(format!(
                        "MountVolume.SetUp failed for volume \"{}\": secret \"{secret_name}\" not found",
                        volume.name
                    )))
                }
            }
        } else if volume.empty_dir.is_some() {
            Files::new()
        } else {
            return Err(Prepare::Stuck(format!(
                "volume \"{}\": only configMap, secret and emptyDir volumes are modelled by the stand-in",
                volume.name
            )));
        };
        let path = dir.join("volumes").join(&volume.name);
        write_files(&path, &files).map_err(io(format!("writing volume {}", path.display())))?;
        volumes.insert(volume.name.clone(), path);
    }

    let mut sa_mount = None;
    let sa_name = spec.service_account_name.clone().unwrap_or_else(|| "default".into());
    let sa_api: Api<ServiceAccount> = Api::namespaced(client.clone(), &context.namespace);
    let account = match sa_api.get_opt(&sa_name).await.map_err(|e| kube_err(&format!("reading ServiceAccount {sa_name}"), e))? {
        Some(account) => account,
        None => return Err(Prepare::Stuck(format!("serviceaccount \"{sa_name}\" not found"))),
    };
    let automount = spec.automount_service_account_token.or(account.automount_service_account_token).unwrap_or(true);
    if automount {
        // Bound to the Pod only when the Pod names its ServiceAccount: the API server binds a token
        // to a Pod of the same ServiceAccount only, and without the ServiceAccount admission plugin
        // (off here, see `crate::controlplane`) nothing defaults an unnamed one to `default` in
        // the Pod's spec — as the Pods the JobSet controller creates, which name none, show.
        let named = spec.service_account_name.as_deref().is_some_and(|n| !n.is_empty());
        let bound = named.then(|| (name.as_str(), pod.metadata.uid.as_deref().unwrap_or_default()));
        let token = token(client, context, &sa_name, bound).await?;
        let ca = std::fs::read(&context.ca_cert).map_err(io(format!("reading {}", context.ca_cert.display())))?;
        let files: Files = [
            ("token".to_string(), token.into_bytes()),
            ("ca.crt".to_string(), ca),
            ("namespace".to_string(), context.namespace.clone().into_bytes()),
        ]
        .into();
        let path = dir.join("serviceaccount");
        write_files(&path, &files).map_err(io(format!("writing {}", path.display())))?;
        sa_mount = Some(Mount { source: path, target: SA_DIR.into(), read_only: true });
    }

    let mut runs = Vec::new();
    let containers = spec
        .init_containers
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (true, c))
        .chain(spec.containers.clone().into_iter().map(|c| (false, c)));
    for (is_init, container) in containers {
        let Some(command) = container.command.clone().filter(|c| !c.is_empty()) else {
            return Err(Prepare::Stuck(format!(
                "container \"{}\" has no command: the stand-in runs no images, so it cannot know the image's entrypoint",
                container.name
            )));
        };
        let argv: Vec<String> = command.into_iter().chain(container.args.clone().unwrap_or_default()).collect();
        let mut mounts: Vec<Mount> = sa_mount.iter().cloned().collect();
        for vm in container.volume_mounts.clone().unwrap_or_default() {
            let Some(source) = volumes.get(&vm.name) else {
                return Err(Prepare::Stuck(format!("container \"{}\": volumeMount \"{}\" names no volume", container.name, vm.name)));
            };
            let source = match vm.sub_path.as_deref().filter(|s| !s.is_empty()) {
                Some(sub) => source.join(sub),
                None => source.clone(),
            };
            mounts.push(Mount { source, target: vm.mount_path.clone(), read_only: vm.read_only.unwrap_or(false) });
        }
        let env = environment(client, context, pod, &container).await?;
        let run = Run {
            argv,
            env,
            working_dir: container.working_dir.clone(),
            mounts,
            shim_dir: context.shim_dir.clone(),
            timeout: DEFAULT_TIMEOUT,
        };
        runs.push((is_init, container, run));
    }
    Ok(runs)
}

/// The in-cluster variables a kubelet sets, then the container's own `env` (literal values,
/// `fieldRef` to the Pod's name/namespace/uid/ServiceAccount/node, and ConfigMap/Secret keys).
async fn environment(client: &kube::Client, context: &Context, pod: &Pod, container: &Container) -> Result<Vec<(String, String)>, Prepare> {
    let port = context.port.to_string();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let mut env: Vec<(String, String)> = vec![
        ("KUBERNETES_SERVICE_HOST".into(), "127.0.0.1".into()),
        ("KUBERNETES_SERVICE_PORT".into(), port.clone()),
        ("KUBERNETES_SERVICE_PORT_HTTPS".into(), port.clone()),
        ("KUBERNETES_PORT".into(), format!("tcp://127.0.0.1:{port}")),
        ("KUBERNETES_PORT_443_TCP".into(), format!("tcp://127.0.0.1:{port}")),
        ("KUBERNETES_PORT_443_TCP_PROTO".into(), "tcp".into()),
        ("KUBERNETES_PORT_443_TCP_ADDR".into(), "127.0.0.1".into()),
        ("KUBERNETES_PORT_443_TCP_PORT".into(), port),
        ("HOSTNAME".into(), name.clone()),
    ];
    for var in container.env.clone().unwrap_or_default() {
        let value = if let Some(value) = var.value {
            value
        } else if let Some(source) = var.value_from {
            if let Some(field) = source.field_ref {
                match field.field_path.as_str() {
                    "metadata.name" => name.clone(),
                    "metadata.namespace" => context.namespace.clone(),
                    "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                    "spec.serviceAccountName" => {
                        pod.spec.as_ref().and_then(|s| s.service_account_name.clone()).unwrap_or_else(|| "default".into())
                    }
                    "spec.nodeName" => super::NODE_NAME.into(),
                    "status.podIP" | "status.hostIP" => "127.0.0.1".into(),
                    // `metadata.annotations['K']`/`metadata.labels['K']` (an indexed Job's Pods
                    // read their completion index so: JobSet's, Trainer's PET_NODE_RANK).
                    other if map_entry(pod, other).is_some() => map_entry(pod, other).unwrap_or_default(),
                    other => return Err(Prepare::Stuck(format!("env {}: fieldRef {other} is not modelled by the stand-in", var.name))),
                }
            } else if let Some(key) = source.config_map_key_ref {
                let files = config_map(client, context, &key.name, None, key.optional.unwrap_or(false)).await?.unwrap_or_default();
                match files.get(&key.key) {
                    Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    None if key.optional.unwrap_or(false) => continue,
                    None => return Err(Prepare::Stuck(format!("env {}: key {} of configmap {} not found", var.name, key.key, key.name))),
                }
            } else if let Some(key) = source.secret_key_ref {
                let files = secret_files(client, context, &key.name, None, key.optional.unwrap_or(false)).await?.unwrap_or_default();
                match files.get(&key.key) {
                    Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    None if key.optional.unwrap_or(false) => continue,
                    None => return Err(Prepare::Stuck(format!("env {}: key {} of secret {} not found", var.name, key.key, key.name))),
                }
            } else {
                return Err(Prepare::Stuck(format!("env {}: this valueFrom is not modelled by the stand-in", var.name)));
            }
        } else {
            String::new()
        };
        env.push((var.name, value));
    }
    if container.env_from.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err(Prepare::Stuck(format!("container \"{}\": envFrom is not modelled by the stand-in", container.name)));
    }
    Ok(env)
}

/// The value of `metadata.annotations['K']` or `metadata.labels['K']` (`Some("")` when the key is
/// absent, as a kubelet sets it), `None` for any other path.
fn map_entry(pod: &Pod, path: &str) -> Option<String> {
    let (map, rest) = if let Some(rest) = path.strip_prefix("metadata.annotations[") {
        (pod.metadata.annotations.as_ref(), rest)
    } else if let Some(rest) = path.strip_prefix("metadata.labels[") {
        (pod.metadata.labels.as_ref(), rest)
    } else {
        return None;
    };
    let key = rest.strip_suffix(']')?.trim_matches(|c| c == '\'' || c == '"');
    Some(map.and_then(|m| m.get(key).cloned()).unwrap_or_default())
}

/// A ServiceAccount token for the Pod, as the kubelet requests it: bound to the Pod `(name, uid)`
/// when given.
async fn token(client: &kube::Client, context: &Context, account: &str, bound: Option<(&str, &str)>) -> Result<String, Prepare> {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), &context.namespace);
    let mut spec = serde_json::json!({"expirationSeconds": 3607});
    if let Some((pod, uid)) = bound {
        spec["boundObjectRef"] = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid});
    }
    let request = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec});
    let response: serde_json::Value = api
        .create_subresource("token", account, &super::as_kubelet_post(), &request)
        .await
        .map_err(|e| kube_err(&format!("TokenRequest for ServiceAccount {account}"), e))?;
    match response.pointer("/status/token").and_then(|t| t.as_str()) {
        Some(token) => Ok(token.to_string()),
        None => Err(Prepare::Fatal(StandInError::Kube(
            format!("TokenRequest for ServiceAccount {account}"),
            "no status.token in the answer".into(),
        ))),
    }
}

fn select(all: Files, items: Option<&[KeyToPath]>) -> Files {
    match items {
        None => all,
        Some(items) => items.iter().filter_map(|item| all.get(&item.key).map(|bytes| (item.path.clone(), bytes.clone()))).collect(),
    }
}

async fn config_map(
    client: &kube::Client,
    context: &Context,
    name: &str,
    items: Option<&[KeyToPath]>,
    optional: bool,
) -> Result<Option<Files>, Prepare> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &context.namespace);
    let Some(cm) = api.get_opt(name).await.map_err(|e| kube_err(&format!("reading ConfigMap {name}"), e))? else {
        return Ok(optional.then(Files::new));
    };
    let mut all: Files = cm.data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.into_bytes())).collect();
    all.extend(cm.binary_data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)));
    Ok(Some(select(all, items)))
}

async fn secret_files(
    client: &kube::Client,
    context: &Context,
    name: &str,
    items: Option<&[KeyToPath]>,
    optional: bool,
) -> Result<Option<Files>, Prepare> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &context.namespace);
    let Some(secret) = api.get_opt(name).await.map_err(|e| kube_err(&format!("reading Secret {name}"), e))? else {
        return Ok(optional.then(Files::new));
    };
    let all: Files = secret.data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect();
    Ok(Some(select(all, items)))
}

fn write_files(dir: &Path, files: &Files) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (rel, bytes) in files {
        // Keys are validated by the API server ([-._a-zA-Z0-9]+, item paths without `..`); stay
        // inside the volume all the same.
        if rel.split('/').any(|part| part == ".." || part.is_empty()) {
            continue;
        }
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An indexed Job's Pod reads its completion index through a `fieldRef` to an annotation
    /// (JobSet's Pods, Trainer's `PET_NODE_RANK`): the stand-in left such Pods Pending before.
    #[test]
    fn field_refs_to_annotations_and_labels_resolve() {
        let mut pod = Pod::default();
        pod.metadata.annotations = Some([("batch.kubernetes.io/job-completion-index".to_string(), "1".to_string())].into());
        pod.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
        assert_eq!(map_entry(&pod, "metadata.annotations['batch.kubernetes.io/job-completion-index']").as_deref(), Some("1"));
        assert_eq!(map_entry(&pod, "metadata.labels['app']").as_deref(), Some("x"));
        assert_eq!(map_entry(&pod, "metadata.labels['absent']").as_deref(), Some(""));
        assert_eq!(map_entry(&pod, "status.podIPs"), None);
    }
}
