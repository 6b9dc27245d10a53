//! `trainer-audit gitops --list` through the binary on the fixture trees in
//! `tests/fixtures/gitops/` (each a `base/` and a `head/` bumping Trainer 2.2.1 → 2.3.0 and
//! changing values): the listing and the changes pinned by insta, the locations of the changed lines checked in the
//! JSON, `--base-ref` against a real git repository, and hostile trees (alias bomb, huge file,
//! cyclic substitution) bounded.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;
use support::{run, stderr, stdout};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gitops").join(name)
}

fn gitops(args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let mut all = vec!["gitops", "--list"];
    all.extend_from_slice(args);
    run(home.path(), &all)
}

fn compare(name: &str, format: &str) -> std::process::Output {
    let (head, base) = (fixture(name).join("head"), fixture(name).join("base"));
    let (head, base) = (head.to_string_lossy().into_owned(), base.to_string_lossy().into_owned());
    gitops(&[&head, "--base", &base, "--format", format])
}

fn json(name: &str) -> Json {
    let out = compare(name, "json");
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// `file:line` of a location object.
fn at(v: &Json) -> String {
    format!("{}:{}", v["file"].as_str().unwrap_or("?"), v["line"])
}

fn the_change(doc: &Json) -> &Json {
    let changes = doc["comparison"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    &changes[0]
}

fn value_change<'a>(change: &'a Json, path: &str) -> &'a Json {
    change["values"].as_array().unwrap().iter().find(|v| v["path"] == path).unwrap_or_else(|| panic!("no change of {path}: {change:#}"))
}

#[test]
fn listings_and_changes_are_stable() {
    for name in ["flux-oci", "flux-helmrepository", "argocd-single", "argocd-multi", "kustomize"] {
        let out = compare(name, "text");
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        insta::assert_snapshot!(format!("gitops_{name}"), stdout(&out));
        assert_eq!(stdout(&out), stdout(&compare(name, "text")), "{name}: output is not deterministic");
    }
}

#[test]
fn flux_oci_repository_with_values_from_and_substitution() {
    let doc = json("flux-oci");
    let r = &doc["scan"]["references"][0];
    assert_eq!(r["repository"], "oci://ghcr.io/kubeflow/charts/kubeflow-trainer");
    assert_eq!(r["version"], "2.3.0");
    assert_eq!(r["release_namespace"], "kubeflow-system");
    // valuesFrom first, inline values on top.
    assert_eq!(r["values"]["manager"], serde_json::json!({"replicas": 2, "logLevel": "debug"}));
    assert_eq!(r["values"]["jobset"]["install"], true);
    assert_eq!(r["values"]["commonLabels"]["cluster"], "prod-eu");
    // The undefined variable is named, with its file and line, never silently empty.
    let problems = r["problems"].as_array().unwrap();
    let region = problems.iter().find(|p| p["message"].as_str().unwrap().contains("${cluster_region}")).unwrap();
    assert_eq!(at(&region["at"]), "apps/trainer/helmrelease.yaml:37");
    assert_eq!(r["options"]["install.crds"]["value"], "CreateReplace");
    assert_eq!(r["options"]["driftDetection.mode"]["value"], "enabled");
    let change = the_change(&doc);
    assert_eq!((&change["version"]["from"], &change["version"]["to"]), (&Json::from("2.2.1"), &Json::from("2.3.0")));
    // The version line that changed is the substituted variable's, not the OCIRepository's.
    assert_eq!(at(&change["version"]["at"]), "clusters/prod/apps.yaml:16");
    assert_eq!(at(&value_change(change, "manager.replicas")["at"]), "apps/trainer/values.yaml:11");
    let crds = change["options"].as_array().unwrap().iter().find(|o| o["name"] == "upgrade.crds").unwrap();
    assert_eq!((&crds["from"], &crds["to"]), (&Json::from("Skip"), &Json::from("CreateReplace")));
    assert_eq!(doc["scan"]["ignored"][0]["chart"], "cert-manager");
}

#[test]
fn flux_helm_repository_of_type_oci_and_generated_values() {
    let doc = json("flux-helmrepository");
    let r = &doc["scan"]["references"][0];
    assert_eq!(r["repository"], "oci://ghcr.io/kubeflow/charts/kubeflow-trainer");
    assert_eq!(r["object"]["namespace"], "kubeflow-system");
    assert_eq!(r["options"]["upgrade.crds"]["value"], "Skip");
    assert_eq!(r["options"]["upgrade.disableTakeOwnership"]["value"], "true");
    let change = the_change(&doc);
    assert_eq!(at(&change["version"]["at"]), "trainer/helmrelease.yaml:10");
    assert_eq!(at(&value_change(change, "webhook.failurePolicy")["at"]), "trainer/trainer-values.yaml:4");
}

