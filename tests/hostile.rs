//! Hostile inputs through the real binary: archives (traversal, links, devices, duplicates,
//! bombs, limits, truncation), YAML (alias bombs, deep nesting, huge files, invalid UTF-8),
//! templates (recursion, fan-out, width and loop bombs), registries (oversized manifests, wrong
//! sizes, slow bodies, redirect loops, bodies larger than memory), Helm release records (gzip
//! bombs) and snapshots (a million items). Each run must end within 5 s and 512 MiB, without a
//! panic, with exit 2 and a message naming the input — and write nothing.

mod support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use flate2::{write::GzEncoder, Compression};
use support::http::{Response, Server};
use support::{chart_config, chart_manifest, sha256, tiny_chart};

const TIME_LIMIT: Duration = Duration::from_secs(5);
const RSS_LIMIT_KIB: u64 = 512 * 1024;

/// Runs trainer-audit under `/usr/bin/time` (when present) and checks the bounds every hostile
/// input must respect; returns the output for the case's own assertions.
fn bounded(home: &Path, args: &[&str]) -> Output {
    let time = Path::new("/usr/bin/time");
    let rss_file = home.join("rss");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(env!("CARGO_BIN_EXE_trainer-audit"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
    };
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TRAINER_AUDIT_CACHE_DIR", home.join("cache"))
        .current_dir(home)
        .stdin(Stdio::null());
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(elapsed < TIME_LIMIT, "{args:?} took {elapsed:?}");
    if let Some(kib) = std::fs::read_to_string(&rss_file).ok().and_then(|t| t.lines().last().and_then(|l| l.trim().parse::<u64>().ok())) {
        assert!(kib < RSS_LIMIT_KIB, "{args:?} used {} MiB", kib / 1024);
    }
    let _ = std::fs::remove_file(&rss_file);
    out
}

fn refused(out: &Output, mentions: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "expected exit 2: {stderr}");
    for m in mentions {
        assert!(stderr.contains(m), "{m:?} not in: {stderr}");
    }
}

/// A `.tgz` from raw tar entries: (path, entry type, data).
fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut tar_bytes = Vec::new();
    {
        let mut b = tar::Builder::new(&mut tar_bytes);
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            if kind.is_symlink() || kind.is_hard_link() {
                h.set_link_name("/etc/passwd").unwrap();
            }
            // Raw names (tar's own path checks would refuse `..`).
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.finish().unwrap();
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(&tar_bytes).unwrap();
    gz.finish().unwrap()
}

const CHART: &[u8] = b"apiVersion: v2\nname: x\nversion: 0.1.0\n";
const REG: tar::EntryType = tar::EntryType::Regular;

