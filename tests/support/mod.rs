//! Shared test fixtures: the real binary with an isolated environment, tiny charts built by the
//! tests, a real `docker-registry` process, and a small HTTP server for cases a real registry
//! cannot produce.
#![allow(dead_code)]

pub mod http;
pub mod registry;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use flate2::{write::GzEncoder, Compression};

/// Runs `trainer-audit` with `HOME` and the cache inside `home`, so no test sees the machine's
/// credentials or another test's cache. Git stops below this repository
/// (`GIT_CEILING_DIRECTORIES`): the fixture trees under tests/ are trees, not a repository, so
/// what `gitops` prints does not depend on whether the project is a git checkout (a tree in a
/// repository of its own, as tests make them in temporary directories, is still one).
pub fn run(home: &Path, args: &[&str]) -> Output {
    run_with_stdin(home, args, None)
}

pub fn run_with_stdin(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trainer-audit"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TRAINER_AUDIT_CACHE_DIR", home.join("cache"))
        .env("GIT_CEILING_DIRECTORIES", env!("CARGO_MANIFEST_DIR"))
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run trainer-audit");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// `trainer-audit pull oci://BASE/charts/tiny --version 1.0.0 --plain-http --output-dir HOME/out`
/// followed by `extra`, the pull most registry tests make; returns what it printed and where it
/// was told to write.
pub fn pull_tiny(home: &Path, base: &str, extra: &[&str], stdin: Option<&str>) -> (Output, PathBuf) {
    let dir = home.join("out");
    let repo = format!("oci://{base}/charts/tiny");
    let mut args = vec!["pull", &repo, "--version", "1.0.0", "--plain-http", "--output-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    (run_with_stdin(home, &args, stdin), dir)
}

/// The stand-in Trainer charts (`tests/rules/charts`): `to` is 2.3.0; `from` (2.2.0) is copied
/// once per test binary as 2.2.1, the version the scenario snapshots have installed.
pub fn stand_in_chart(name: &str) -> String {
    static FROM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let charts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules/charts");
    if name != "from" {
        return charts.join(name).to_string_lossy().into_owned();
    }
    let dir = FROM.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep().join("from");
        let copied = Command::new("cp").arg("-R").arg(charts.join("from")).arg(&dir).status().unwrap();
        assert!(copied.success());
        let chart_yaml = dir.join("Chart.yaml");
        let text = std::fs::read_to_string(&chart_yaml).unwrap().replace("2.2.0", "2.2.1");
        std::fs::write(chart_yaml, text).unwrap();
        dir
    });
    dir.to_string_lossy().into_owned()
}

/// A committed scenario snapshot, `snapshots/NAME.yaml`.
pub fn snapshot(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join(format!("{name}.yaml")).to_string_lossy().into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A minimal Helm chart packed the way `helm package` lays it out (`<name>/…`).
pub fn tiny_chart(name: &str, version: &str) -> Vec<u8> {
    let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"{version}\"\n");
    let files: Vec<(String, Vec<u8>)> = vec![
        (format!("{name}/Chart.yaml"), chart_yaml.into_bytes()),
        (format!("{name}/values.yaml"), b"replicas: 1\n".to_vec()),
        (format!("{name}/templates/cm.yaml"), b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n".to_vec()),
    ];
    let mut tar_bytes = Vec::new();
    {
        let mut builder = tar::Builder::new(&mut tar_bytes);
        for (path, data) in &files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            builder.append_data(&mut header, path, data.as_slice()).unwrap();
        }
        builder.finish().unwrap();
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&tar_bytes).unwrap();
    gz.finish().unwrap()
}

pub use testkit::registry::chart_config;

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    format!("sha256:{}", d.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// A Helm chart manifest (as Helm writes it: no mediaType field) for the given blobs.
pub fn chart_manifest(config: &[u8], layer: &[u8]) -> Vec<u8> {
    format!(
        r#"{{"schemaVersion":2,"config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"{}","size":{}}},"layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{}","size":{}}}]}}"#,
        sha256(config),
        config.len(),
        sha256(layer),
        layer.len()
    )
    .into_bytes()
}

pub const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// Serves one chart version (`tiny` 1.0.0) at `/v2/charts/tiny`, with the given layer bytes
/// sent for the layer digest (tamper by passing different bytes).
pub fn chart_routes(layer: Vec<u8>, served_layer: Vec<u8>) -> impl Fn(&http::Request) -> Option<http::Response> {
    let config = chart_config("tiny", "1.0.0");
    let manifest = chart_manifest(&config, &layer);
    let (config_digest, layer_digest) = (sha256(&config), sha256(&layer));
    move |req| {
        let path = req.path();
        if path == "/v2/charts/tiny/manifests/1.0.0" {
            return Some(http::Response::new(200, manifest.clone()).header("Content-Type", MANIFEST_TYPE));
        }
        if path == format!("/v2/charts/tiny/blobs/{config_digest}") {
            return Some(http::Response::new(200, config.clone()));
        }
        if path == format!("/v2/charts/tiny/blobs/{layer_digest}") {
            return Some(http::Response::new(200, served_layer.clone()));
        }
        None
    }
}

pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    out.sort();
    out
}

/// The corpus directory (`TRAINER_AUDIT_CORPUS`). Tests that call this are `#[ignore]`d, so they
/// run only when asked for, and then a missing or broken corpus fails them: never a silent pass.
pub fn corpus() -> PathBuf {
    let value = std::env::var_os("TRAINER_AUDIT_CORPUS").filter(|v| !v.is_empty());
    let Some(value) = value else { panic!("TRAINER_AUDIT_CORPUS is not set: this test reads the chart corpus") };
    let dir = PathBuf::from(value);
    assert!(
        dir.join("charts").is_dir() && dir.join("values").is_dir(),
        "TRAINER_AUDIT_CORPUS={} does not hold charts/ and values/",
        dir.display()
    );
    dir
}

/// True in CI, where a missing tool must fail the test instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// True when the file is an ELF executable with no interpreter and no shared-library needs:
/// what a `FROM scratch`-like base can run. Hand-read because it is a dozen header fields and no
/// ELF crate is a dependency of this workspace.
pub fn static_elf(bytes: &[u8]) -> Result<(), String> {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize).ok_or("truncated");
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).ok_or("truncated");
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize).ok_or("truncated");
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01") {
        return Err("not a little-endian 64-bit ELF file".into());
    }
    let (phoff, phentsize, phnum) = (u64_at(0x20)?, u16_at(0x36)?, u16_at(0x38)?);
    for i in 0..phnum {
        let header = phoff + i * phentsize;
        match u32_at(header)? {
            3 => return Err("it has a PT_INTERP (dynamic loader) segment".into()),
            2 => {
                let (offset, size) = (u64_at(header + 8)?, u64_at(header + 32)?);
                for entry in (offset..offset + size).step_by(16) {
                    match u64_at(entry)? {
                        0 => break,
                        1 => return Err("its dynamic section has DT_NEEDED (shared library) entries".into()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The ELF header's machine: "x86_64" (62), "aarch64" (183), or the number.
pub fn elf_machine(bytes: &[u8]) -> String {
    match bytes.get(0x12..0x14).map(|b| u16::from_le_bytes([b[0], b[1]])) {
        Some(62) => "x86_64".into(),
        Some(183) => "aarch64".into(),
        other => format!("{other:?}"),
    }
}
