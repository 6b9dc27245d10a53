//! What `oci-client` 0.18 cannot do that our registry client (`src/source/oci/`) must. Each test
//! drives oci-client's own API against the in-test server and, where the binary is meant to
//! succeed, runs trainer-audit against the same server. They back the README's design note on
//! why the distribution protocol is ours: when an oci-client upgrade lifts a limitation, its test
//! fails, and that part should move to the crate.

mod support;

use std::future::Future;
use std::sync::{Arc, OnceLock};

use base64::Engine;
use oci_client::client::{ClientConfig, ClientProtocol, TagResponse};
use oci_client::errors::{OciDistributionError, OciEnvelope, OciErrorCode};
use oci_client::manifest::OCI_IMAGE_MEDIA_TYPE;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use support::http::{Request, Response, Server};
use support::{chart_routes, pull_tiny, run, stderr, stdout, tiny_chart};

const MIB: u64 = 1024 * 1024;

fn oci() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::try_from(ClientConfig { protocol: ClientProtocol::Http, ..Default::default() }).unwrap()
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

fn tiny(server: &Server, tag: &str) -> Reference {
    Reference::with_tag(server.base(), "charts/tiny".into(), tag.into())
}

/// A server whose handler may name its own port (token realms are absolute URLs).
fn server_with_port(handler: impl Fn(&Request, u16) -> Response + Send + Sync + 'static) -> Server {
    let port = Arc::new(OnceLock::<u16>::new());
    let seen = port.clone();
    let server = Server::start(move |req| handler(req, *seen.get().unwrap()));
    port.set(server.port).unwrap();
    server
}

fn bearer_challenge(port: u16) -> String {
    format!("Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test-registry\",scope=\"repository:charts/tiny:pull\"")
}

fn count(server: &Server, wanted: impl Fn(&Request) -> bool) -> usize {
    server.requests().iter().filter(|&r| wanted(r)).count()
}

