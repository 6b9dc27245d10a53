//! HTTP transport to one OCI registry: the anonymous-first request, the `WWW-Authenticate`
//! challenge (Basic, or a Bearer token from the realm with the repository scope), retries with
//! backoff on transient failures, timeouts, and errors that name the registry but never a secret.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, RETRY_AFTER, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode};

use super::challenge::{parse_challenges, Challenge};
use super::credentials::{Credential, CredentialStores, FoundCredential};
use super::RegistryError;

/// How a client finds credentials.
#[derive(Debug, Clone)]
pub enum CredentialSource {
    /// `--username` with `--password-stdin`.
    Given(FoundCredential),
    /// Helm's and Docker's config files, consulted only when a registry asks.
    Stores(CredentialStores),
    None,
}

#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub plain_http: bool,
    /// Deadline of one metadata request, and the idle limit while a blob streams.
    pub timeout: Duration,
    pub retries: u32,
    pub backoff: Duration,
    pub credentials: CredentialSource,
    /// The `User-Agent` of every request (`name/version`).
    pub user_agent: String,
    /// The OAuth2 `client_id` sent when a refresh token is exchanged for an access token.
    pub client_id: String,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            plain_http: false,
            timeout: Duration::from_secs(30),
            retries: 3,
            backoff: Duration::from_millis(250),
            credentials: CredentialSource::None,
            user_agent: concat!("chart-source/", env!("CARGO_PKG_VERSION")).to_string(),
            client_id: "chart-source".to_string(),
        }
    }
}

#[derive(Clone)]
enum Authorization {
    Basic(String),
    Bearer(String),
}

pub struct RegistryClient {
    http: reqwest::Client,
    registry: String,
    options: ClientOptions,
    /// Resolved at the first challenge, so anonymous registries never touch credential stores.
    credential: Mutex<Option<Option<FoundCredential>>>,
    /// Per-scope authorization learned from challenges.
    auth: Mutex<HashMap<String, Authorization>>,
}