#[test]
fn argocd_single_and_multi_source() {
    let single = json("argocd-single");
    let r = &single["scan"]["references"][0];
    assert_eq!(single["scan"]["argocd_version"], "3.2.3");
    assert_eq!(r["options"]["syncOptions.ServerSideApply"]["value"], "true");
    assert_eq!(r["release_name"], "trainer");
    // forceString keeps the tag a string; plain parameters are typed.
    assert_eq!(r["values"]["image"]["tag"], "2.3.0");
    let change = the_change(&single);
    assert_eq!(at(&change["version"]["at"]), "apps/trainer.yaml:11");
    assert_eq!(at(&value_change(change, "manager.replicas")["at"]), "apps/trainer.yaml:16");

    let multi = json("argocd-multi");
    let r = &multi["scan"]["references"][0];
    let ssa = &r["options"]["syncOptions.ServerSideApply"];
    assert_eq!((&ssa["value"], &ssa["default"]), (&Json::from("false"), &Json::from(true)));
    assert!(multi["scan"]["argocd_version"].is_null());
    // The $values file is read from the tree, under helm.values.
    assert_eq!(r["values"]["manager"], serde_json::json!({"replicas": 3, "logLevel": "info", "resources": {"limits": {"memory": "1Gi"}}}));
    let change = the_change(&multi);
    assert_eq!(at(&change["version"]["at"]), "apps/trainer.yaml:11");
    assert_eq!(at(&value_change(change, "manager.resources.limits.memory")["at"]), "values/prod/trainer.yaml:5");
    let problems = multi["scan"]["problems"].as_array().unwrap();
    assert!(problems.iter().any(|p| p["message"].as_str().unwrap().contains("ApplicationSet trainer-fleet")), "{problems:?}");
}

#[test]
fn kustomize_helm_charts() {
    let doc = json("kustomize");
    let r = &doc["scan"]["references"][0];
    assert_eq!(r["repository"], "oci://ghcr.io/kubeflow/charts/kubeflow-trainer");
    // valuesInline over valuesFile, additionalValuesFiles after.
    assert_eq!(r["values"]["manager"], serde_json::json!({"replicas": 3, "logLevel": "debug"}));
    assert_eq!(r["options"]["includeCRDs"]["value"], "true");
    let change = the_change(&doc);
    assert_eq!(at(&change["version"]["at"]), "trainer/kustomization.yaml:6");
    assert_eq!(at(&value_change(change, "manager.replicas")["at"]), "trainer/values-prod.yaml:2");
    assert_eq!(doc["scan"]["ignored"][0]["chart"], "ingress-nginx");
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git").arg("-C").arg(dir).args(args).output().map(|o| o.status.success()).unwrap_or(false);
    assert!(ok, "git {args:?}");
}

#[test]
fn base_ref_reads_the_base_from_git() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("SKIPPED: git is not installed");
        assert!(std::env::var_os("CI").is_none(), "git is required in CI");
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let tree = repo.path().join("gitops");
    copy_tree(&fixture("flux-oci").join("base"), &tree);
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"]);
    copy_tree(&fixture("flux-oci").join("head"), &tree);
    let dir = tree.to_string_lossy().into_owned();
    let out = gitops(&[&dir, "--base-ref", "HEAD", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let from_git: Json = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(from_git["comparison"], json("flux-oci")["comparison"]);

    let out = gitops(&[&dir, "--base-ref", "no-such-rev"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no-such-rev"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
}

#[test]
fn bad_input_exits_2_naming_it() {
    let out = gitops(&["/no/such/tree"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/no/such/tree"), "{}", stderr(&out));
    let head = fixture("kustomize").join("head").to_string_lossy().into_owned();
    let out = gitops(&[&head, "--base", ".", "--base-ref", "HEAD"]);
    assert_eq!(out.status.code(), Some(2));
    let file = fixture("kustomize").join("head/trainer/values.yaml").to_string_lossy().into_owned();
    let out = gitops(&[&file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a directory"), "{}", stderr(&out));
}

#[test]
fn hostile_trees_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("kustomize").join("head"), dir.path());
    // An alias bomb: ten levels of ten aliases each (10^10 nodes if expanded).
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    std::fs::write(dir.path().join("bomb.yaml"), bomb).unwrap();
    // A file over the per-file limit.
    std::fs::write(dir.path().join("huge.yaml"), "k: v\n".repeat(2 * 1024 * 1024)).unwrap();
    // Variables that name each other.
    std::fs::create_dir_all(dir.path().join("flux")).unwrap();
    std::fs::write(
        dir.path().join("flux/ks.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: loop, namespace: flux-system}\nspec:\n  path: ./flux\n  postBuild:\n    substitute: {a: \"${b}\", b: \"${a}\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("flux/hr.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: t, namespace: x}\nspec:\n  chart:\n    spec:\n      chart: kubeflow-trainer\n      version: ${a}\n      sourceRef: {kind: HelmRepository, name: kf}\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = gitops(&[&dir.path().to_string_lossy(), "--format", "json"]);
    assert!(started.elapsed().as_secs() < 30, "took {:?}", started.elapsed());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Json = serde_json::from_str(&stdout(&out)).unwrap();
    let problems = doc["scan"]["problems"].to_string();
    assert!(problems.contains("bomb.yaml") && problems.contains("alias bomb"), "{problems}");
    assert!(problems.contains("huge.yaml") && problems.contains("over the 8 MiB limit"), "{problems}");
    let refs = doc["scan"]["references"].as_array().unwrap();
    assert_eq!(refs.len(), 2, "{refs:#?}");
    // One pass: `${a}` becomes `${b}` and stops there, reported as not a version.
    let looped = refs.iter().find(|r| r["engine"] == "flux").unwrap();
    assert_eq!(looped["version"], "${b}");
    assert!(looped["problems"].to_string().contains("neither a version nor a semver range"), "{looped:#}");
}
