//! Small pieces the control plane needs around its processes: kubeconfig files, readiness probes,
//! and running the built `kubectl`/`helm` with an environment that cannot leak the machine's.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A kubeconfig authenticating with a client certificate (file paths, not inline data, so a
/// failing test's kubeconfig can be read and reused by hand).
pub fn kubeconfig_certs(server: &str, ca: &Path, cert: &Path, key: &Path, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    certificate-authority: {}\n\
         users:\n- name: {user}\n  user:\n    client-certificate: {}\n    client-key: {}\n\
         contexts:\n- name: test\n  context:\n    cluster: test\n    user: {user}\ncurrent-context: test\n",
        ca.display(),
        cert.display(),
        key.display()
    )
}

/// A kubeconfig authenticating with a bearer token (a ServiceAccount's, from TokenRequest).
pub fn kubeconfig_token(server: &str, ca: &Path, token: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    certificate-authority: {}\n\
         users:\n- name: \"{user}\"\n  user:\n    token: {token}\n\
         contexts:\n- name: test\n  context:\n    cluster: test\n    user: \"{user}\"\ncurrent-context: test\n",
        ca.display()
    )
}

/// `GET path` over plain HTTP on 127.0.0.1 (etcd's client port): Ok on a 200.
pub fn http_get_ok(port: u16, path: &str) -> Result<(), String> {
    let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    http_get_ok_on(stream, path)
}

/// `GET path` over plain HTTP on a connected stream: Ok on a 200.
pub fn http_get_ok_on(mut stream: TcpStream, path: &str) -> Result<(), String> {
    stream.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream.take(4096).read_to_end(&mut response).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&response);
    if text.starts_with("HTTP/1.0 200") || text.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        Err(text.lines().next().unwrap_or("empty response").to_string())
    }
}

/// `kubectl get --raw /readyz` with the admin kubeconfig: Ok once every readiness check passes.
pub fn readyz(kubectl: &Path, kubeconfig: &Path) -> Result<(), String> {
    let out = run(kubectl.to_path_buf(), kubeconfig, &["get", "--raw", "/readyz", "--request-timeout=5s"], None, &[]);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("readyz failed").to_string())
    }
}

/// Runs `program` with `--kubeconfig`-equivalent `KUBECONFIG`, a clean environment (PATH only,
/// plus `extra`), optional stdin.
pub fn run(program: PathBuf, kubeconfig: &Path, args: &[&str], stdin: Option<&str>, extra: &[(&str, PathBuf)]) -> Output {
    let mut command = Command::new(&program);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KUBECONFIG", kubeconfig)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !extra.iter().any(|(k, _)| *k == "HOME") {
        // kubectl caches discovery under $HOME/.kube; keep it beside the kubeconfig.
        command.env("HOME", kubeconfig.parent().unwrap_or(Path::new("/tmp")));
    }
    for (key, value) in extra {
        command.env(key, value);
    }
    let child = command.spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return failed_output(&format!("cannot run {}: {e}", program.display())),
    };
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(input.as_bytes());
    }
    child.wait_with_output().unwrap_or_else(|e| failed_output(&format!("waiting for {}: {e}", program.display())))
}

fn failed_output(message: &str) -> Output {
    use std::os::unix::process::ExitStatusExt;
    Output { status: std::process::ExitStatus::from_raw(127 << 8), stdout: Vec::new(), stderr: message.as_bytes().to_vec() }
}
