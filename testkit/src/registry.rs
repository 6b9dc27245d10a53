//! A real OCI registry for tests and the explorer: Debian's `docker-registry` (CNCF
//! distribution) on a free loopback port with its storage in a temp dir, stopped on drop. Charts
//! are pushed with oci-client, exactly as Helm lays them out.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use crate::controlplane::{in_ci, ports};

pub struct Registry {
    child: Child,
    pub port: u16,
    pub storage: tempfile::TempDir,
}

impl Registry {
    /// Starts a registry, or returns None (after saying why) when `docker-registry` is not
    /// installed outside CI. In CI a missing registry fails the caller.
    pub fn start() -> Option<Registry> {
        if Command::new("docker-registry").arg("--version").output().is_err() {
            assert!(!in_ci(), "docker-registry is not installed; `cargo xtask test` installs it");
            eprintln!("SKIPPED: docker-registry is not installed (run `cargo xtask test`, which installs it)");
            return None;
        }
        let storage = tempfile::tempdir().unwrap();
        // A port another process takes between the pick and the registry's bind makes the
        // registry exit at once: start it again on another port.
        for attempt in 1..=ports::START_ATTEMPTS {
            let port = free_port();
            let config = storage.path().join("config.yml");
            std::fs::write(
                &config,
                format!(
                    "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                    storage.path().join("data").display()
                ),
            )
            .unwrap();
            let mut child = Command::new("docker-registry")
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    assert!(attempt < ports::START_ATTEMPTS, "docker-registry exited on port {port}: {status}");
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Registry { child, port, storage });
                }
                assert!(Instant::now() < deadline, "docker-registry did not start on port {port}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn repo(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    /// Pushes a chart archive as Helm does: config + chart layer, manifest without mediaType.
    pub fn push_chart(&self, repository: &str, tag: &str, name: &str, version: &str, archive: &[u8]) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::new(ClientConfig { protocol: ClientProtocol::Http, ..Default::default() });
        let reference: Reference = format!("{}/{repository}:{tag}", self.host()).parse().unwrap();
        let layer = ImageLayer::new(archive.to_vec(), "application/vnd.cncf.helm.chart.content.v1.tar+gzip".into(), None);
        let config = Config::new(chart_config(name, version), "application/vnd.cncf.helm.config.v1+json".into(), None);
        let manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime
            .block_on(client.push(&reference, &[layer], config, &RegistryAuth::Anonymous, Some(manifest)))
            .expect("push chart with oci-client");
    }

    /// Where the registry keeps a blob's bytes on disk.
    pub fn blob_data_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.storage.path().join("data/docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port outside the kernel's ephemeral range (see [`ports`]).
pub fn free_port() -> u16 {
    ports::pick().unwrap()
}

/// Helm's config blob: Chart.yaml metadata as JSON.
pub fn chart_config(name: &str, version: &str) -> Vec<u8> {
    format!(r#"{{"apiVersion":"v2","appVersion":"{version}","name":"{name}","version":"{version}"}}"#).into_bytes()
}
