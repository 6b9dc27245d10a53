//! Running one container of an admitted Pod on the host, the part of a kubelet the stand-in
//! needs: the container's `command` + `args` under bubblewrap (`bwrap`), in a private mount
//! namespace whose root is a tmpfs holding the host's `/usr` and `/etc` read-only, fresh `/tmp`,
//! `/run` and `/root`, and the Pod's volumes bound at their real absolute `mountPath`s — so
//! `/manifests` or `/var/run/secrets/kubernetes.io/serviceaccount` exist for the container without
//! being created on the host. The network is the host's, so `KUBERNETES_SERVICE_HOST=127.0.0.1`
//! reaches the test API server.
//!
//! What a real node would do differently: the container image is not pulled or used (the host's
//! userland stands in for it: `/bin/sh`, coreutils, grep), `securityContext` is not enforced (the
//! process runs as root in the sandbox; Pod Security admission has already judged the spec), and
//! resources are not limited. Package installs (`apk add …`) are answered by a shim that succeeds
//! for commands the sandbox already has on PATH (the built `kubectl` among them) and fails, as apk
//! would, for anything else.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Directory inside the sandbox holding the `apk` shim and the built `kubectl`.
pub const SHIM_DIR: &str = "/.standin/bin";
/// The container PATH: the shims first, then the usual image PATH.
pub const CONTAINER_PATH: &str = "/.standin/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// Output kept per container (the rest is cut, with a note).
const OUTPUT_LIMIT: u64 = 256 * 1024;

/// One bind mount into the sandbox.
#[derive(Debug, Clone)]
pub struct Mount {
    pub source: PathBuf,
    pub target: String,
    pub read_only: bool,
}

/// Everything needed to run one container.
#[derive(Debug, Clone)]
pub struct Run {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub working_dir: Option<String>,
    pub mounts: Vec<Mount>,
    /// Host directory bound at [`SHIM_DIR`].
    pub shim_dir: PathBuf,
    pub timeout: Duration,
}

/// How a container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, or 137 after the timeout killed it (as a kubelet reports SIGKILL).
    pub code: i32,
    pub output: String,
    pub timed_out: bool,
}

/// Whether bubblewrap is installed (`cargo xtask test` installs Debian's `bubblewrap`).
pub fn available() -> bool {
    Command::new("bwrap").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// `/var/run` is a symlink to `/run` inside the sandbox (as on the host); bind targets are given
/// through the real directory so bwrap never has to resolve the link while creating mount points.
fn in_sandbox(path: &str) -> String {
    match path.strip_prefix("/var/run/") {
        Some(rest) => format!("/run/{rest}"),
        None if path == "/var/run" => "/run".into(),
        None => path.to_string(),
    }
}

/// The `bwrap` argument list for `run` (without the program name).
pub fn bwrap_args(run: &Run) -> Vec<String> {
    let mut args: Vec<String> =
        ["--die-with-parent", "--unshare-pid", "--new-session", "--clearenv"].iter().map(|s| s.to_string()).collect();
    let mut push = |items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));
    push(&["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]);
    // The host's top-level symlinks (usr-merged Debian: /bin -> usr/bin, …), recreated as links.
    for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let host = Path::new("/").join(name);
        match std::fs::read_link(&host) {
            Ok(target) => push(&["--symlink", &target.to_string_lossy(), &format!("/{name}")]),
            Err(_) if host.is_dir() => push(&["--ro-bind", &format!("/{name}"), &format!("/{name}")]),
            Err(_) => {}
        }
    }
    push(&["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run", "--dir", "/var", "--symlink", "../run", "/var/run"]);
    push(&["--dir", "/var/tmp", "--dir", "/root"]);
    push(&["--ro-bind", &run.shim_dir.to_string_lossy(), SHIM_DIR]);
    for mount in &run.mounts {
        let flag = if mount.read_only { "--ro-bind" } else { "--bind" };
        push(&[flag, &mount.source.to_string_lossy(), &in_sandbox(&mount.target)]);
    }
    let mut env: Vec<(String, String)> = vec![("PATH".into(), CONTAINER_PATH.into()), ("HOME".into(), "/root".into())];
    for (key, value) in &run.env {
        env.retain(|(k, _)| k != key);
        env.push((key.clone(), value.clone()));
    }
    for (key, value) in &env {
        push(&["--setenv", key, value]);
    }
    if let Some(dir) = &run.working_dir {
        push(&["--chdir", &in_sandbox(dir)]);
    }
    push(&["--"]);
    args.extend(run.argv.iter().cloned());
    args
}

