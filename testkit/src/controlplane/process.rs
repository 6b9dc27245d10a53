//! Child processes of the control plane (etcd, kube-apiserver) and of the stand-in's sandboxes:
//! spawned so that they never outlive the test binary, with their output in a log file whose tail
//! goes into every start-up error.
//!
//! Teardown has two layers because a test binary's statics are never dropped:
//! - every child gets `PR_SET_PDEATHSIG(SIGTERM)`. The signal fires when the *thread* that forked
//!   the child exits, not the process, and libtest runs each test on a short-lived thread, so all
//!   long-lived children are forked by one spawner thread that lives as long as the process;
//! - an `atexit` hook (libtest's `main` returns or calls `exit`) stops the children (SIGTERM, then
//!   SIGKILL after a grace period), reaps them, and removes the run's temporary directories.
#![expect(unsafe_code, reason = "children tied to the test binary's life need libc (atexit, prctl, kill, waitpid)")]

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use super::ControlPlaneError;

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Removes `dir` when the process exits (after the children are stopped).
pub fn remove_at_exit(dir: &Path) {
    install_at_exit();
    if let Ok(mut dirs) = DIRS.lock() {
        dirs.push(dir.to_path_buf());
    }
}

fn install_at_exit() {
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn` with no captured state.
        unsafe {
            libc::atexit(stop_everything);
        }
    });
}

extern "C" fn stop_everything() {
    // try_lock: a thread may have died holding a lock; never block the process's exit on it.
    let pids: Vec<u32> = CHILDREN.try_lock().map(|c| c.clone()).unwrap_or_default();
    for &pid in &pids {
        // SAFETY: signalling our own child by pid.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut alive: Vec<u32> = pids;
    while !alive.is_empty() && Instant::now() < deadline {
        alive.retain(|&pid| {
            // SAFETY: non-blocking reap of our own child.
            let r = unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG) };
            r == 0
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in &alive {
        // SAFETY: as above; the grace period is over.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
        }
    }
    let dirs: Vec<PathBuf> = DIRS.try_lock().map(|d| d.clone()).unwrap_or_default();
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("testkit-spawner".into())
            .spawn(move || {
                // Lives as long as the process: the parent-death signal of its children is tied
                // to this thread.
                for (mut command, reply) in rx {
                    let _ = reply.send(spawn_here(&mut command));
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| panic!("cannot start the testkit spawner thread: {e}"));
        Mutex::new(tx)
    })
}

fn spawn_here(command: &mut Command) -> std::io::Result<Child> {
    // SAFETY: getpid has no preconditions and cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: only async-signal-safe calls (prctl, getppid, kill) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGTERM);
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Spawns `command` from the long-lived spawner thread with its stdout and stderr appended to
/// `log`, and registers it to be stopped when the process exits.
pub fn spawn_logged(mut command: Command, log: &Path) -> Result<Child, ControlPlaneError> {
    install_at_exit();
    let file = std::fs::File::create(log).map_err(|e| ControlPlaneError::Io(format!("creating {}", log.display()), e))?;
    let err = file.try_clone().map_err(|e| ControlPlaneError::Io(format!("opening {}", log.display()), e))?;
    command.stdin(Stdio::null()).stdout(file).stderr(err);
    let program = command.get_program().to_string_lossy().into_owned();
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .map_err(|_| ControlPlaneError::Start {
            component: program.clone(),
            reason: "the spawner lock is poisoned".into(),
            log: String::new(),
        })?
        .send((command, tx))
        .map_err(|_| ControlPlaneError::Start {
            component: program.clone(),
            reason: "the spawner thread is gone".into(),
            log: String::new(),
        })?;
    let child = rx
        .recv()
        .map_err(|_| ControlPlaneError::Start {
            component: program.clone(),
            reason: "the spawner thread is gone".into(),
            log: String::new(),
        })?
        .map_err(|e| ControlPlaneError::Io(format!("starting {program}"), e))?;
    if let Ok(mut children) = CHILDREN.lock() {
        children.push(child.id());
    }
    Ok(child)
}

/// Stops a child started by [`spawn_logged`]: SIGTERM, up to `grace` to exit, then SIGKILL; and
/// forgets it, so the exit hook never signals a recycled pid.
pub fn stop(child: &mut Child, grace: Duration) {
    if let Ok(mut children) = CHILDREN.lock() {
        children.retain(|&pid| pid != child.id());
    }
    // SAFETY: signalling our own, not yet reaped, child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `lines` lines of a log file (bounded read: the last 64 KiB).
pub fn log_tail(log: &Path, lines: usize) -> String {
    let Ok(mut file) = std::fs::File::open(log) else { return format!("(no log at {})", log.display()) };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Polls `probe` until it succeeds, the child exits, or `timeout` passes; errors carry the tail
/// of the component's log.
pub fn wait_ready(
    component: &str,
    child: &mut Child,
    log: &Path,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<(), String>,
) -> Result<(), ControlPlaneError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(ControlPlaneError::Start {
                component: component.into(),
                reason: format!("exited during start-up ({status})"),
                log: log_tail(log, 25),
            });
        }
        let last = match probe() {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if Instant::now() >= deadline {
            return Err(ControlPlaneError::Start {
                component: component.into(),
                reason: format!("not ready within {} s (last probe: {last})", timeout.as_secs()),
                log: log_tail(log, 25),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
