//! `render` against Helm's recorded answers for the project's own fixture chart
//! (`tests/fixtures/charts/demo`: a conditional subchart, a disabled one, globals, hooks, an
//! unknown hook event, CRDs, NOTES, helpers, `.Files`, odd document shapes). The expected files
//! were produced by Helm's own engine (`helm-oracle manifest` / `render --json`).

mod support;

use std::path::{Path, PathBuf};

use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use support::{run, stderr, stdout};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts/demo")
}

fn options() -> RenderOptions {
    let mut o = RenderOptions::default();
    o.release.name = "demo".into();
    o.release.namespace = "prod".into();
    o
}

fn expected_manifest() -> String {
    std::fs::read_to_string(fixture().with_file_name("demo.helm-manifest.txt")).unwrap()
}

/// Packs a directory as `helm package` lays it out (`demo/…`).
fn pack(dir: &Path) -> Vec<u8> {
    let mut tar_bytes = Vec::new();
    {
        let mut builder = tar::Builder::new(&mut tar_bytes);
        builder.append_dir_all("demo", dir).unwrap();
        builder.finish().unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar_bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn directory_render_matches_helm() {
    let chart = Chart::load_dir(&fixture()).unwrap();
    let rendered = render_chart(&chart, &options()).unwrap();
    assert_eq!(rendered.release_manifest(false), expected_manifest());
    let helm: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture().with_file_name("demo.helm-render.json")).unwrap()).unwrap();
    let ours: serde_json::Map<String, serde_json::Value> =
        rendered.templates.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect();
    assert_eq!(ours, helm);
    assert_eq!(rendered.notes.as_deref(), Some("Installed demo as demo.\n"));
}

#[test]
fn archive_render_matches_directory_render() {
    let chart = Chart::from_archive_bytes(&pack(&fixture())).unwrap();
    assert_eq!(render_chart(&chart, &options()).unwrap().release_manifest(false), expected_manifest());
}

#[test]
fn hooks_follow_manifests_and_unknown_events_are_dropped() {
    let chart = Chart::load_dir(&fixture()).unwrap();
    let rendered = render_chart(&chart, &options()).unwrap();
    assert_eq!(rendered.hooks.len(), 1, "the not-a-real-event Pod is dropped, as Helm drops it");
    let hook = &rendered.hooks[0];
    assert_eq!((hook.kind.as_str(), hook.weight), ("Job", -5));
    assert_eq!(hook.events, ["pre-install", "pre-upgrade"]);
    assert_eq!(hook.delete_policies, ["before-hook-creation", "hook-succeeded"]);
    let out = rendered.template_output(true, false, false);
    assert!(out.starts_with("---\n# Source: demo/crds/widgets.yaml\n"));
    assert!(out.ends_with(&format!("---\n# Source: demo/templates/hooks.yaml\n{}\n", hook.content)));
    assert!(!rendered.template_output(false, true, false).contains("kind: Job"));
}

#[test]
fn cli_render_show_only_and_output_dir() {
    let home = tempfile::tempdir().unwrap();
    let dir = fixture();
    let d = dir.to_str().unwrap();
    let out = run(home.path(), &["render", d, "--release", "demo", "-n", "prod"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(&format!("{}\n", expected_manifest().trim())));
    let out = run(home.path(), &["render", d, "--release", "demo", "--show-only", "charts/sub/templates/cm.yaml"]);
    assert_eq!(stdout(&out).lines().take(2).collect::<Vec<_>>(), ["---", "# Source: demo/charts/sub/templates/cm.yaml"]);
    let out = run(home.path(), &["render", d, "--show-only", "templates/nope.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("could not find template templates/nope.yaml in chart"));
    let target = home.path().join("rendered");
    let out = run(home.path(), &["render", d, "--release", "demo", "--output-dir", target.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(target.join("demo/templates/deployment.yaml")).unwrap();
    assert_eq!(written.matches("# Source: demo/templates/deployment.yaml").count(), 2, "both documents appended");
}

#[test]
fn set_flags_override_values_with_helms_typing() {
    let home = tempfile::tempdir().unwrap();
    let d = fixture();
    let out = run(
        home.path(),
        &[
            "render",
            d.to_str().unwrap(),
            "--set",
            "replicas=5,image.tag=v1",
            "--set-string",
            "labels.tier=007",
            "--show-only",
            "templates/deployment.yaml",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("replicas: 5") && text.contains("example/app:v1") && text.contains("tier: \"007\""), "{text}");
}

fn chart_with_template(template: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("templates")).unwrap();
    std::fs::write(dir.path().join("Chart.yaml"), "apiVersion: v2\nname: t\nversion: 1.0.0\n").unwrap();
    std::fs::write(dir.path().join("templates/t.yaml"), template).unwrap();
    dir
}

#[test]
fn template_errors_print_helms_message_and_exit_2() {
    let home = tempfile::tempdir().unwrap();
    for (template, message) in [
        ("a: {{ required \"need x\" .Values.x }}\n", "error: execution error at (t/templates/t.yaml:1:6): need x"),
        ("{{ fail \"stop here\" }}", "error: execution error at (t/templates/t.yaml:1:3): stop here"),
        ("a\n{{ if true }}", "error: parse error at (t/templates/t.yaml:2): unexpected EOF"),
        ("{{ .Values.s.x }}", "error: t/templates/t.yaml:1:10\n  executing \"t/templates/t.yaml\" at <.Values.s.x>:\n    nil pointer evaluating interface {}.x"),
        ("- a\n- b\n", "error: YAML parse error on t/templates/t.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type util.SimpleHead"),
    ] {
        let chart = chart_with_template(template);
        let out = run(home.path(), &["render", chart.path().to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{template}");
        assert_eq!(stderr(&out).trim_end(), message, "{template}");
    }
}

#[test]
fn schema_violations_are_reported_as_helm_reports_them() {
    let home = tempfile::tempdir().unwrap();
    let chart = chart_with_template("x: {{ .Values.replicas }}\n");
    std::fs::write(
        chart.path().join("values.schema.json"),
        r#"{"type":"object","required":["name"],"properties":{"replicas":{"type":"integer"}}}"#,
    )
    .unwrap();
    let out = run(home.path(), &["render", chart.path().to_str().unwrap(), "--set", "replicas=two"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: values don't meet the specifications of the schema(s) in the following chart(s):\nt:\n- at '': missing property 'name'\n- at '/replicas': got string, want integer\n\n"
    );
    let out = run(home.path(), &["render", chart.path().to_str().unwrap(), "--set", "replicas=3,name=n"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `import-values` in both forms, a missing child table, a non-table entry, imports by
/// reference (a later import into the same parent path shows up in the child's values, as in
/// Helm) and `.Chart.Dependencies[].ImportValues` rewritten to `{child, parent}` pairs. Expected
/// output recorded with `helm-oracle render --json` (Helm's engine; `tests/fixtures/charts/imports*`).
#[test]
fn import_values_match_helm() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts");
    let chart = Chart::load_dir(&dir.join("imports")).unwrap();
    let mut o = options();
    o.values = helm_render::values::read_values_file(&std::fs::read_to_string(dir.join("imports.user-values.yaml")).unwrap()).unwrap();
    let rendered = render_chart(&chart, &o).unwrap();
    let helm: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("imports.helm-render.json")).unwrap()).unwrap();
    let ours: serde_json::Map<String, serde_json::Value> =
        rendered.templates.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect();
    assert_eq!(ours, helm);
    assert!(rendered.warnings.iter().any(|w| w.contains("ImportValues missing table from chart chart=lib")), "{:?}", rendered.warnings);
}
