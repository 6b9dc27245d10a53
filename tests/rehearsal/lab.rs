//! One rehearsal's world: a fresh control plane (etcd, kube-apiserver and kube-controller-manager
//! 1.36.1), a real
//! `docker-registry` holding the corpus charts (pushed by the real `helm push`) and the relabelled
//! 2.3.x/2.4.0 charts (the 2.3.0 chart re-packaged by the real `helm package --version`, so only
//! Chart.yaml's version differs), the stand-in for the scheduler and kubelet, and
//! one shell environment — `PATH` with the built `kubectl`/`helm` and `trainer-audit` first,
//! `KUBECONFIG` the admin's, Helm's homes and the working directory inside the scenario's own
//! temporary directory — in which every printed command is run with bash exactly as printed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use testkit::controlplane::{self, ControlPlane, Webhooks};
use testkit::standin::{Record, StandIn};

use crate::support;

pub const RELEASE: &str = "kubeflow-trainer";
pub const NAMESPACE: &str = "kubeflow-system";
/// No command of a rehearsal may run longer (printed upgrades say `--timeout 10m`; a scenario
/// whose upgrade is expected to hang stops it itself, see [`Lab::shell_until`]).
pub const COMMAND_LIMIT: Duration = Duration::from_secs(240);
/// Versions the tests make from the 2.3.0 chart (no such release exists upstream).
pub const RELABELLED: &[&str] = &["2.3.1", "2.4.0"];

/// Writes straight to the terminal: what a rehearsal observed, worth seeing when it passes.
pub fn note(scenario: &str, line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "[{scenario}] {}", line.trim_end().replace('\n', "\n    "));
}

/// A finished command: exit code and both streams.
#[derive(Debug, Clone)]
pub struct Ran {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    fn from(command: String, out: Output, started: Instant) -> Ran {
        Ran {
            command,
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ {}\nexit {:?} after {:.1} s\nstdout:\n{}\nstderr:\n{}",
            self.command, self.code, self.seconds, self.stdout, self.stderr
        )
    }
}

pub struct Lab {
    pub scenario: &'static str,
    pub corpus: PathBuf,
    pub registry: support::registry::Registry,
    pub cp: ControlPlane,
    /// The scenario's directory: Helm's homes, the shell's working directory, kept files.
    pub dir: tempfile::TempDir,
    standin: Option<StandIn>,
    /// Stand-in records of every stand-in stopped so far, in order.
    pub records: Vec<Record>,
    started: Instant,
    /// Admission webhooks on this scenario's control planes (and the controllers run for them).
    webhooks: Webhooks,
    /// The first version the scenario pushes: the one it installs.
    from: String,
    /// The Helm release and the namespace Trainer is installed as (`kubeflow-trainer` in
    /// `kubeflow-system` unless the scenario says otherwise: [`Lab::start_as`]).
    pub release: &'static str,
    pub namespace: &'static str,
}

impl Lab {
    /// The world for `scenario` with `versions` in the registry, or None (after a SKIPPED line)
    /// when the control plane, bubblewrap or docker-registry are missing outside CI.
    /// Admission webhooks are on and the controllers run as their Pods (issue 22).
    pub fn start(scenario: &'static str, versions: &[&str]) -> Option<Lab> {
        Self::start_with(scenario, versions, Webhooks::On)
    }

    /// [`Self::start`] for Trainer installed as release `release` in `namespace`.
    pub fn start_as(scenario: &'static str, versions: &[&str], release: &'static str, namespace: &'static str) -> Option<Lab> {
        let mut lab = Self::start(scenario, versions)?;
        lab.release = release;
        lab.namespace = namespace;
        Some(lab)
    }

