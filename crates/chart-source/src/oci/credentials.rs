//! Registry credentials, found the way Helm (through oras-go) finds them: Helm's registry config
//! first, then Docker's `config.json`; in each, a per-host credential helper, then the default
//! `credsStore` helper, then plaintext `auths`. Secrets live in [`Secret`], which never prints.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

/// A password or token. Its `Debug` is redacted and it has no `Display`, so it cannot leak into
/// messages by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// Username and password (Basic auth, or basic auth at the token endpoint).
    Password { username: String, password: Secret },
    /// An OAuth2 refresh token (Docker's `identitytoken`).
    IdentityToken { token: Secret },
}

/// Where a credential came from, for messages ("refused the credentials from …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCredential {
    pub credential: Credential,
    pub origin: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("cannot read registry credentials from {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot read registry credentials from {path}: {source}")]
    Parse { path: String, source: serde_json::Error },
    #[error("cannot read registry credentials from {path}: {reason}")]
    Config { path: String, reason: String },
    #[error("credential helper docker-credential-{helper} failed for {registry}: {reason}")]
    Helper { helper: String, registry: String, reason: String },
}

/// Where to look, resolved from the environment once.
#[derive(Debug, Clone)]
pub struct CredentialStores {
    pub config_files: Vec<PathBuf>,
}

impl CredentialStores {
    /// Helm's registry config (`$HELM_REGISTRY_CONFIG`, else under `$HELM_CONFIG_HOME`,
    /// `$XDG_CONFIG_HOME/helm` or `~/.config/helm`), then Docker's (`$DOCKER_CONFIG` or `~/.docker`).
    pub fn from_env() -> CredentialStores {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = env("HOME");
        let helm = env("HELM_REGISTRY_CONFIG").or_else(|| {
            let helm_home = env("HELM_CONFIG_HOME")
                .or_else(|| env("XDG_CONFIG_HOME").map(|x| x.join("helm")))
                .or_else(|| home.as_ref().map(|h| h.join(".config/helm")))?;
            Some(helm_home.join("registry/config.json"))
        });
        let docker = env("DOCKER_CONFIG").or_else(|| home.as_ref().map(|h| h.join(".docker"))).map(|d| d.join("config.json"));
        CredentialStores { config_files: helm.into_iter().chain(docker).collect() }
    }

    pub fn lookup(&self, registry: &str) -> Result<Option<FoundCredential>, CredentialError> {
        for path in &self.config_files {
            if let Some(found) = lookup_in_file(path, registry)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

#[derive(serde::Deserialize, Default)]
struct ConfigFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(serde::Deserialize, Default)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    identitytoken: Option<String>,
}

fn lookup_in_file(path: &Path, registry: &str) -> Result<Option<FoundCredential>, CredentialError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(CredentialError::Read { path: path.display().to_string(), source }),
    };
    // serde_json's message names line and column only, never the content.
    let config: ConfigFile =
        serde_json::from_str(&text).map_err(|source| CredentialError::Parse { path: path.display().to_string(), source })?;
    let server = server_address(registry);
    let helper = config.cred_helpers.get(&server).or(config.cred_helpers.get(registry)).or(config.creds_store.as_ref());
    if let Some(helper) = helper.filter(|h| !h.is_empty()) {
        return run_helper(helper, &server);
    }
    let entry = config.auths.iter().find(|(key, _)| normalise_key(key) == normalise_key(&server)).map(|(_, e)| e);
    let Some(entry) = entry else { return Ok(None) };
    let origin = format!("{} (auths)", path.display());
    if let Some(token) = entry.identitytoken.as_ref().filter(|t| !t.is_empty()) {
        return Ok(Some(FoundCredential { credential: Credential::IdentityToken { token: Secret::new(token.clone()) }, origin }));
    }
    let (username, password) = match (&entry.auth, &entry.username, &entry.password) {
        (Some(auth), _, _) if !auth.is_empty() => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|s| s.split_once(':').map(|(u, p)| (u.to_string(), p.to_string())));
            decoded.ok_or_else(|| CredentialError::Config {
                path: path.display().to_string(),
                reason: format!("the auths entry for {server} is not base64 of user:password"),
            })?
        }
        (_, Some(u), Some(p)) => (u.clone(), p.clone()),
        _ => return Ok(None),
    };
    Ok(Some(FoundCredential { credential: Credential::Password { username, password: Secret::new(password) }, origin }))
}

/// Docker Hub is stored under its legacy index URL; everything else under `host[:port]`.
fn server_address(registry: &str) -> String {
    match registry {
        "docker.io" | "registry-1.docker.io" | "index.docker.io" => "https://index.docker.io/v1/".to_string(),
        other => other.to_string(),
    }
}

/// `https://host/v1/` and `host` name the same server in Docker's file.
fn normalise_key(key: &str) -> &str {
    let no_scheme = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    no_scheme.split('/').next().unwrap_or(no_scheme)
}