fn write(home: &Path, name: &str, bytes: &[u8]) -> String {
    let p = home.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(files_below(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn hostile_archives() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("traversal.tgz", archive(&[("x/Chart.yaml", REG, CHART), ("x/../../evil", REG, b"x")]), &["traversal.tgz", "parent directory"]),
        ("absolute.tgz", archive(&[("x/Chart.yaml", REG, CHART), ("x//etc/passwd", REG, b"x")]), &["absolute.tgz", "absolute paths"]),
        ("drive.tgz", archive(&[("x/Chart.yaml", REG, CHART), ("x/C:/evil", REG, b"x")]), &["drive.tgz", "illegally named"]),
        ("toplevel.tgz", archive(&[("Chart.yaml", REG, CHART)]), &["toplevel.tgz", "outside the base directory"]),
        (
            "bigfile.tgz",
            archive(&[("x/Chart.yaml", REG, CHART), ("x/files/big", REG, &vec![b'a'; 6 * 1024 * 1024])]),
            &["bigfile.tgz", "maximum file size"],
        ),
        (
            "truncated.tgz",
            archive(&[("x/Chart.yaml", REG, CHART), ("x/values.yaml", REG, &vec![b'a'; 100_000])])[..300].to_vec(),
            &["truncated.tgz"],
        ),
        ("notgzip.tgz", b"PK\x03\x04 a zip file".to_vec(), &["notgzip.tgz", "gzipped archive"]),
    ];
    for (name, bytes, mentions) in cases {
        let path = write(h, name, &bytes);
        let out = bounded(h, &["render", &path]);
        refused(&out, mentions);
    }
    // Totals over 100 MiB from files under 5 MiB each; a gzip bomb (ratio > 1000).
    let chunk = vec![0u8; 4 * 1024 * 1024];
    let mut many: Vec<(String, Vec<u8>)> = vec![("x/Chart.yaml".into(), CHART.to_vec())];
    for i in 0..27 {
        many.push((format!("x/files/f{i}"), chunk.clone()));
    }
    let entries: Vec<(&str, tar::EntryType, &[u8])> = many.iter().map(|(p, d)| (p.as_str(), REG, d.as_slice())).collect();
    let path = write(h, "total.tgz", &archive(&entries));
    refused(&bounded(h, &["render", &path]), &["total.tgz", "larger than the maximum size"]);
    // One 200 MiB file of zeros: a ratio of about 1000.
    let bomb = {
        let mut tar_bytes = Vec::new();
        {
            let mut b = tar::Builder::new(&mut tar_bytes);
            let mut hdr = tar::Header::new_gnu();
            hdr.set_size(200 * 1024 * 1024);
            hdr.set_mode(0o644);
            hdr.set_cksum();
            b.append_data(&mut hdr, "x/files/zeros", std::io::repeat(0).take(200 * 1024 * 1024)).unwrap();
            b.finish().unwrap();
        }
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&tar_bytes).unwrap();
        gz.finish().unwrap()
    };
    assert!(bomb.len() * 900 < 200 * 1024 * 1024, "ratio {}", 200 * 1024 * 1024 / bomb.len());
    let path = write(h, "bomb.tgz", &bomb);
    refused(&bounded(h, &["render", &path]), &["bomb.tgz", "larger than the maximum"]);
    // Links and devices load as empty files (Helm's behaviour), never followed or created.
    let links = archive(&[
        ("x/Chart.yaml", REG, CHART),
        ("x/templates/link.yaml", tar::EntryType::Symlink, b""),
        ("x/templates/hard.yaml", tar::EntryType::Link, b""),
        ("x/templates/dev.yaml", tar::EntryType::Char, b""),
        ("x/templates/a.yaml", REG, b"kind: A\n"),
        ("x/templates/a.yaml", REG, b"kind: B\n"),
    ]);
    let path = write(h, "links.tgz", &links);
    let out = bounded(h, &["render", &path]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("root:"), "a link was followed: {text}");
    // Nothing was written anywhere but the inputs.
    let written: Vec<PathBuf> = files_below(h).into_iter().filter(|p| p.extension().is_none_or(|e| e != "tgz")).collect();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn hostile_yaml_and_values() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let chart = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts/demo");
    let chart = chart.to_str().unwrap();
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 10].join(", ")));
    }
    let deep = format!("x: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("bomb.yaml", bomb.into_bytes(), &["bomb.yaml", "excessive aliasing"]),
        ("deep.yaml", deep.into_bytes(), &["deep.yaml", "recursion limit exceeded"]),
        ("binary.yaml", vec![0xff, 0xfe, b'a', b':', b' ', 0xc3, 0x28], &["binary.yaml", "UTF-8"]),
        ("list.yaml", b"- a\n- b\n".to_vec(), &["list.yaml", "cannot unmarshal array"]),
    ];
    for (name, bytes, mentions) in cases {
        let path = write(h, name, &bytes);
        refused(&bounded(h, &["render", chart, "-f", &path]), mentions);
    }
    // A huge values file is refused before it is parsed.
    let mut big = b"x: \"".to_vec();
    big.extend(std::iter::repeat_n(b'a', 40 * 1024 * 1024));
    big.extend(b"\"\n");
    let path = write(h, "huge.yaml", &big);
    refused(&bounded(h, &["render", chart, "-f", &path]), &["huge.yaml", "larger than"]);
}

