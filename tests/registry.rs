//! `versions` and `pull` against a real registry process (Debian `docker-registry`), with charts
//! the tests pack and push themselves.

mod support;

use support::registry::Registry;
use support::{files_in, run, run_with_stdin, sha256, stderr, stdout, tiny_chart};

struct Fixture {
    registry: Registry,
    repo: String,
    home: tempfile::TempDir,
    charts: Vec<(String, Vec<u8>)>,
}

fn fixture() -> Option<Fixture> {
    let registry = Registry::start()?;
    let mut charts = Vec::new();
    for (tag, version) in [
        ("1.0.0", "1.0.0"),
        ("1.0.1", "1.0.1"),
        ("1.1.0", "1.1.0"),
        ("2.0.0-rc.1", "2.0.0-rc.1"),
        ("2.0.0", "2.0.0"),
        ("0.0.0-sha-abc1234", "0.0.0-sha-abc1234"),
        ("1.0.1_build.7", "1.0.1+build.7"),
        ("latest", "2.0.0"),
    ] {
        let archive = tiny_chart("tiny", version);
        registry.push_chart("charts/tiny", tag, "tiny", version, &archive);
        charts.push((tag.to_string(), archive));
    }
    let repo = registry.repo("charts/tiny");
    Some(Fixture { registry, repo, home: tempfile::tempdir().unwrap(), charts })
}

fn archive_of<'a>(f: &'a Fixture, tag: &str) -> &'a [u8] {
    &f.charts.iter().find(|(t, _)| t == tag).unwrap().1
}

#[test]
fn versions_lists_releases_newest_first_and_all_with_prereleases() {
    let Some(f) = fixture() else { return };
    let out = run(f.home.path(), &["versions", &f.repo, "--plain-http"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2.0.0\n1.1.0\n1.0.1+build.7\n1.0.1\n1.0.0\n");
    let out = run(f.home.path(), &["versions", &f.repo, "--plain-http", "--all"]);
    assert_eq!(stdout(&out), "2.0.0\n2.0.0-rc.1\n1.1.0\n1.0.1+build.7\n1.0.1\n1.0.0\n0.0.0-sha-abc1234\n");
    let out = run(f.home.path(), &["versions", &f.repo, "--plain-http", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[2], serde_json::json!({"version": "1.0.1+build.7", "tag": "1.0.1_build.7", "prerelease": false}));
}

#[test]
fn pull_exact_range_cache_and_offline() {
    let Some(f) = fixture() else { return };
    let dir = f.home.path().join("out");
    let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "1.0.1", "--output-dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let saved = dir.join("tiny-1.0.1.tgz");
    assert_eq!(std::fs::read(&saved).unwrap(), archive_of(&f, "1.0.1"));
    let text = stdout(&out);
    assert!(text.starts_with(&format!("{}\n", saved.display())), "{text}");
    assert!(text.contains(&sha256(archive_of(&f, "1.0.1"))), "layer digest printed: {text}");
    assert!(!text.contains("(cache)"));

    // Range, resolved against every tag: highest 1.0.x release.
    let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "~1.0", "--output-dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    // 1.0.1 and 1.0.1+build.7 tie on precedence; the tag text breaks the tie, always the same way.
    assert!(stdout(&out).contains("tiny 1.0.1+build.7"), "{}", stdout(&out));

    // Repeat: the layer comes from the cache.
    let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "1.0.1", "--output-dir", dir.to_str().unwrap()]);
    assert!(stdout(&out).contains("(cache)"), "{}", stdout(&out));

    // Offline: works for what was pulled, refuses the rest, without touching the network.
    drop(f.registry);
    let out =
        run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "1.0.1", "--offline", "--output-dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out =
        run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "1.1.0", "--offline", "--output-dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not in the cache"), "{}", stderr(&out));
}

#[test]
fn pull_without_match_names_the_versions_that_exist() {
    let Some(f) = fixture() else { return };
    let dir = f.home.path().join("out");
    for version in [">=3", "9.9.9"] {
        let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", version, "--output-dir", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("versions there: 2.0.0, 1.1.0, 1.0.1+build.7, 1.0.1, 1.0.0"), "{}", stderr(&out));
        assert!(files_in(&dir).is_empty());
    }
    // Latest release by default; `latest` as a literal tag still works.
    let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--output-dir", dir.to_str().unwrap()]);
    assert!(stdout(&out).contains("tiny 2.0.0"), "{}", stdout(&out));
    let out = run(f.home.path(), &["pull", &format!("{}:latest", f.repo), "--plain-http", "--output-dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn tampered_blob_in_registry_storage_is_refused_and_nothing_is_written() {
    let Some(f) = fixture() else { return };
    let layer = archive_of(&f, "1.1.0");
    let digest = sha256(layer);
    let path = f.registry.blob_data_path(&digest);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let dir = f.home.path().join("out");
    let out = run(f.home.path(), &["pull", &f.repo, "--plain-http", "--version", "1.1.0", "--output-dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("expected {digest}")) && err.contains(&format!("got {}", sha256(&bytes))), "{err}");
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    // The bad bytes did not enter the cache either.
    assert!(!f.home.path().join("cache/blobs/sha256").join(&digest[7..]).exists());
}

#[test]
fn plain_http_is_never_automatic_and_credentials_are_not_needed_anonymously() {
    let Some(f) = fixture() else { return };
    let out = run(f.home.path(), &["versions", &f.repo]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pass --plain-http"), "{}", stderr(&out));
    // Given credentials are harmless when the registry never asks for them.
    let out = run_with_stdin(f.home.path(), &["versions", &f.repo, "--plain-http", "--username", "u", "--password-stdin"], Some("pw\n"));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn container_images_are_not_charts() {
    let Some(f) = fixture() else { return };
    let _ = rustls::crypto::ring::default_provider().install_default();
    use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
    let client = oci_client::Client::new(ClientConfig { protocol: ClientProtocol::Http, ..Default::default() });
    let reference: oci_client::Reference = format!("{}/images/app:1.0.0", f.registry.host()).parse().unwrap();
    let layer = ImageLayer::new(b"layer".to_vec(), "application/vnd.oci.image.layer.v1.tar+gzip".into(), None);
    let config = Config::new(b"{}".to_vec(), "application/vnd.oci.image.config.v1+json".into(), None);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(client.push(&reference, &[layer], config, &oci_client::secrets::RegistryAuth::Anonymous, None)).unwrap();
    let dir = f.home.path().join("out");
    let out = run(
        f.home.path(),
        &["pull", &f.registry.repo("images/app"), "--plain-http", "--version", "1.0.0", "--output-dir", dir.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a Helm chart: its config media type is application/vnd.oci.image.config.v1+json"),
        "{}",
        stderr(&out)
    );
    let out = run(f.home.path(), &["versions", &f.registry.repo("nothing/here"), "--plain-http"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("was not found"), "{}", stderr(&out));
}