const HELPER_TIMEOUT: Duration = Duration::from_secs(30);

fn run_helper(helper: &str, server: &str) -> Result<Option<FoundCredential>, CredentialError> {
    let fail = |reason: String| CredentialError::Helper { helper: helper.into(), registry: server.into(), reason };
    if !helper.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') {
        return Err(fail("the helper name has characters a program name cannot have".into()));
    }
    let program = format!("docker-credential-{helper}");
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run {program}: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(server.as_bytes());
    }
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > HELPER_TIMEOUT => {
                let _ = child.kill();
                return Err(fail(format!("no answer within {}s", HELPER_TIMEOUT.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    let output = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
        if stderr.contains("credentials not found") {
            return Ok(None);
        }
        return Err(fail(format!("exit status {}", output.status)));
    }
    #[derive(serde::Deserialize)]
    struct HelperAnswer {
        #[serde(rename = "Username", default)]
        username: String,
        #[serde(rename = "Secret", default)]
        secret: String,
    }
    let answer: HelperAnswer = serde_json::from_slice(&output.stdout).map_err(|_| fail("its answer is not the expected JSON".into()))?;
    let origin = format!("credential helper {program}");
    let credential = if answer.username == "<token>" {
        Credential::IdentityToken { token: Secret::new(answer.secret) }
    } else {
        Credential::Password { username: answer.username, password: Secret::new(answer.secret) }
    };
    Ok(Some(FoundCredential { credential, origin }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(files: &[(&str, &str)]) -> (tempfile::TempDir, CredentialStores) {
        let dir = tempfile::tempdir().unwrap();
        let config_files = files
            .iter()
            .map(|(name, body)| {
                let path = dir.path().join(name);
                std::fs::write(&path, body).unwrap();
                path
            })
            .collect();
        (dir, CredentialStores { config_files })
    }

    #[test]
    fn reads_plaintext_auths_with_scheme_variants() {
        let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
        let (_d, stores) =
            store_with(&[("docker.json", &format!(r#"{{"auths":{{"https://reg.example:5000/v1/":{{"auth":"{auth}"}}}}}}"#))]);
        let found = stores.lookup("reg.example:5000").unwrap().unwrap();
        assert_eq!(found.credential, Credential::Password { username: "alice".into(), password: Secret::new("s3cret") });
        assert!(stores.lookup("other.example").unwrap().is_none());
    }

    #[test]
    fn helm_config_wins_over_docker() {
        let (_d, stores) = store_with(&[
            ("helm.json", r#"{"auths":{"reg.example":{"username":"helm","password":"p1"}}}"#),
            ("docker.json", r#"{"auths":{"reg.example":{"username":"docker","password":"p2"}}}"#),
        ]);
        let found = stores.lookup("reg.example").unwrap().unwrap();
        assert!(found.origin.contains("helm.json"));
        assert!(matches!(found.credential, Credential::Password { ref username, .. } if username == "helm"));
    }

    #[test]
    fn identity_tokens_and_missing_helpers() {
        let (_d, stores) = store_with(&[("c.json", r#"{"auths":{"reg.example":{"identitytoken":"rt"}}}"#)]);
        assert_eq!(stores.lookup("reg.example").unwrap().unwrap().credential, Credential::IdentityToken { token: Secret::new("rt") });
        let (_d, stores) = store_with(&[("c.json", r#"{"credHelpers":{"reg.example":"definitely-not-installed"}}"#)]);
        let err = stores.lookup("reg.example").unwrap_err().to_string();
        assert!(err.contains("docker-credential-definitely-not-installed"), "{err}");
    }

    #[test]
    fn broken_config_names_the_file_not_the_content() {
        let (_d, stores) = store_with(&[("c.json", r#"{"auths": {"reg": {"auth": "hunter2-not-json"#)]);
        let err = stores.lookup("reg").unwrap_err().to_string();
        assert!(err.contains("c.json") && !err.contains("hunter2"), "{err}");
    }

    #[test]
    fn secrets_do_not_debug_print() {
        let c = Credential::Password { username: "u".into(), password: Secret::new("hunter2") };
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    #[test]
    fn an_unreadable_config_is_named_and_keeps_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.json");
        std::fs::write(&config, "{not json").unwrap();
        let stores = CredentialStores { config_files: vec![config.clone()] };
        let err = stores.lookup("registry.example").unwrap_err();
        assert!(matches!(err, CredentialError::Parse { .. }), "{err:?}");
        assert!(err.to_string().starts_with(&format!("cannot read registry credentials from {}: ", config.display())), "{err}");
        assert!(std::error::Error::source(&err).is_some());
        // A directory where the file should be: the read fails, and says so.
        let stores = CredentialStores { config_files: vec![dir.path().to_path_buf()] };
        let err = stores.lookup("registry.example").unwrap_err();
        assert!(matches!(err, CredentialError::Read { .. }), "{err:?}");
        assert!(std::error::Error::source(&err).is_some());
    }
}