#[test]
fn hostile_templates() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cases: &[(&str, &[&str])] = &[
        (r#"{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}"#, &["nested reference name: a"]),
        (r#"{{ define "a" }}{{ tpl "{{ include \"a\" . }}" . }}{{ end }}{{ include "a" . }}"#, &["t/templates/t.yaml"]),
        (
            r#"{{ define "f" }}{{ if lt (len .) 40 }}{{ include "f" (append . 1) }}{{ include "f" (append . 2) }}{{ end }}{{ end }}{{ include "f" (list) }}"#,
            &["t/templates/t.yaml"],
        ),
        (r#"{{ repeat 2000000000 "x" }}"#, &["t/templates/t.yaml"]),
        (r#"{{ printf "%2000000000d" 1 }}"#, &["t/templates/t.yaml"]),
        (r#"{{ range until 2000000000 }}x{{ end }}"#, &["t/templates/t.yaml"]),
        (r#"{{ range seq 1 2000000000 }}x{{ end }}"#, &["t/templates/t.yaml"]),
    ];
    for (i, (template, mentions)) in cases.iter().enumerate() {
        let dir = h.join(format!("chart{i}"));
        std::fs::create_dir_all(dir.join("templates")).unwrap();
        std::fs::write(dir.join("Chart.yaml"), "apiVersion: v2\nname: t\nversion: 0.1.0\n").unwrap();
        std::fs::write(dir.join("templates/t.yaml"), template).unwrap();
        let out = bounded(h, &["render", dir.to_str().unwrap()]);
        refused(&out, mentions);
    }
}

#[test]
fn hostile_registries() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let layer = tiny_chart("tiny", "1.0.0");
    let config = chart_config("tiny", "1.0.0");
    let manifest = chart_manifest(&config, &layer);
    let (config_digest, layer_digest) = (sha256(&config), sha256(&layer));
    let pull = |server: &Server, extra: &[&str]| {
        let out_dir = h.join("out");
        let mut args = vec![
            "pull".to_string(),
            format!("oci://{}/charts/tiny", server.base()),
            "--version".into(),
            "1.0.0".into(),
            "--plain-http".into(),
            "--output-dir".into(),
            out_dir.to_string_lossy().into_owned(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = bounded(h, &refs);
        assert!(files_below(&out_dir).is_empty(), "a file was written");
        out
    };
    // An oversized manifest.
    let server = Server::start(|req| {
        if req.path().contains("/manifests/") {
            return Response::new(200, vec![b' '; 5 * 1024 * 1024]).header("Content-Type", "application/vnd.oci.image.manifest.v1+json");
        }
        Response::new(404, "")
    });
    refused(&pull(&server, &[]), &["manifest"]);
    // A blob whose size differs from the manifest's.
    let (m, c, cd, ld, l) = (manifest.clone(), config.clone(), config_digest.clone(), layer_digest.clone(), layer.clone());
    let server = Server::start(move |req| {
        let p = req.path();
        if p.contains("/manifests/") {
            Response::new(200, m.clone()).header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        } else if p.ends_with(&cd) {
            Response::new(200, c.clone())
        } else if p.ends_with(&ld) {
            let mut longer = l.clone();
            longer.extend_from_slice(&[0; 4096]);
            Response::new(200, longer)
        } else {
            Response::new(404, "")
        }
    });
    refused(&pull(&server, &[]), &["descriptor says"]);
    // A slow body, bounded by --timeout.
    let server = Server::start(|req| {
        if req.path().contains("/manifests/") {
            std::thread::sleep(Duration::from_secs(3));
        }
        Response::new(404, "")
    });
    refused(&pull(&server, &["--timeout", "1"]), &["1.0.0"]);
    // A redirect loop.
    let server = Server::start(|req| Response::new(302, "").header("Location", req.path()));
    refused(&pull(&server, &[]), &["redirect"]);

    // Bodies larger than the memory limit, where a reader without a bound would take them
    // whole (as oci-client 0.18 does, tests/oci_client_limits.rs): a manifest, a tag page, a
    // blob's error answer and a token answer of 600 MiB each.
    const HUGE: u64 = 600 * 1024 * 1024;
    let server = Server::start(|req| {
        if req.path().contains("/manifests/") {
            return Response::filled(200, "", b' ', HUGE, "{}").header("Content-Type", "application/vnd.oci.image.manifest.v1+json");
        }
        Response::new(404, "")
    });
    refused(&pull(&server, &[]), &["the manifest", "limit"]);
    let server = Server::start(|_| Response::filled(200, r#"{"tags":[""#, b'a', HUGE, r#""]}"#));
    refused(&bounded(h, &["versions", &format!("oci://{}/charts/tiny", server.base()), "--plain-http"]), &["tag list", "16 MiB"]);
    // (The config blob is in the cache by now; the layer never was.)
    let (m, c, cd, ld) = (manifest.clone(), config.clone(), config_digest.clone(), layer_digest.clone());
    let server = Server::start(move |req| {
        if req.path().contains("/manifests/") {
            Response::new(200, m.clone()).header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        } else if req.path().ends_with(&cd) {
            Response::new(200, c.clone())
        } else if req.path().ends_with(&ld) {
            Response::filled(403, "", b'x', HUGE, "")
        } else {
            Response::new(404, "")
        }
    });
    refused(&pull(&server, &[]), &["answered 403 for the chart layer"]);
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let seen = port.clone();
    let server = Server::start(move |req| {
        if req.path() == "/token" {
            return Response::filled(200, r#"{"token":""#, b'a', HUGE, r#""}"#);
        }
        let realm = format!("Bearer realm=\"http://127.0.0.1:{}/token\",service=\"s\"", seen.get().copied().unwrap_or(0));
        Response::new(401, "").header("WWW-Authenticate", &realm)
    });
    port.set(server.port).unwrap();
    refused(&pull(&server, &[]), &["token endpoint"]);
}

#[test]
fn hostile_release_records_and_snapshots() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // A release record that is a gzip bomb: check refuses the run, naming the record.
    let bomb = {
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            gz.write_all(&zeros).unwrap();
        }
        gz.finish().unwrap()
    };
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let record = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": "sh.helm.release.v1.kubeflow-trainer.v1", "namespace": "kubeflow-system", "labels": {"owner": "helm"}},
        "data": {"release": b64.encode(b64.encode(&bomb))}});
    let snap = write(
        h,
        "bomb.json",
        serde_json::to_string(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [record]})).unwrap().as_bytes(),
    );
    refused(
        &bounded(h, &["check", "--snapshot", &snap, "--chart", "/nonexistent", "--from", "2.2.1"]),
        &["sh.helm.release.v1.kubeflow-trainer.v1", "decompression bomb"],
    );
    // A million items.
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..1_000_000 {
        text.push_str(&format!("- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}, namespace: n}}}}\n"));
    }
    let snap = write(h, "million.yaml", text.as_bytes());
    refused(&bounded(h, &["status", "--snapshot", &snap]), &["million.yaml", "items"]);
    // Malformed snapshots name the file.
    let snap = write(h, "noitems.yaml", b"just a string\n");
    refused(&bounded(h, &["status", "--snapshot", &snap]), &["noitems.yaml"]);
}
