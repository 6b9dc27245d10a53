//! trainer-audit as a Helm plugin and as a kubectl plugin, with the real `helm` (4.2.3) and
//! `kubectl` the control-plane build makes (`cargo xtask controlplane`): installed from the
//! repository (`helm plugin install`), found on PATH (`kubectl-trainer_audit`), each run compared
//! with the binary run directly, on snapshots, on live clusters (fake API servers behind a
//! kubeconfig with two contexts) and on a private registry whose credentials `helm registry
//! login` wrote. The krew manifest is checked against krew's rules and installed with the real
//! krew (v0.4.3, built from the Go module proxy) when Go is there. Skipped with a SKIPPED line
//! when the tools are absent outside CI; failing in CI.

mod support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value as Json;
use support::{snapshot, stand_in_chart as fixture, stderr, stdout};
use testkit::controlplane;
use testkit::fake_api::FakeApiServer;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The control plane's bin dir (helm, kubectl), or None after a SKIPPED line (a failure in CI).
fn tools_or_skip(test: &str) -> Option<PathBuf> {
    match controlplane::bin_dir() {
        Ok(dir) => Some(dir),
        Err(e) => {
            assert!(!controlplane::in_ci(), "{test}: {e}");
            controlplane::skipped(test, &e.to_string());
            None
        }
    }
}

/// A sandbox: a home, Helm's directories inside it, and a bin dir holding `trainer-audit` and
/// `kubectl-trainer_audit` (symbolic links to the built binary) first on PATH.
struct Sandbox {
    dir: tempfile::TempDir,
    path: OsString,
}

impl Sandbox {
    fn new(tools: &Path) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_trainer-audit"));
        std::os::unix::fs::symlink(&exe, bin.join("trainer-audit")).unwrap();
        std::os::unix::fs::symlink(&exe, bin.join("kubectl-trainer_audit")).unwrap();
        let system = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths([bin, tools.to_path_buf()].into_iter().chain(std::env::split_paths(&system))).unwrap();
        Sandbox { dir, path }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `program args…` with only this sandbox's environment (and `extra`).
    fn run(&self, program: &str, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let home = self.home();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &home)
            .env("HELM_CACHE_HOME", home.join(".cache/helm"))
            .env("HELM_CONFIG_HOME", home.join(".config/helm"))
            .env("HELM_DATA_HOME", home.join(".local/share/helm"))
            .env("TRAINER_AUDIT_CACHE_DIR", home.join("ta-cache"))
            .stdin(Stdio::null());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    fn direct(&self, args: &[&str]) -> Output {
        self.run("trainer-audit", args, &[])
    }
}