/// Runs the container to its end (or its timeout) and returns its exit and combined output.
pub fn execute(run: &Run, scratch: &Path) -> std::io::Result<Exit> {
    let log = scratch.join("output.log");
    let file = std::fs::File::create(&log)?;
    let mut child = Command::new("bwrap").args(bwrap_args(run)).stdin(Stdio::null()).stdout(file.try_clone()?).stderr(file).spawn()?;
    let deadline = Instant::now() + run.timeout;
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait()? {
            use std::os::unix::process::ExitStatusExt;
            break (status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(9)), false);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break (137, true);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut bytes = Vec::new();
    std::fs::File::open(&log)?.take(OUTPUT_LIMIT).read_to_end(&mut bytes)?;
    let mut output = String::from_utf8_lossy(&bytes).into_owned();
    if std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) > OUTPUT_LIMIT {
        output.push_str("\n[stand-in: output cut]\n");
    }
    Ok(Exit { code, output, timed_out })
}

/// Writes the `apk` shim into `dir` and links the built `kubectl` beside it.
pub fn write_shims(dir: &Path, kubectl: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    let apk = dir.join("apk");
    std::fs::write(&apk, APK_SHIM)?;
    std::fs::set_permissions(&apk, std::fs::Permissions::from_mode(0o755))?;
    let link = dir.join("kubectl");
    let _ = std::fs::remove_file(&link);
    // A copy, not a symlink: the link's target path would not exist inside the sandbox.
    std::fs::copy(kubectl, &link)?;
    Ok(())
}

/// Answers `apk add [--no-cache] PKG…` from what the sandbox already has: a package is
/// "installed" when a command of that name is on PATH, otherwise the shim fails like apk does.
const APK_SHIM: &str = r#"#!/bin/sh
# apk stand-in (trainer-audit testkit): packages are satisfied by the sandbox's own commands.
if [ "$1" != add ]; then
  echo "apk (stand-in): only 'apk add' is supported, got: $*" >&2
  exit 1
fi
shift
for pkg in "$@"; do
  case "$pkg" in -*) continue ;; esac
  if command -v "$pkg" >/dev/null 2>&1; then
    echo "(stand-in) $pkg: provided by the sandbox ($(command -v "$pkg"))"
  else
    echo "ERROR: unable to select packages:" >&2
    echo "  $pkg (no such package in the stand-in)" >&2
    exit 1
  fi
done
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Run {
        Run {
            argv: vec!["/bin/sh".into(), "-c".into(), "cat /manifests/a && echo $X && pwd".into()],
            env: vec![("X".into(), "from-env".into()), ("PATH".into(), "/custom".into())],
            working_dir: Some("/var/run/work".into()),
            mounts: vec![
                Mount { source: "/host/cm".into(), target: "/manifests".into(), read_only: true },
                Mount { source: "/host/sa".into(), target: "/var/run/secrets/kubernetes.io/serviceaccount".into(), read_only: true },
            ],
            shim_dir: "/host/shims".into(),
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn mounts_land_at_their_paths_and_var_run_goes_through_run() {
        let args = bwrap_args(&sample()).join(" ");
        assert!(args.contains("--ro-bind /host/cm /manifests"), "{args}");
        assert!(args.contains("--ro-bind /host/sa /run/secrets/kubernetes.io/serviceaccount"), "{args}");
        assert!(args.contains("--chdir /run/work"), "{args}");
        assert!(args.contains("--ro-bind /host/shims /.standin/bin"), "{args}");
        assert!(args.ends_with("-- /bin/sh -c cat /manifests/a && echo $X && pwd"), "{args}");
    }

    #[test]
    fn container_env_overrides_the_default_path_once() {
        let args = bwrap_args(&sample());
        let paths: Vec<_> = args.windows(3).filter(|w| w[0] == "--setenv" && w[1] == "PATH").map(|w| w[2].clone()).collect();
        assert_eq!(paths, vec!["/custom".to_string()]);
    }

    /// The real thing: a file bound at an absolute path that does not exist on the host is
    /// readable inside and still absent outside.
    #[test]
    fn runs_with_a_private_mount_namespace() {
        if !available() {
            crate::controlplane::skipped("standin::sandbox::runs_with_a_private_mount_namespace", "bwrap is not installed");
            assert!(!crate::controlplane::in_ci(), "bwrap is not installed; `cargo xtask test` installs Debian's bubblewrap");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cm = dir.path().join("cm");
        std::fs::create_dir_all(&cm).unwrap();
        std::fs::write(cm.join("a"), "payload\n").unwrap();
        let shims = dir.path().join("shims");
        std::fs::create_dir_all(&shims).unwrap();
        let target = format!("/testkit-sandbox-{}", std::process::id());
        let run = Run {
            argv: vec!["/bin/sh".into(), "-c".into(), format!("cat {target}/a; echo $X; exit 3")],
            env: vec![("X".into(), "env-ok".into())],
            working_dir: None,
            mounts: vec![Mount { source: cm, target: target.clone(), read_only: true }],
            shim_dir: shims,
            timeout: Duration::from_secs(30),
        };
        let exit = execute(&run, dir.path()).unwrap();
        assert_eq!(exit.code, 3, "{exit:?}");
        assert_eq!(exit.output, "payload\nenv-ok\n");
        assert!(!Path::new(&target).exists(), "the mount point leaked onto the host");
    }
}
