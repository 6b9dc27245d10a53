//! The real `trainer-audit` binary run as a user runs it, bounded: a clean environment (`PATH`,
//! `HOME` and one chart cache shared by the campaign's runs), both streams drained while it runs,
//! killed at its time limit (a hang is a disagreement, not a stuck campaign).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A finished run.
#[derive(Debug, Clone)]
pub struct Ran {
    pub args: Vec<String>,
    /// None when killed (a signal, or the time limit).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
    pub timed_out: bool,
}

impl Ran {
    /// The command line, for a report.
    pub fn command(&self) -> String {
        format!("trainer-audit {}", trainer_audit::shell::join(self.args.iter().map(String::as_str)))
    }

    /// Whether the process panicked (Rust's panic message, or exit 101).
    pub fn panicked(&self) -> bool {
        self.code == Some(101) || self.stderr.contains("panicked at")
    }
}

pub struct Runner {
    pub binary: PathBuf,
    pub home: PathBuf,
}

impl Runner {
    pub fn run(&self, args: &[String], limit: Duration) -> Ran {
        let started = Instant::now();
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TRAINER_AUDIT_CACHE_DIR", self.home.join("cache"))
            .env("NO_COLOR", "1")
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Ran {
                    args: args.to_vec(),
                    code: None,
                    stdout: String::new(),
                    stderr: format!("cannot start {}: {e}", self.binary.display()),
                    seconds: 0.0,
                    timed_out: false,
                }
            }
        };
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut buf);
                }
                String::from_utf8_lossy(&buf).into_owned()
            })
        };
        let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let mut timed_out = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() > limit => {
                    timed_out = true;
                    let _ = child.kill();
                    break child.wait().ok();
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => break None,
            }
        };
        Ran {
            args: args.to_vec(),
            code: status.and_then(|s| s.code()),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
            seconds: started.elapsed().as_secs_f64(),
            timed_out,
        }
    }
}

/// `--snapshot` arguments for every file of `files`.
pub fn snapshot_args(files: &[&Path]) -> Vec<String> {
    files.iter().flat_map(|f| ["--snapshot".to_string(), f.display().to_string()]).collect()
}
