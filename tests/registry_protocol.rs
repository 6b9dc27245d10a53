//! Registry behaviour a real registry process cannot be made to show: tag pagination through
//! `Link` headers, a blob whose bytes do not match its digest, a Bearer challenge with a token
//! endpoint, and a transient 500. Served by a small in-test HTTP server.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::Engine;
use support::http::{Response, Server};
use support::{chart_routes, files_in, pull_tiny, run, run_with_stdin, sha256, stderr, stdout, tiny_chart};

#[test]
fn follows_link_pagination_across_250_tags() {
    let mut tags: Vec<String> = (0..240).map(|i| format!("0.0.0-sha-{i:07x}")).collect();
    tags.extend(
        ["1.0.0", "1.1.0", "1.2.0-rc.1", "1.2.0", "2.0.0-rc.0", "2.0.0", "2.1.0", "not-semver", "v3.0.0", "2.1.1"].map(String::from),
    );
    tags.sort(); // registries list lexically: every dev tag comes first
    assert_eq!(tags.len(), 250);
    let server = Server::start(move |req| {
        assert_eq!(req.path(), "/v2/charts/tiny/tags/list");
        let last = req.target.split("last=").nth(1).map(|s| s.split('&').next().unwrap().to_string());
        let start = last.map(|l| tags.iter().position(|t| *t == l).unwrap() + 1).unwrap_or(0);
        let page: Vec<&String> = tags.iter().skip(start).take(100).collect();
        let body = serde_json::json!({"name": "charts/tiny", "tags": page}).to_string();
        let mut response = Response::new(200, body).header("Content-Type", "application/json");
        if start + 100 < tags.len() {
            let link = format!("</v2/charts/tiny/tags/list?last={}&n=100>; rel=\"next\"", page.last().unwrap());
            response = response.header("Link", &link);
        }
        response
    });
    let home = tempfile::tempdir().unwrap();
    let repo = format!("oci://{}/charts/tiny", server.base());
    let out = run(home.path(), &["versions", &repo, "--plain-http"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2.1.1\n2.1.0\n2.0.0\n1.2.0\n1.1.0\n1.0.0\n");
    assert_eq!(server.requests().len(), 3, "three pages");
    let out = run(home.path(), &["versions", &repo, "--plain-http", "--all"]);
    let lines: Vec<String> = stdout(&out).lines().map(String::from).collect();
    assert_eq!(lines.len(), 250 - 2, "every strict semver tag");
    assert_eq!(&lines[..4], ["2.1.1", "2.1.0", "2.0.0", "2.0.0-rc.0"]);
    assert!(lines.last().unwrap().starts_with("0.0.0-sha-"));
}

#[test]
fn pagination_loops_are_refused() {
    let server = Server::start(|_| {
        Response::new(200, r#"{"tags":["1.0.0"]}"#).header("Link", "</v2/charts/tiny/tags/list?last=1.0.0>; rel=\"next\"")
    });
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["versions", &format!("oci://{}/charts/tiny", server.base()), "--plain-http"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("loop back"), "{}", stderr(&out));
}

#[test]
fn a_blob_that_does_not_match_its_digest_is_refused() {
    let layer = tiny_chart("tiny", "1.0.0");
    let mut tampered = layer.clone();
    tampered[20] ^= 1;
    let routes = chart_routes(layer.clone(), tampered.clone());
    let server = Server::start(move |req| routes(req).unwrap_or_else(|| Response::new(404, "")));
    let home = tempfile::tempdir().unwrap();
    let (out, dir) = pull_tiny(home.path(), &server.base(), &[], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("expected {}, got {}", sha256(&layer), sha256(&tampered))), "{err}");
    assert!(files_in(&dir).is_empty());

    // A body longer than its descriptor is cut off and refused as well.
    let mut longer = layer.clone();
    longer.extend_from_slice(b"extra");
    let routes = chart_routes(layer.clone(), longer);
    let server = Server::start(move |req| routes(req).unwrap_or_else(|| Response::new(404, "")));
    let (out, _) = pull_tiny(home.path(), &server.base(), &[], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("but its descriptor says {}", layer.len())), "{}", stderr(&out));
    assert!(files_in(&dir).is_empty());
}

/// A registry that demands a Bearer token, minted by its token endpoint for alice:s3cret.
fn bearer_registry() -> Server {
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let port_cell = Arc::new(std::sync::OnceLock::<u16>::new());
    let port_for_handler = port_cell.clone();
    let good_basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("alice:s3cret"));
    let server = Server::start(move |req| {
        if req.path() == "/token" {
            assert!(req.target.contains("scope=repository%3Acharts%2Ftiny%3Apull"), "{}", req.target);
            assert!(req.target.contains("service=test-registry"), "{}", req.target);
            return if req.header("authorization") == Some(good_basic.as_str()) {
                Response::new(200, r#"{"token":"minted-token-123"}"#)
            } else {
                Response::new(401, r#"{"details":"bad credentials"}"#)
            };
        }
        if req.header("authorization") != Some("Bearer minted-token-123") {
            let port = port_for_handler.get().unwrap();
            let challenge =
                format!("Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test-registry\",scope=\"repository:charts/tiny:pull\"");
            return Response::new(401, r#"{"errors":[{"code":"UNAUTHORIZED"}]}"#).header("WWW-Authenticate", &challenge);
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    port_cell.set(server.port).unwrap();
    server
}

#[test]
fn bearer_challenge_with_password_from_stdin() {
    let server = bearer_registry();
    let home = tempfile::tempdir().unwrap();
    let login = ["--username", "alice", "--password-stdin"];
    let (out, dir) = pull_tiny(home.path(), &server.base(), &login, Some("s3cret\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("tiny-1.0.0.tgz").exists());
    assert!(!stdout(&out).contains("s3cret") && !stderr(&out).contains("s3cret"));

    // Wrong password: a clear refusal naming where the credential came from, never the secret.
    let (out, _) = pull_tiny(home.path(), &server.base(), &login, Some("hunter2\n"));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("refused the credentials from --username/--password-stdin"), "{err}");
    assert!(!err.contains("hunter2") && !err.contains("minted-token"), "{err}");

    // No credentials: the anonymous token request is refused and the user is told how to log in.
    let repo = format!("oci://{}/charts/tiny", server.base());
    let out = run(home.path(), &["versions", &repo, "--plain-http"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("helm registry login"), "{}", stderr(&out));
}

#[test]
fn bearer_challenge_with_docker_config_credentials() {
    let server = bearer_registry();
    let home = tempfile::tempdir().unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
    std::fs::create_dir_all(home.path().join(".docker")).unwrap();
    std::fs::write(home.path().join(".docker/config.json"), format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, server.base())).unwrap();
    let (out, _) = pull_tiny(home.path(), &server.base(), &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let token_requests = server.requests().iter().filter(|r| r.path() == "/token").count();
    assert_eq!(token_requests, 1, "the token is reused across requests of one run");
}

#[test]
fn transient_server_errors_are_retried() {
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let failures = Arc::new(AtomicUsize::new(0));
    let counter = failures.clone();
    let server = Server::start(move |req| {
        if req.path().contains("/manifests/") && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            return Response::new(500, "boom");
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    let home = tempfile::tempdir().unwrap();
    let (out, _) = pull_tiny(home.path(), &server.base(), &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest_requests = server.requests().iter().filter(|r| r.path().contains("/manifests/")).count();
    assert_eq!(manifest_requests, 2);

    // A server that keeps failing gives up after the retries, naming the status.
    let server = Server::start(|_| Response::new(503, r#"{"errors":[{"code":"UNAVAILABLE","message":"down for maintenance"}]}"#));
    let out = run(home.path(), &["versions", &format!("oci://{}/charts/tiny", server.base()), "--plain-http"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("answered 503 for the tag list: UNAVAILABLE down for maintenance"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 4, "one try and three retries");
}

/// The registry's `Retry-After` sets the wait before the retry (our backoff alone would be 250 ms).
#[test]
fn retry_after_is_honoured() {
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let failures = Arc::new(AtomicUsize::new(0));
    let counter = failures.clone();
    let server = Server::start(move |req| {
        if req.path().contains("/manifests/") && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            return Response::new(429, r#"{"errors":[{"code":"TOOMANYREQUESTS"}]}"#).header("Retry-After", "2");
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    let home = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (out, _) = pull_tiny(home.path(), &server.base(), &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= std::time::Duration::from_secs(2), "retried after {:?}", started.elapsed());
    assert_eq!(failures.load(Ordering::SeqCst), 2, "one 429, then the manifest");
}

/// `--password-stdin` is read once even when a command talks to the registry several times
/// (`diff` pulls two charts; before, the second pull read an empty password).
#[test]
fn password_from_stdin_serves_every_request_of_a_run() {
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let expected = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("me:pw-from-stdin"));
    let server = Server::start(move |req| {
        if req.header("authorization") != Some(expected.as_str()) {
            return Response::new(401, "").header("WWW-Authenticate", "Basic realm=\"r\"");
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    let home = tempfile::tempdir().unwrap();
    let repo = format!("oci://{}/charts/tiny", server.base());
    let out = run_with_stdin(
        home.path(),
        &["diff", "--from", "1.0.0", "--to", "1.0.0", "--repo", &repo, "--plain-http", "--username", "me", "--password-stdin"],
        Some("pw-from-stdin\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("tiny 1.0.0 → tiny 1.0.0"), "{}", stdout(&out));
}