impl RegistryClient {
    pub fn new(registry: &str, options: ClientOptions) -> Result<RegistryClient, RegistryError> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .user_agent(&options.user_agent)
            .connect_timeout(Duration::from_secs(10).min(options.timeout))
            .read_timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::limited(10))
            .build()
            .map_err(|e| RegistryError::Transport { registry: registry.to_string(), reason: error_chain(&e) })?;
        Ok(RegistryClient { http, registry: registry.to_string(), options, credential: Mutex::new(None), auth: Mutex::new(HashMap::new()) })
    }

    pub fn registry(&self) -> &str {
        &self.registry
    }

    pub fn timeout(&self) -> Duration {
        self.options.timeout
    }

    /// `http(s)://host/v2/<path>`.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.options.plain_http { "http" } else { "https" };
        format!("{scheme}://{}/v2/{path}", self.registry)
    }

    /// GET with auth and retries. `deadline` bounds the whole request (None: only the idle
    /// timeout applies, for streaming bodies). Non-success statuses are returned to the caller,
    /// which knows what a 404 means for its resource.
    pub async fn get(&self, url: &str, accept: &str, scope: &str, deadline: Option<Duration>) -> Result<Response, RegistryError> {
        let mut attempt = 0;
        let mut challenged = false;
        loop {
            let mut request = self.http.get(url).header(ACCEPT, accept);
            if let Some(deadline) = deadline {
                request = request.timeout(deadline);
            }
            if let Some(auth) = self.auth_for(scope) {
                request = request.header(AUTHORIZATION, auth);
            }
            let outcome = request.send().await;
            let response = match outcome {
                Ok(response) => response,
                Err(e) if is_transient(&e) && attempt < self.options.retries => {
                    attempt += 1;
                    tokio::time::sleep(self.backoff(attempt, None)).await;
                    continue;
                }
                Err(e) => return Err(self.transport_error(&e)),
            };
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !challenged {
                challenged = true;
                self.answer_challenge(response.headers(), scope).await?;
                continue;
            }
            if status == StatusCode::UNAUTHORIZED {
                return Err(self.unauthorized());
            }
            if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) && attempt < self.options.retries {
                attempt += 1;
                tokio::time::sleep(self.backoff(attempt, response.headers().get(RETRY_AFTER))).await;
                continue;
            }
            return Ok(response);
        }
    }

    /// Exponential backoff, or the server's `Retry-After` seconds when it gives one (capped).
    pub fn backoff(&self, attempt: u32, retry_after: Option<&reqwest::header::HeaderValue>) -> Duration {
        let server = retry_after.and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        match server {
            Some(secs) => Duration::from_secs(secs.min(10)),
            None => self.options.backoff * 2u32.saturating_pow(attempt.saturating_sub(1)),
        }
    }

    pub fn retries(&self) -> u32 {
        self.options.retries
    }

    fn auth_for(&self, scope: &str) -> Option<String> {
        let auth = self.auth.lock().ok()?.get(scope).cloned()?;
        Some(match auth {
            Authorization::Basic(v) => format!("Basic {v}"),
            Authorization::Bearer(v) => format!("Bearer {v}"),
        })
    }

    fn found_credential(&self) -> Result<Option<FoundCredential>, RegistryError> {
        let mut slot = self.credential.lock().map_err(|_| self.unauthorized())?;
        if let Some(found) = slot.as_ref() {
            return Ok(found.clone());
        }
        let found = match &self.options.credentials {
            CredentialSource::Given(found) => Some(found.clone()),
            CredentialSource::Stores(stores) => stores.lookup(&self.registry).map_err(RegistryError::Credentials)?,
            CredentialSource::None => None,
        };
        *slot = Some(found.clone());
        Ok(found)
    }

    async fn answer_challenge(&self, headers: &HeaderMap, scope: &str) -> Result<(), RegistryError> {
        let challenges: Vec<Challenge> =
            headers.get_all(WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()).flat_map(parse_challenges).collect();
        let credential = self.found_credential()?;
        if let Some(bearer) = challenges.iter().find(|c| c.scheme == "bearer") {
            let token = self.fetch_token(bearer, scope, credential.as_ref()).await?;
            self.remember(scope, Authorization::Bearer(token));
            return Ok(());
        }
        if challenges.iter().any(|c| c.scheme == "basic") {
            return match credential.map(|f| f.credential) {
                Some(Credential::Password { username, password }) => {
                    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{}", password.expose()));
                    self.remember(scope, Authorization::Basic(encoded));
                    Ok(())
                }
                _ => Err(self.unauthorized()),
            };
        }
        Err(RegistryError::Auth { registry: self.registry.clone(), reason: "it answered 401 without a Basic or Bearer challenge".into() })
    }

    fn remember(&self, scope: &str, auth: Authorization) {
        if let Ok(mut map) = self.auth.lock() {
            map.insert(scope.to_string(), auth);
        }
    }

    /// The distribution token flow: GET the realm with service and scope (basic auth when we
    /// have a password), or POST a refresh token when the credential is an identity token.
    async fn fetch_token(&self, challenge: &Challenge, scope: &str, credential: Option<&FoundCredential>) -> Result<String, RegistryError> {
        let realm = challenge
            .param("realm")
            .ok_or_else(|| RegistryError::Auth { registry: self.registry.clone(), reason: "its Bearer challenge names no realm".into() })?;
        let mut url = reqwest::Url::parse(realm).map_err(|_| RegistryError::Auth {
            registry: self.registry.clone(),
            reason: "its Bearer challenge realm is not a URL".into(),
        })?;
        if url.scheme() == "http" && !self.options.plain_http {
            return Err(RegistryError::Auth {
                registry: self.registry.clone(),
                reason: "its token endpoint is plain http; pass --plain-http if that is intended".into(),
            });
        }
        let service = challenge.param("service").unwrap_or("");
        let scope = challenge.param("scope").unwrap_or(scope);
        let request = match credential.map(|f| &f.credential) {
            Some(Credential::IdentityToken { token }) => {
                self.http.post(url).header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded").body(form_encode(&[
                    ("grant_type", "refresh_token"),
                    ("service", service),
                    ("scope", scope),
                    ("client_id", &self.options.client_id),
                    ("refresh_token", token.expose()),
                ]))
            }
            other => {
                {
                    let mut query = url.query_pairs_mut();
                    if !service.is_empty() {
                        query.append_pair("service", service);
                    }
                    query.append_pair("scope", scope);
                }
                let request = self.http.get(url);
                match other {
                    Some(Credential::Password { username, password }) => request.basic_auth(username, Some(password.expose())),
                    _ => request,
                }
            }
        };
        let response = request.timeout(self.options.timeout).send().await.map_err(|e| self.transport_error(&e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(match credential {
                Some(found) => RegistryError::Auth {
                    registry: self.registry.clone(),
                    reason: format!("its token endpoint refused the credentials from {} ({status})", found.origin),
                },
                None => self.unauthorized(),
            });
        }
        #[derive(serde::Deserialize)]
        struct TokenAnswer {
            #[serde(default)]
            token: Option<String>,
            #[serde(default)]
            access_token: Option<String>,
        }
        let body = read_limited(response, 1 << 20).await.map_err(|e| self.transport_error(&e))?;
        let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|_| RegistryError::Auth {
            registry: self.registry.clone(),
            reason: "its token endpoint answered something that is not a token response".into(),
        })?;
        let token = answer.token.or(answer.access_token).filter(|t| !t.is_empty()).ok_or_else(|| RegistryError::Auth {
            registry: self.registry.clone(),
            reason: "its token endpoint answered without a token".into(),
        })?;
        // A token with a control character would otherwise fail every request later with an
        // opaque "builder error"; the token endpoint is the input to name.
        if reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(RegistryError::Auth {
                registry: self.registry.clone(),
                reason: "its token endpoint answered a token that cannot be sent in an HTTP header".into(),
            });
        }
        Ok(token)
    }

    fn unauthorized(&self) -> RegistryError {
        RegistryError::Unauthorized { registry: self.registry.clone() }
    }

    pub fn transport_error(&self, e: &reqwest::Error) -> RegistryError {
        let reason = error_chain(e);
        let lower = reason.to_ascii_lowercase();
        let hint = if !self.options.plain_http
            && (lower.contains("invalidcontenttype") || lower.contains("corrupt message") || lower.contains("wrong version number"))
        {
            "; the registry does not seem to speak TLS: if it is a plain-HTTP registry, pass --plain-http"
        } else if e.is_timeout() {
            "; it did not answer in time (raise --timeout?)"
        } else if lower.contains("dns error") || lower.contains("failed to lookup") {
            "; the host name does not resolve"
        } else if lower.contains("connection refused") {
            "; nothing listens there"
        } else {
            ""
        };
        RegistryError::Transport { registry: self.registry.clone(), reason: format!("{reason}{hint}") }
    }
}

/// Connection failures are worth another try; a timeout is not — a server slower than
/// `--timeout` stays slow, and retrying would multiply the wait.
fn is_transient(e: &reqwest::Error) -> bool {
    !e.is_timeout() && (e.is_connect() || e.is_request() && !e.is_builder())
}

/// Reads a whole (small) body, refusing more than `limit` bytes.
pub async fn read_limited(mut response: Response, limit: usize) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit.saturating_sub(body.len())]);
            body.push(0); // one byte over: the caller sees len() > limit
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error and its sources, joined: reqwest's own Display hides the useful part.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    // URLs in reqwest errors never carry credentials here (they are sent as headers).
    parts.join(": ")
}

fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut serializer = reqwest::Url::parse("http://x/").expect("static URL");
    serializer.query_pairs_mut().extend_pairs(pairs);
    serializer.query().unwrap_or_default().to_string()
}

/// reqwest is built without a bundled crypto provider; rustls' ring provider keeps the build
/// lean (no C toolchain for aws-lc). Installing twice is harmless.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
