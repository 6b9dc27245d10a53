//! The kustomize install of Trainer as its docs give it — `kubectl apply --server-side -k
//! …/manifests/overlays/manager?ref=vX` and `…/overlays/runtimes?ref=vX` — without the network:
//! the manifests come from the Trainer Go module at that tag (`go mod download`, the Go module
//! proxy, which serves the repository's files), and the JobSet release manifests the overlay
//! fetches by URL are built from the JobSet Go module's `config/default` at the same version,
//! with the image its release publishes. Nothing fetched is kept in the repository: the copies
//! live in the scenario's temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::lab::Lab;

/// `go mod download -json module@version` → the module's directory in Go's module cache.
fn module_dir(module: &str) -> PathBuf {
    let out = Command::new("go")
        .args(["mod", "download", "-json", module])
        .env("GOFLAGS", "-mod=mod")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("go mod download {module}: {e} (the rehearsals need Go, as `cargo xtask controlplane` does)"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("go mod download {module}: {e}\n{}", String::from_utf8_lossy(&out.stderr)));
    let dir = json["Dir"].as_str().unwrap_or_else(|| panic!("go mod download {module}: no Dir in {json}"));
    PathBuf::from(dir)
}

fn copy_tree(from: &Path, to: &Path) {
    let ok = Command::new("cp").arg("-r").arg(from).arg(to).status().unwrap().success()
        && Command::new("chmod").args(["-R", "u+w"]).arg(to).status().unwrap().success();
    assert!(ok, "copying {} to {}", from.display(), to.display());
}

/// Writable copies of Trainer's `manifests/` at `trainer` (e.g. `v2.2.0`) with the JobSet
/// third-party overlay pointed at JobSet `jobset`'s `config/default`; returns the manifests dir.
pub fn manifests(lab: &Lab, trainer: &str, jobset: &str) -> PathBuf {
    let root = lab.dir.path().join(format!("kustomize-{trainer}"));
    std::fs::create_dir_all(&root).unwrap();
    let manifests = root.join("manifests");
    if manifests.is_dir() {
        return manifests;
    }
    copy_tree(&module_dir(&format!("github.com/kubeflow/trainer/v2@{trainer}")).join("manifests"), &manifests);
    copy_tree(&module_dir(&format!("sigs.k8s.io/jobset@{jobset}")).join("config"), &root.join("jobset-config"));
    let third_party = manifests.join("third-party/jobset/kustomization.yaml");
    let text = std::fs::read_to_string(&third_party).unwrap();
    let url = format!("https://github.com/kubernetes-sigs/jobset/releases/download/{jobset}/manifests.yaml");
    assert!(text.contains(&url), "{} no longer fetches {url}:\n{text}", third_party.display());
    let text = text.replace(&url, "../../../jobset-config/default")
        + &format!(
            "\n# The image JobSet's release manifests carry (its config/default names a staging image).\nimages:\n- name: us-central1-docker.pkg.dev/k8s-staging-images/jobset/jobset\n  newName: registry.k8s.io/jobset/jobset\n  newTag: {jobset}\n"
        );
    std::fs::write(&third_party, text).unwrap();
    manifests
}

/// The install commands of Trainer's docs for a kustomize install, run as given (field manager
/// `kubectl`): the manager overlay, the CRDs established, the controllers running, then the
/// runtimes overlay — which the manager's runtime webhook (`failurePolicy: Fail`) refuses until
/// its endpoint is published a moment after the Pod is Ready, so it is tried again for a minute
/// as a person would.
pub fn install(lab: &Lab, manifests: &Path) {
    let ran = lab.shell_ok(&format!(
        "kubectl apply --server-side -k {manager}\n\
         kubectl wait --for=condition=Established crd --all --timeout=60s\n\
         kubectl -n kubeflow-system rollout status deployment/kubeflow-trainer-controller-manager --timeout=120s\n\
         kubectl -n kubeflow-system rollout status deployment/jobset-controller-manager --timeout=120s\n\
         tries=0\n\
         until kubectl apply --server-side -k {runtimes}; do tries=$((tries + 1)); [ $tries -lt 30 ]; sleep 2; done",
        manager = manifests.join("overlays/manager").display(),
        runtimes = manifests.join("overlays/runtimes").display()
    ));
    lab.note(&format!(
        "kustomize install:\n{}",
        ran.stdout.lines().filter(|l| !l.contains("serverside-applied")).collect::<Vec<_>>().join("\n")
    ));
}