fn text(out: &Output) -> String {
    format!("exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), stdout(out), stderr(out))
}

/// Same exit code and same standard output.
fn assert_same(through: &Output, direct: &Output, what: &str) {
    assert_eq!(through.status.code(), direct.status.code(), "{what}: through the plugin {}\ndirectly {}", text(through), text(direct));
    assert_eq!(stdout(through), stdout(direct), "{what}");
    assert!(!stdout(direct).is_empty(), "{what}: {}", text(direct));
}

fn json(out: &Output) -> Json {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// Two live clusters behind one kubeconfig: context `lab` holds the helm-2.2.1 scenario,
/// `dev` (the current context) helm-2.3.0.
fn clusters(dir: &Path) -> (FakeApiServer, FakeApiServer, PathBuf) {
    let serve = |name: &str| {
        let objects: Vec<Json> = testkit::scenario::scenario(name).unwrap().into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
        FakeApiServer::start(objects, &[], "v1.33.4").unwrap()
    };
    let (lab, dev) = (serve("helm-2.2.1"), serve("helm-2.3.0"));
    let kubeconfig = dir.join("kubeconfig");
    let mut config = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in [("lab", &lab), ("dev", &dev)] {
        config.push_str(&format!("- name: {name}\n  cluster:\n    server: {}\n", server.url()));
    }
    config.push_str("contexts:\n- name: lab\n  context: {cluster: lab, user: u}\n- name: dev\n  context: {cluster: dev, user: u}\n");
    config.push_str("current-context: dev\nusers:\n- name: u\n  user: {token: fake-token}\n");
    std::fs::write(&kubeconfig, config).unwrap();
    (lab, dev, kubeconfig)
}

#[test]
fn kubectl_runs_it_as_kubectl_trainer_audit_with_its_context_kubeconfig_and_namespace() {
    let Some(tools) = tools_or_skip("kubectl_plugin") else { return };
    let sandbox = Sandbox::new(&tools);
    let kubectl = tools.join("kubectl").to_string_lossy().into_owned();
    let listed = sandbox.run(&kubectl, &["plugin", "list"], &[]);
    assert!(stdout(&listed).contains("kubectl-trainer_audit"), "kubectl does not find the plugin: {}", text(&listed));

    let help = sandbox.run(&kubectl, &["trainer-audit", "check", "--help"], &[]);
    assert!(help.status.success(), "{}", text(&help));
    assert!(stdout(&help).contains("Usage: kubectl trainer-audit check [OPTIONS]"), "{}", stdout(&help));
    let wrong = sandbox.run(&kubectl, &["trainer-audit", "check", "--no-such-flag"], &[]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stderr(&wrong).contains("kubectl trainer-audit check"), "{}", stderr(&wrong));

    let (_lab, _dev, kubeconfig) = clusters(sandbox.dir.path());
    let kc = kubeconfig.to_string_lossy().into_owned();
    let (to, from) = (fixture("to"), fixture("from"));
    for context in ["lab", "dev"] {
        let args = ["check", "--kubeconfig", &kc, "--context", context, "-n", "kubeflow-system", "--chart", &to, "--format", "json"];
        // dev runs 2.3.0, the target itself (already there: the target chart is the installed one);
        // lab runs 2.2.1, whose chart is given.
        let mut args = args.to_vec();
        if context == "lab" {
            args.extend(["--from-chart", from.as_str()]);
        }
        let through: Vec<&str> = std::iter::once("trainer-audit").chain(args.iter().copied()).collect();
        let via = sandbox.run(&kubectl, &through, &[]);
        let direct = sandbox.direct(&args);
        assert_same(&via, &direct, context);
    }
    // The contexts are told apart: each reads its own cluster.
    let installed = |context: &str| {
        let out = sandbox.run(&kubectl, &["trainer-audit", "status", "--kubeconfig", &kc, "--context", context, "--format", "json"], &[]);
        json(&out)["version"]["version"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!((installed("lab"), installed("dev")), ("2.2.1".to_string(), "2.3.0".to_string()));
    // KUBECONFIG and the current context, as kubectl itself reads them.
    let via = sandbox.run(&kubectl, &["trainer-audit", "status", "--format", "json"], &[("KUBECONFIG", &kc)]);
    assert_eq!(json(&via)["version"]["version"], "2.3.0", "{}", text(&via));
    // -n is the release namespace.
    let args = [
        "plan",
        "--kubeconfig",
        &kc,
        "--context",
        "lab",
        "-n",
        "team-a",
        "--release",
        "trainer",
        "--chart",
        &to,
        "--from",
        "2.2.1",
        "--format",
        "json",
    ];
    let via = sandbox.run(&kubectl, &std::iter::once("trainer-audit").chain(args).collect::<Vec<_>>(), &[]);
    assert_same_refusal(&via, &sandbox.direct(&args), "plan -n team-a", "namespace team-a");
}

/// The same refusal (exit 2, the same error) through the plugin and directly, naming `named`: the
/// flag reached the binary (without it the run would have audited another namespace).
fn assert_same_refusal(through: &Output, direct: &Output, what: &str, named: &str) {
    assert_eq!(through.status.code(), Some(2), "{what}: {}", text(through));
    assert_eq!(direct.status.code(), Some(2), "{what}: {}", text(direct));
    // Helm adds its own last line (`Error: plugin "trainer-audit" exited with error`).
    assert!(stderr(through).starts_with(&stderr(direct)), "{what}: through {}\ndirectly {}", text(through), text(direct));
    assert!(stderr(direct).contains(named), "{what}: {}", text(direct));
}

/// Packs `fixtures/charts/upgrade-to` as kubeflow-trainer 2.3.0 with the real helm.
fn packaged_target(sandbox: &Sandbox, helm: &str) -> PathBuf {
    let src = sandbox.dir.path().join("chart-src/kubeflow-trainer");
    std::fs::create_dir_all(&src).unwrap();
    let copy = Command::new("cp").arg("-R").arg(format!("{}/.", fixture("to"))).arg(&src).status().unwrap();
    assert!(copy.success());
    let chart_yaml = src.join("Chart.yaml");
    let yaml = std::fs::read_to_string(&chart_yaml)
        .unwrap()
        .replace("name: widgets", "name: kubeflow-trainer")
        .replace("version: 2.0.0", "version: 2.3.0");
    std::fs::write(&chart_yaml, yaml).unwrap();
    let dest = sandbox.dir.path().join("packaged");
    let out = sandbox.run(helm, &["package", &src.to_string_lossy(), "-d", &dest.to_string_lossy()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    dest.join("kubeflow-trainer-2.3.0.tgz")
}

/// Debian's docker-registry with htpasswd authentication (user `auditor`), or None (skipped).
fn private_registry(dir: &Path) -> Option<(std::process::Child, u16)> {
    if Command::new("docker-registry").arg("--version").output().is_err() {
        assert!(!support::in_ci(), "docker-registry is not installed; `cargo xtask test` installs it");
        controlplane::skipped("helm_plugin registry", "docker-registry is not installed");
        return None;
    }
    let port = support::registry::free_port();
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    std::fs::write(dir.join("htpasswd"), format!("auditor:{hash}\n")).unwrap();
    let config = dir.join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nauth:\n  htpasswd:\n    realm: test\n    path: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.join("data").display(),
            dir.join("htpasswd").display()
        ),
    )
    .unwrap();
    let child = Command::new("docker-registry").arg("serve").arg(&config).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "docker-registry did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some((child, port))
}

#[test]
fn helm_installs_the_plugin_from_the_repository_and_it_reads_helms_environment() {
    let Some(tools) = tools_or_skip("helm_plugin") else { return };
    let sandbox = Sandbox::new(&tools);
    let helm = tools.join("helm").to_string_lossy().into_owned();
    let install = sandbox.run(&helm, &["plugin", "install", &root().to_string_lossy()], &[]);
    assert!(install.status.success(), "{}", text(&install));
    let list = sandbox.run(&helm, &["plugin", "list"], &[]);
    let line = stdout(&list).lines().find(|l| l.starts_with("trainer-audit")).map(str::to_string);
    let line = line.unwrap_or_else(|| panic!("helm plugin list: {}", text(&list)));
    assert!(line.split_whitespace().any(|w| w == env!("CARGO_PKG_VERSION")), "the plugin's version is the crate's: {line}");
    assert!(line.contains("cli/v1"), "{line}");

    // A snapshot: the same report as the binary run directly.
    let (s, to, from) = (snapshot("helm-2.2.1"), fixture("to"), fixture("from"));
    let args = ["check", "--snapshot", &s, "--chart", &to, "--from-chart", &from, "--format", "json"];
    let via = sandbox.run(&helm, &std::iter::once("trainer-audit").chain(args).collect::<Vec<_>>(), &[]);
    assert_same(&via, &sandbox.direct(&args), "check --snapshot");
    assert_eq!(via.status.code(), Some(1), "the gate's exit code comes through Helm");
    // Helm takes -n out of a plugin's arguments and passes HELM_NAMESPACE: it comes back.
    let via = sandbox.run(
        &helm,
        &[
            "trainer-audit",
            "plan",
            "--snapshot",
            &s,
            "--chart",
            &to,
            "--from-chart",
            &from,
            "-n",
            "team-a",
            "--release",
            "trainer",
            "--from",
            "2.2.1",
            "--format",
            "json",
        ],
        &[],
    );
    let direct = sandbox.direct(&[
        "plan",
        "--snapshot",
        &s,
        "--chart",
        &to,
        "--from-chart",
        &from,
        "-n",
        "team-a",
        "--release",
        "trainer",
        "--from",
        "2.2.1",
        "--format",
        "json",
    ]);
    assert_same_refusal(&via, &direct, "plan -n team-a", "namespace team-a");
    // Help names the plugin.
    let help = sandbox.run(&helm, &["trainer-audit", "check", "--help"], &[]);
    assert!(stdout(&help).contains("Usage: helm trainer-audit check [OPTIONS]"), "{}", text(&help));

    // A live cluster: Helm's --kubeconfig and --kube-context, as Helm passes them (KUBECONFIG,
    // HELM_KUBECONTEXT), read the same cluster as our own flags.
    let (_lab, _dev, kubeconfig) = clusters(sandbox.dir.path());
    let kc = kubeconfig.to_string_lossy().into_owned();
    for context in ["lab", "dev"] {
        // dev runs 2.3.0, the target itself; lab runs 2.2.1, whose chart is given.
        let installed: &[&str] = if context == "lab" { &["--from-chart", &from] } else { &[] };
        let mut through = vec!["trainer-audit", "check", "--kubeconfig", &kc, "--kube-context", context, "--chart", &to];
        through.extend(installed);
        through.extend(["--format", "json"]);
        let via = sandbox.run(&helm, &through, &[]);
        let mut direct = vec!["check", "--kubeconfig", &kc, "--context", context, "--chart", &to];
        direct.extend(installed);
        direct.extend(["--format", "json"]);
        let direct = sandbox.direct(&direct);
        assert_same(&via, &direct, context);
    }

    // A private registry: the credentials `helm registry login` stored (HELM_REGISTRY_CONFIG).
    let Some((mut registry, port)) = private_registry(sandbox.dir.path()) else { return };
    let host = format!("127.0.0.1:{port}");
    let mut login = Command::new(&helm);
    login
        .args(["registry", "login", &host, "--username", "auditor", "--password-stdin", "--plain-http"])
        .env_clear()
        .env("PATH", &sandbox.path)
        .env("HOME", sandbox.home())
        .env("HELM_CONFIG_HOME", sandbox.home().join(".config/helm"))
        .env("HELM_CACHE_HOME", sandbox.home().join(".cache/helm"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = login.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"s3cret\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "helm registry login: {}", text(&out));
    let archive = packaged_target(&sandbox, &helm);
    let push = sandbox.run(&helm, &["push", &archive.to_string_lossy(), &format!("oci://{host}/charts"), "--plain-http"], &[]);
    assert!(push.status.success(), "{}", text(&push));
    let repo = format!("oci://{host}/charts/kubeflow-trainer");
    let args = ["check", "--snapshot", &s, "--repo", &repo, "--to", "2.3.0", "--plain-http", "--from-chart", &from, "--format", "json"];
    let via = sandbox.run(&helm, &std::iter::once("trainer-audit").chain(args).collect::<Vec<_>>(), &[]);
    let direct = sandbox.direct(&args);
    assert_same(&via, &direct, "check --repo (private)");
    assert_eq!(json(&via)["to"], "2.3.0");
    // The credentials are what made it work: elsewhere, Helm's registry config is the one it names.
    let config = sandbox.home().join(".config/helm/registry/config.json");
    let moved = sandbox.dir.path().join("registry-config.json");
    std::fs::rename(&config, &moved).unwrap();
    let without = sandbox.direct(&args);
    assert_eq!(without.status.code(), Some(2), "{}", text(&without));
    let via = sandbox.run(
        &helm,
        &[
            "--registry-config",
            &moved.to_string_lossy(),
            "trainer-audit",
            "check",
            "--snapshot",
            &s,
            "--repo",
            &repo,
            "--to",
            "2.3.0",
            "--plain-http",
            "--from-chart",
            &from,
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(stdout(&via), stdout(&direct), "helm --registry-config: {}", text(&via));
    let _ = registry.kill();
    let _ = registry.wait();
}

#[test]
fn the_plugin_yaml_is_helm_4s_and_names_the_crates_version() {
    let yaml = std::fs::read_to_string(root().join("plugin.yaml")).unwrap();
    let doc = serde_saphyr::from_str::<Json>(&yaml).unwrap();
    // helm.sh/helm/v4 v4.2.3 internal/plugin/metadata_v1.go Validate.
    assert_eq!(
        (doc["apiVersion"].as_str(), doc["type"].as_str(), doc["runtime"].as_str()),
        (Some("v1"), Some("cli/v1"), Some("subprocess"))
    );
    assert_eq!(doc["name"], "trainer-audit");
    assert_eq!(doc["name"], trainer_audit::invocation::HELM_PLUGIN_NAME);
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    let commands = doc["runtimeConfig"]["platformCommand"].as_array().unwrap();
    let script = commands.iter().find(|c| c.get("os").is_none()).unwrap()["command"].as_str().unwrap();
    let script = root().join(script.strip_prefix("$HELM_PLUGIN_DIR/").unwrap());
    assert!(
        std::fs::metadata(&script).is_ok_and(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0),
        "{} is not executable",
        script.display()
    );
}

/// The krew manifest as the release publishes it: `release/build.sh package` makes the four
/// archives (linux-amd64 holding this build's binary, the others a stand-in: this machine cannot
/// build darwin), `release/build.sh finish` writes SHA256SUMS and fills the manifest from them.
/// It keeps krew's rules, names each archive by its URL and SHA-256, and (with Go) the real krew
/// installs it and kubectl then runs `kubectl trainer-audit`.
#[test]
fn the_release_fills_the_krew_manifest_krew_installs_it() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    let stand_in = dir.path().join("stand-in");
    std::fs::write(&stand_in, "#!/bin/sh\necho stand-in\n").unwrap();
    std::fs::set_permissions(&stand_in, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_trainer-audit"));
    let script = root().join("release/build.sh");
    for (target, binary) in [
        ("x86_64-unknown-linux-musl", &exe),
        ("aarch64-unknown-linux-musl", &stand_in),
        ("x86_64-apple-darwin", &stand_in),
        ("aarch64-apple-darwin", &stand_in),
    ] {
        let out = Command::new("bash").arg(&script).arg("package").arg(target).arg(binary).arg(&dist).output().unwrap();
        assert!(out.status.success(), "package {target}: {}", text(&out));
    }
    let base = format!("https://github.com/acme/trainer-audit/releases/download/v{}", env!("CARGO_PKG_VERSION"));
    let out = Command::new("bash").arg(&script).arg("finish").arg(&dist).arg(&base).output().unwrap();
    assert!(out.status.success(), "finish: {}", text(&out));
    let manifest = std::fs::read_to_string(dist.join("trainer-audit.yaml")).unwrap();
    let doc = serde_saphyr::from_str::<Json>(&manifest).unwrap();
    assert_eq!(testkit::krew::validate("trainer-audit", &doc), Ok(()));
    assert_eq!(doc["spec"]["version"], format!("v{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(doc["spec"]["homepage"], "https://github.com/acme/trainer-audit");
    assert_eq!(testkit::krew::platforms(&doc), ["linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"]);
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    for p in doc["spec"]["platforms"].as_array().unwrap() {
        let (os, arch) = (p["selector"]["matchLabels"]["os"].as_str().unwrap(), p["selector"]["matchLabels"]["arch"].as_str().unwrap());
        let name = format!("trainer-audit-v{}-{os}-{arch}.tar.gz", env!("CARGO_PKG_VERSION"));
        assert_eq!(p["uri"], format!("{base}/{name}"));
        let sha = support::sha256(&std::fs::read(dist.join(&name)).unwrap()).trim_start_matches("sha256:").to_string();
        assert_eq!(p["sha256"], sha.as_str(), "{name}");
        assert!(sums.lines().any(|l| l == format!("{sha}  {name}")), "SHA256SUMS: {sums}");
    }
    assert!(!manifest.lines().filter(|l| !l.trim_start().starts_with('#')).any(|l| l.contains("${")), "{manifest}");
    let archive = dist.join(format!("trainer-audit-v{}-linux-amd64.tar.gz", env!("CARGO_PKG_VERSION")));

    let Some(krew) = krew_or_skip() else { return };
    let Some(tools) = tools_or_skip("krew install") else { return };
    let manifest_file = dir.path().join("trainer-audit.yaml");
    std::fs::write(&manifest_file, &manifest).unwrap();
    let krew_root = dir.path().join("krew");
    let out = Command::new(&krew)
        .args(["install", "--manifest"])
        .arg(&manifest_file)
        .arg("--archive")
        .arg(&archive)
        .env("KREW_ROOT", &krew_root)
        .env("KREW_OS", "linux")
        .env("KREW_ARCH", "amd64")
        .output()
        .unwrap();
    assert!(out.status.success(), "krew install: {}", text(&out));
    let installed = krew_root.join("bin").join(testkit::krew::link_name("trainer-audit"));
    assert!(installed.exists(), "krew did not link {}", installed.display());
    let path = std::env::join_paths([krew_root.join("bin"), tools.clone()]).unwrap();
    let out =
        Command::new(tools.join("kubectl")).args(["trainer-audit", "--help"]).env("PATH", path).env("HOME", dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains("Usage: kubectl trainer-audit [OPTIONS] <COMMAND>"), "{}", stdout(&out));
}

/// krew v0.4.3 built with `go install` from the Go module proxy into target/, once.
fn krew_or_skip() -> Option<PathBuf> {
    let bin = root().join("target/krew-v0.4.3/bin");
    let krew = bin.join("krew");
    if krew.is_file() {
        return Some(krew);
    }
    if Command::new("go").arg("version").output().is_err() {
        assert!(!support::in_ci(), "Go is needed to build krew for the krew install test");
        controlplane::skipped("krew install", "no Go toolchain to build krew");
        return None;
    }
    let out = Command::new("go")
        .args(["install", "sigs.k8s.io/krew/cmd/krew@v0.4.3"])
        .env("GOBIN", &bin)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .unwrap();
    assert!(out.status.success(), "go install krew: {}", text(&out));
    Some(krew)
}