/// distribution-spec v1.1.1 (spec.md, "Listing Tags") lets a registry answer fewer than `n` tags
/// when it sends a `Link` header and tells clients to prefer that link over `last`; Quay, for
/// one, puts an opaque cursor there (opencontainers/distribution-spec#116). `list_tags` returns
/// only `name` and `tags`, so the link is lost and `last` is all a caller can send.
#[test]
fn tag_listing_cannot_follow_a_link_header() {
    let mut tags: Vec<String> = (0..250).map(|i| format!("1.0.{i}")).collect();
    tags.sort();
    let server = Server::start(move |req| {
        if req.path() != "/v2/charts/tiny/tags/list" {
            return Response::new(200, "{}"); // oci-client's `/v2/` probe
        }
        // Pages by its own cursor and ignores `last`, as such registries do.
        let page: usize = req.target.split("cursor=").nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = serde_json::json!({"name": "charts/tiny", "tags": tags.iter().skip(page * 100).take(100).collect::<Vec<_>>()});
        let mut response = Response::new(200, body.to_string()).header("Content-Type", "application/json");
        if (page + 1) * 100 < tags.len() {
            response = response.header("Link", &format!("</v2/charts/tiny/tags/list?cursor={}>; rel=\"next\"", page + 1));
        }
        response
    });

    let client = oci();
    let reference = tiny(&server, "latest");
    // The whole answer, destructured without `..`: there is no field for the link.
    let TagResponse { name: _, tags: first } = block_on(client.list_tags(&reference, &RegistryAuth::Anonymous, Some(100), None)).unwrap();
    assert_eq!(first.len(), 100);
    let next = block_on(client.list_tags(&reference, &RegistryAuth::Anonymous, Some(100), first.last().map(String::as_str))).unwrap();
    assert_eq!(next.tags, first, "through oci-client the listing never gets past the first page");

    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["versions", &format!("oci://{}/charts/tiny", server.base()), "--plain-http", "--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 250, "trainer-audit follows the link to every page");
}

/// Manifests, tag pages, token answers and error bodies are read whole (`bytes()`/`text()` inside
/// oci-client; no parameter bounds them), so a registry decides how much memory a pull takes.
/// Ours stops at 4 MiB, 16 MiB, 1 MiB and 64 KiB (`tests/hostile.rs` sends 600 MiB of each).
#[test]
fn bodies_are_read_whole_without_a_bound() {
    let client = oci();

    let server = Server::start(|req| {
        if req.path().contains("/manifests/") {
            return Response::filled(200, "", b' ', 8 * MIB, "{}").header("Content-Type", OCI_IMAGE_MEDIA_TYPE);
        }
        Response::new(200, "{}")
    });
    let (manifest, _) =
        block_on(client.pull_manifest_raw(&tiny(&server, "1.0.0"), &RegistryAuth::Anonymous, &[OCI_IMAGE_MEDIA_TYPE])).unwrap();
    assert_eq!(manifest.len() as u64, 8 * MIB + 2, "an 8 MiB manifest (twice our limit) is taken whole");

    let server = Server::start(|req| {
        if req.path().ends_with("/tags/list") {
            return Response::filled(200, r#"{"name":"charts/tiny","tags":[""#, b'a', 20 * MIB, r#""]}"#);
        }
        Response::new(200, "{}")
    });
    let page = block_on(oci().list_tags(&tiny(&server, "latest"), &RegistryAuth::Anonymous, None, None)).unwrap();
    assert_eq!(page.tags[0].len() as u64, 20 * MIB, "a 20 MiB tag page (our limit is 16 MiB) is taken whole");

    let digest = format!("sha256:{}", "a".repeat(64));
    let server = Server::start(|req| {
        if req.path().contains("/blobs/") {
            return Response::filled(404, "", b'x', 8 * MIB, "");
        }
        Response::new(200, "{}")
    });
    match block_on(oci().pull_blob_stream(&tiny(&server, "1.0.0"), digest.as_str())) {
        Err(OciDistributionError::ServerError { code, url: _, message }) => {
            assert_eq!(code, 404);
            assert_eq!(message.len() as u64, 8 * MIB, "the whole error body is kept in the error");
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a 404 was taken for a blob"),
    }

    let server = server_with_port(|req, port| match req.path() {
        "/token" => Response::filled(200, r#"{"token":""#, b'a', 8 * MIB, r#""}"#),
        _ => Response::new(401, "").header("WWW-Authenticate", &bearer_challenge(port)),
    });
    let token = block_on(oci().auth(&tiny(&server, "1.0.0"), &RegistryAuth::Anonymous, RegistryOperation::Pull)).unwrap();
    assert_eq!(token.map(|t| t.len() as u64), Some(8 * MIB), "an 8 MiB token answer is taken whole");
}

/// A 429 or 503 reaches the caller as `RegistryError { envelope, url }` or
/// `ServerError { code, url, message }` (matched below without `..`): no headers, so a retry layer
/// on top cannot wait as long as the registry's `Retry-After` asks. oci-client does not retry
/// itself either. Ours honours `Retry-After` (`registry_protocol::retry_after_is_honoured`).
#[test]
fn errors_do_not_carry_retry_after() {
    let server = Server::start(|req| {
        let path = req.path();
        if path.contains("/manifests/") {
            let body = r#"{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}"#;
            return Response::new(429, body).header("Retry-After", "7");
        }
        if path.contains("/blobs/") {
            return Response::new(503, "busy").header("Retry-After", "7");
        }
        Response::new(200, "{}")
    });
    let client = oci();
    let reference = tiny(&server, "1.0.0");
    match block_on(client.pull_manifest_raw(&reference, &RegistryAuth::Anonymous, &[OCI_IMAGE_MEDIA_TYPE])) {
        Err(OciDistributionError::RegistryError { envelope: OciEnvelope { errors }, url: _ }) => {
            assert_eq!(errors[0].code, OciErrorCode::Toomanyrequests);
        }
        other => panic!("unexpected answer: {:?}", other.map(|(bytes, _)| bytes.len())),
    }
    let digest = format!("sha256:{}", "a".repeat(64));
    match block_on(client.pull_blob_stream(&reference, digest.as_str())) {
        Err(OciDistributionError::ServerError { code, url: _, message: _ }) => assert_eq!(code, 503),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a 503 was taken for a blob"),
    }
    assert_eq!(count(&server, |r| r.path().contains("/blobs/")), 1, "no retry inside oci-client");
}

/// Docker's `identitytoken` is an OAuth2 refresh token, exchanged by POSTing
/// `grant_type=refresh_token` to the realm (distribution v3.0.0, docs/content/spec/auth/oauth.md).
/// `RegistryAuth` has three variants (matched below without a wildcard) and none of them is that:
/// as `Bearer` the refresh token goes to the registry as if it were an access token, as `Basic` it
/// is sent to the realm by GET.
#[test]
fn a_refresh_token_cannot_be_exchanged() {
    fn kind(auth: &RegistryAuth) -> &'static str {
        match auth {
            RegistryAuth::Anonymous => "anonymous",
            RegistryAuth::Basic(_, _) => "basic",
            RegistryAuth::Bearer(_) => "bearer",
        }
    }
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let server = server_with_port(move |req, port| {
        if req.path() == "/token" {
            let body = String::from_utf8_lossy(&req.body);
            return if req.method == "POST" && body.contains("grant_type=refresh_token") && body.contains("refresh_token=rt-123") {
                Response::new(200, r#"{"access_token":"at-456"}"#)
            } else {
                Response::new(401, r#"{"details":"refresh tokens only"}"#)
            };
        }
        if req.header("authorization") != Some("Bearer at-456") {
            return Response::new(401, "").header("WWW-Authenticate", &bearer_challenge(port));
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    let reference = tiny(&server, "1.0.0");

    let as_bearer = RegistryAuth::Bearer("rt-123".into());
    let answer = block_on(oci().pull_manifest_raw(&reference, &as_bearer, &[OCI_IMAGE_MEDIA_TYPE]));
    assert!(matches!(answer, Err(OciDistributionError::UnauthorizedError { .. })), "{} was refused", kind(&as_bearer));
    assert_eq!(count(&server, |r| r.path() == "/token"), 0, "the refresh token was never exchanged");
    assert!(count(&server, |r| r.header("authorization") == Some("Bearer rt-123")) > 0, "it went to the registry as is");

    let as_basic = RegistryAuth::Basic("<token>".into(), "rt-123".into());
    let answer = block_on(oci().auth(&reference, &as_basic, RegistryOperation::Pull));
    assert!(matches!(answer, Err(OciDistributionError::AuthenticationFailure(_))), "{} was refused", kind(&as_basic));
    assert!(server.requests().iter().filter(|r| r.path() == "/token").all(|r| r.method == "GET"), "never a POST grant");

    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".docker")).unwrap();
    let config = format!(r#"{{"auths":{{"{}":{{"username":"<token>","identitytoken":"rt-123"}}}}}}"#, server.base());
    std::fs::write(home.path().join(".docker/config.json"), config).unwrap();
    let (out, dir) = pull_tiny(home.path(), &server.base(), &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("tiny-1.0.0.tgz").exists());
    assert!(!stderr(&out).contains("rt-123") && !stdout(&out).contains("rt-123"));
}

/// The token flow starts from the 401 of the request itself (distribution v3.0.0,
/// docs/content/spec/auth/token.md, steps 1–2); oci-client looks for a challenge only at `/v2/`.
/// A registry that lets `/v2/` through but challenges the repository is never answered.
#[test]
fn a_challenge_on_the_repository_is_not_answered() {
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer);
    let good_basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("alice:s3cret"));
    let server = server_with_port(move |req, port| {
        match req.path() {
            "/v2/" => return Response::new(200, "{}"),
            "/token" if req.header("authorization") == Some(good_basic.as_str()) => return Response::new(200, r#"{"token":"t-789"}"#),
            "/token" => return Response::new(401, ""),
            _ => {}
        }
        if req.header("authorization") != Some("Bearer t-789") {
            return Response::new(401, "").header("WWW-Authenticate", &bearer_challenge(port));
        }
        routes(req).unwrap_or_else(|| Response::new(404, ""))
    });
    let reference = tiny(&server, "1.0.0");
    let auth = RegistryAuth::Basic("alice".into(), "s3cret".into());
    let client = oci();
    assert_eq!(block_on(client.auth(&reference, &auth, RegistryOperation::Pull)).unwrap(), None, "no challenge at /v2/");
    let answer = block_on(client.pull_manifest_raw(&reference, &auth, &[OCI_IMAGE_MEDIA_TYPE]));
    assert!(matches!(answer, Err(OciDistributionError::UnauthorizedError { .. })));
    assert_eq!(count(&server, |r| r.path() == "/token"), 0, "the repository's challenge was never answered");

    let home = tempfile::tempdir().unwrap();
    let login = ["--username", "alice", "--password-stdin"];
    let (out, dir) = pull_tiny(home.path(), &server.base(), &login, Some("s3cret\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("tiny-1.0.0.tgz").exists());
}

/// oci-client turns a token it fetched into a header with `.parse().unwrap()` (client.rs,
/// `apply_auth`), so a token endpoint answering a token with a control character makes it panic.
/// Ours refuses such a token with an error (exit 2).
#[test]
fn a_token_with_a_control_character_panics() {
    let server = server_with_port(|req, port| match req.path() {
        "/token" => Response::new(200, r#"{"token":"good\nbad"}"#),
        _ => Response::new(401, "").header("WWW-Authenticate", &bearer_challenge(port)),
    });
    let reference = tiny(&server, "1.0.0");
    let outcome = std::thread::spawn(move || {
        let _ = block_on(oci().pull_manifest_raw(&reference, &RegistryAuth::Anonymous, &[OCI_IMAGE_MEDIA_TYPE]));
    })
    .join();
    assert!(outcome.is_err(), "oci-client panicked on the token");

    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["versions", &format!("oci://{}/charts/tiny", server.base()), "--plain-http"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("panicked") && err.contains("token that cannot be sent"), "{err}");
}
