//! Flags shared by every command that talks to a registry, and the client options they make.

use std::io::Read;
use std::time::Duration;

use clap::Args;

use super::CliError;
use crate::source::oci::credentials::{Credential, CredentialStores, FoundCredential, Secret};
use crate::source::oci::{ClientOptions, CredentialSource};

#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Use plain HTTP for the registry (never done silently)
    #[arg(long)]
    pub plain_http: bool,
    /// Registry user name (the password comes from --password-stdin)
    #[arg(long, requires = "password_stdin", value_name = "USER")]
    pub username: Option<String>,
    /// Read the registry password or token from standard input
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Seconds one registry request may take
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// The options once built: standard input can be read only once, and `check` talks to the
    /// registry several times.
    #[arg(skip)]
    pub built: std::sync::OnceLock<ClientOptions>,
}

impl RegistryArgs {
    pub fn client_options(&self) -> Result<ClientOptions, CliError> {
        if let Some(built) = self.built.get() {
            return Ok(built.clone());
        }
        let options = self.build_options()?;
        Ok(self.built.get_or_init(|| options).clone())
    }

    fn build_options(&self) -> Result<ClientOptions, CliError> {
        let credentials = match &self.username {
            Some(username) => {
                let mut password = String::new();
                std::io::stdin()
                    .take(64 * 1024)
                    .read_to_string(&mut password)
                    .map_err(|e| CliError::Io(format!("cannot read the password from standard input: {e}")))?;
                let password = password.trim_end_matches(['\n', '\r']).to_string();
                if password.is_empty() {
                    return Err(CliError::Usage("--password-stdin read an empty password from standard input".into()));
                }
                CredentialSource::Given(FoundCredential {
                    credential: Credential::Password { username: username.clone(), password: Secret::new(password) },
                    origin: "--username/--password-stdin".into(),
                })
            }
            None => CredentialSource::Stores(CredentialStores::from_env()),
        };
        Ok(ClientOptions {
            plain_http: self.plain_http,
            timeout: Duration::from_secs(self.timeout),
            credentials,
            ..ClientOptions::default()
        })
    }
}