    /// [`Self::start`] with admission webhooks as asked: with [`Webhooks::On`] the stand-in runs
    /// each controller Pod whose image has a built binary (`testkit::standin`).
    pub fn start_with(scenario: &'static str, versions: &[&str], webhooks: Webhooks) -> Option<Lab> {
        let corpus = support::corpus();
        if !testkit::standin::sandbox::available() {
            assert!(!controlplane::in_ci(), "{scenario}: bwrap is not installed; `cargo xtask test` installs Debian's bubblewrap");
            controlplane::skipped(scenario, "bwrap is not installed (`cargo xtask test` installs Debian's bubblewrap)");
            return None;
        }
        let registry = support::registry::Registry::start()?;
        let cp = controlplane::fresh_with_or_skip(scenario, webhooks)?;
        let dir = tempfile::Builder::new().prefix(&format!("rehearsal-{scenario}-")).tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("run")).unwrap();
        let lab = Lab {
            scenario,
            corpus,
            registry,
            cp,
            dir,
            standin: None,
            records: Vec::new(),
            started: Instant::now(),
            webhooks,
            from: versions.first().map(|v| v.to_string()).unwrap_or_default(),
            release: RELEASE,
            namespace: NAMESPACE,
        };
        lab.note(&format!("control plane up in {:.1} s", lab.cp.startup.as_secs_f64()));
        for version in versions {
            lab.push_chart(version);
        }
        Some(lab)
    }

    pub fn note(&self, line: &str) {
        note(self.scenario, line);
    }

    /// Seconds since the scenario started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// `oci://127.0.0.1:PORT/kubeflow/charts/kubeflow-trainer`.
    pub fn repo(&self) -> String {
        format!("oci://{}/kubeflow/charts/kubeflow-trainer", self.registry.host())
    }

    /// The working directory of every shell command (backups land here).
    pub fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// Pushes a corpus chart with the real `helm push`; a relabelled version is the 2.3.0 chart
    /// unpacked and re-packaged by `helm package --version V` (Helm rewrites Chart.yaml's
    /// version and nothing else that the chart renders).
    fn push_chart(&self, version: &str) {
        let archive = if RELABELLED.contains(&version) {
            let work = self.dir.path().join(format!("relabel-{version}"));
            std::fs::create_dir_all(&work).unwrap();
            let source = self.corpus.join("charts/kubeflow-trainer-2.3.0.tgz");
            let untar = Command::new("tar").arg("-xzf").arg(&source).arg("-C").arg(&work).status().unwrap();
            assert!(untar.success(), "untar {}", source.display());
            let package = self.shell_ok(&format!(
                "helm package {} --version {version} -d {}",
                work.join("kubeflow-trainer").display(),
                work.display()
            ));
            assert!(package.stdout.contains(&format!("kubeflow-trainer-{version}.tgz")), "{package}");
            work.join(format!("kubeflow-trainer-{version}.tgz"))
        } else {
            self.corpus.join(format!("charts/kubeflow-trainer-{version}.tgz"))
        };
        let repo = format!("oci://{}/kubeflow/charts", self.registry.host());
        self.shell_ok(&format!("helm push {} {repo} --plain-http", archive.display()));
    }

    /// The environment every command runs in: nothing from the machine but `PATH` (after the
    /// built tools and `trainer-audit`), the admin kubeconfig, and homes inside the scenario.
    pub fn env(&self) -> Vec<(String, String)> {
        let home = self.dir.path().join("home");
        let audit = Path::new(env!("CARGO_BIN_EXE_trainer-audit")).parent().unwrap().to_path_buf();
        let path = std::env::join_paths(
            [self.cp.bin.clone(), audit].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .unwrap();
        vec![
            ("PATH".into(), path.to_string_lossy().into_owned()),
            ("HOME".into(), home.display().to_string()),
            ("KUBECONFIG".into(), self.cp.admin_kubeconfig.display().to_string()),
            ("HELM_CACHE_HOME".into(), home.join("cache").display().to_string()),
            ("HELM_CONFIG_HOME".into(), home.join("config").display().to_string()),
            ("HELM_DATA_HOME".into(), home.join("data").display().to_string()),
            ("TRAINER_AUDIT_CACHE_DIR".into(), home.join("trainer-audit-cache").display().to_string()),
            ("LANG".into(), "C.UTF-8".into()),
        ]
    }

    /// Runs `script` with `bash -euo pipefail` in [`Self::run_dir`]: how the rehearsals run every
    /// printed command and runbook block (one bash process per block; the first failing command
    /// stops the block, as it should stop a person).
    pub fn shell(&self, script: &str) -> Ran {
        let started = Instant::now();
        let ran = self.shell_until(script, &|| started.elapsed() > COMMAND_LIMIT);
        assert!(ran.code.is_some(), "[{}] killed after {COMMAND_LIMIT:?}, the rehearsals' bound on one command:\n{ran}", self.scenario);
        ran
    }

    /// [`Self::shell`] whose process group (bash and what it started) is killed with SIGKILL —
    /// as when a CI runner dies — once `stop` says so (polled every 200 ms).
    pub fn shell_until(&self, script: &str, stop: &dyn Fn() -> bool) -> Ran {
        let started = Instant::now();
        let mut command = Command::new("bash");
        command
            .args(["-euo", "pipefail", "-c", script])
            .current_dir(self.run_dir())
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().unwrap();
        let pid = child.id();
        // Drain the pipes meanwhile, so a chatty command cannot block on a full pipe.
        let mut out_pipe = child.stdout.take().unwrap();
        let mut err_pipe = child.stderr.take().unwrap();
        let out_thread = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = std::io::Read::read_to_end(&mut out_pipe, &mut buf);
            buf
        });
        let err_thread = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = std::io::Read::read_to_end(&mut err_pipe, &mut buf);
            buf
        });
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if stop() {
                let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let out = Output { status, stdout: out_thread.join().unwrap_or_default(), stderr: err_thread.join().unwrap_or_default() };
        Ran::from(script.to_string(), out, started)
    }

    pub fn shell_ok(&self, script: &str) -> Ran {
        let ran = self.shell(script);
        if !ran.ok() {
            let records = self.standin_records();
            let last = &records[records.len().saturating_sub(30)..];
            panic!("[{}] a setup command failed:\n{ran}\nthe stand-in's last records: {last:#?}", self.scenario);
        }
        ran
    }

    /// `kubectl get … -o json` as the admin.
    pub fn get_json(&self, what: &str) -> Json {
        let ran = self.shell_ok(&format!("kubectl get {what} -o json"));
        serde_json::from_str(&ran.stdout).unwrap()
    }

    /// Runs `trainer-audit ARGS --kubeconfig <admin>` (live, read-only).
    pub fn audit(&self, args: &[&str]) -> Ran {
        self.audit_as(&self.cp.admin_kubeconfig, args)
    }

    /// Runs `trainer-audit ARGS` with no kubeconfig argument (snapshots, `rbac`).
    pub fn audit_offline(&self, args: &[&str]) -> Ran {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
            .args(args)
            .current_dir(self.run_dir())
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Ran::from(format!("trainer-audit {}", args.join(" ")), out, started)
    }

    pub fn audit_as(&self, kubeconfig: &Path, args: &[&str]) -> Ran {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
            .args(args)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .current_dir(self.run_dir())
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Ran::from(format!("trainer-audit {} --kubeconfig {}", args.join(" "), kubeconfig.display()), out, started)
    }

    /// Starts the stand-in on the release namespace (the namespace may not exist yet). A
    /// relabelled chart's manager image (`…:v2.4.0`) runs the 2.3.0 manager: the chart is 2.3.0's.
    /// The `latest` tag (the 2.0.x charts' default, with no version label on the Pod) runs the
    /// manager of the version the scenario installs: what `latest` was when that chart was.
    pub fn standin_start(&mut self) {
        assert!(self.standin.is_none(), "stand-in already running");
        let manager = |v: &str| format!("trainer-controller-manager-v{v}");
        let mut aliases: std::collections::BTreeMap<String, String> = RELABELLED.iter().map(|v| (manager(v), manager("2.3.0"))).collect();
        aliases.insert("trainer-controller-manager-latest".into(), manager(&self.from));
        self.standin = Some(StandIn::start_aliased(&self.cp, self.namespace, aliases).unwrap());
    }

    /// What the running stand-in's controller Pods logged so far, Pod by Pod.
    pub fn controller_logs(&self) -> String {
        let logs = self.standin.as_ref().map(|s| s.controller_logs()).unwrap_or_default();
        logs.iter().map(|(pod, log)| format!("--- {pod}\n{log}")).collect::<Vec<_>>().join("\n")
    }

    /// The running stand-in's live record list (None when none runs).
    pub fn standin_shared_records(&self) -> Option<std::sync::Arc<std::sync::Mutex<Vec<Record>>>> {
        self.standin.as_ref().map(|s| s.shared_records())
    }

    /// What the running stand-in recorded so far (empty when none runs).
    pub fn standin_records(&self) -> Vec<Record> {
        self.standin.as_ref().map(|s| s.records()).unwrap_or_default()
    }

    /// Stops the stand-in; its records join [`Self::records`] and are returned. A stand-in API
    /// failure fails the scenario: the outcome would be ours, not the cluster's.
    pub fn standin_stop(&mut self) -> Vec<Record> {
        let Some(standin) = self.standin.take() else { return Vec::new() };
        let records = standin.stop();
        let errors: Vec<&Record> = records.iter().filter(|r| matches!(r, Record::Error { .. })).collect();
        assert!(errors.is_empty(), "[{}] the stand-in failed: {errors:#?}", self.scenario);
        self.records.extend(records.iter().cloned());
        records
    }

    /// A fresh control plane in place of this one (same registry, same scenario directory, a
    /// new working directory): the "reset" between the un-fixed and the runbook run.
    pub fn reset(&mut self) {
        self.standin_stop();
        let fresh = ControlPlane::start_with(self.webhooks)
            .unwrap_or_else(|e| panic!("[{}] the second control plane failed to start: {e}", self.scenario));
        self.cp = fresh;
        let run = self.run_dir();
        let _ = std::fs::remove_dir_all(&run);
        std::fs::create_dir_all(&run).unwrap();
        let _ = std::fs::remove_dir_all(self.dir.path().join("home/cache"));
        self.records.clear();
        self.note(&format!("reset: a fresh control plane in {:.1} s", self.cp.startup.as_secs_f64()));
    }

    /// `helm list` for the release namespace: (status, chart) of the release (Helm 4 lists every
    /// status by default, an uninstalled one kept in history too).
    pub fn release(&self) -> (String, String) {
        let ran = self.shell_ok(&format!("helm list -n {} -o json", self.namespace));
        let list: Json = serde_json::from_str(&ran.stdout).unwrap();
        let release = list.as_array().and_then(|l| l.iter().find(|r| r["name"] == self.release)).cloned().unwrap_or(Json::Null);
        (release["status"].as_str().unwrap_or("absent").to_string(), release["chart"].as_str().unwrap_or("").to_string())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(standin) = self.standin.take() {
            standin.stop();
        }
        note(self.scenario, &format!("wall time {:.0} s", self.elapsed()));
    }
}
