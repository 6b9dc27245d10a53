//! `bench validate`: 50,000 TrainJobs (`testkit::scenario::realistic_trainjob`, ~1 KB each)
//! validated against the corpus 2.3.0 TrainJob CRD, whole process, beside the tool people use
//! for this: kubeconform v0.8.0, built here from the Go module proxy (`go install` into
//! `target/peers/`, nothing of it committed), validating the same objects against the same CRD's
//! OpenAPI schema turned into the JSON Schema kubeconform reads. Ours is `trainer-audit status`
//! over the objects with `--chart` the 2.3.0 chart: the OpenAPI schema, CEL rules, defaulting and
//! pruning, ratcheting's metadata-only update where it can matter, as the API server would (the
//! chart rendered, the CRDs compiled, the counts printed). The peer gets each file form it is
//! built for (a stream of documents, and one `List`) and its faster time counts; ours reads the
//! `List` (`kubectl get -o yaml`'s form). Wall and CPU time and peak RSS, median of the runs.
//! Each figure is a whole process, start to exit, its own reading of the input included: ours
//! reads and parses the 60 MB YAML `List`, renders the chart, compiles the CRDs (OpenAPI and
//! CEL), validates on every core and prints `status`'s summary; kubeconform reads the schema
//! file, parses the YAML and validates with its default 4 workers. Same objects, same schema,
//! same machine, alternated in the same run.
//! The verdicts differ by design and both are printed: each object sets `spec.labels` and
//! `spec.annotations`, which the 2.3.0 CRD does not declare; the API server prunes them (ours
//! counts the objects valid, with fields pruned), while the converted schema closes every object
//! (`additionalProperties: false`) and kubeconform calls them invalid.
//! With `BENCH_VALIDATE_KEEP` set, the fixture is left in place (its directory printed) for
//! profiling either side.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::measure::{build_release, corpus, load_average, measure, repo_root, tempfile_dir, Measured};

const OBJECTS: usize = 50_000;
const KUBECONFORM: &str = "github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0";

pub fn validate(runs: usize) -> Result<()> {
    let corpus = corpus()?;
    let binary = build_release()?;
    let peer = kubeconform()?;
    let scratch = tempfile_dir()?.join("validate");
    std::fs::create_dir_all(scratch.join("schemas"))?;
    let chart = corpus.join("charts/kubeflow-trainer-2.3.0.tgz");
    let crd = trainjob_crd(&chart)?;
    let (kind, version, schema) = json_schema(&crd)?;
    // kubeconform's schema file naming: {{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json.
    std::fs::write(
        scratch.join(format!("schemas/{}.json", format!("{kind}_{version}").to_lowercase())),
        serde_json::to_string_pretty(&schema)?,
    )?;
    let objects: Vec<Value> = (0..OBJECTS).map(testkit::scenario::realistic_trainjob).collect();
    let stream = scratch.join("trainjobs-stream.yaml");
    let mut text = String::new();
    for o in &objects {
        text.push_str("---\n");
        text.push_str(&trainer_audit::objects::yaml_of(o)?);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    std::fs::write(&stream, text)?;
    let list = scratch.join("trainjobs-list.yaml");
    std::fs::write(&list, testkit::scenario::list_yaml(objects))?;

    let ours = || {
        let mut c = Command::new(&binary);
        c.args(["status", "--kube-version", "1.33", "--format", "json", "--snapshot"]).arg(&list).arg("--chart").arg(&chart);
        c
    };
    let location = format!("{}/{{{{ .ResourceKind }}}}_{{{{ .ResourceAPIVersion }}}}.json", scratch.join("schemas").display());
    let theirs = |file: &Path| {
        let mut c = Command::new(&peer);
        c.args(["-schema-location", &location, "-summary"]).arg(file);
        c
    };
    // Once each first: both tools must read the objects, and the peer must find the schema.
    let out = ours().output()?;
    if !out.status.success() {
        bail!("trainer-audit status failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let report: Value = serde_json::from_slice(&out.stdout).context("status JSON")?;
    let tally = report.pointer("/clusters/0/validation/kinds").or_else(|| report.pointer("/validation/kinds")).cloned().unwrap_or_default();
    let trainjobs = tally.as_array().and_then(|kinds| kinds.iter().find(|k| k["kind"] == kind)).cloned().unwrap_or_default();
    if trainjobs["objects"] != json!(OBJECTS) {
        bail!("trainer-audit did not validate the {OBJECTS} objects: {tally}");
    }
    let mut summary = String::new();
    for file in [&stream, &list] {
        let out = theirs(file).output()?;
        summary = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string();
        // Judged, not merely found: a schema kubeconform cannot find is an error per object.
        let judged = |word: &str| {
            summary.split(&format!("{word}: ")).nth(1).and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next()?.parse::<usize>().ok())
        };
        let (valid, invalid, errors) = (judged("Valid"), judged("Invalid"), judged("Errors"));
        if !summary.contains(&format!("{OBJECTS} resources found"))
            || valid.zip(invalid).map(|(v, i)| v + i) != Some(OBJECTS)
            || errors != Some(0)
        {
            bail!("kubeconform did not validate the objects of {}: {summary}\n{}", file.display(), String::from_utf8_lossy(&out.stderr));
        }
    }
    let load_before = load_average();
    let runs = runs.clamp(1, 11);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    // Alternating, so a change in the machine's load touches all three alike.
    for _ in 0..runs {
        a.push(measure(ours(), &[0])?);
        b.push(measure(theirs(&stream), &[0, 1])?);
        c.push(measure(theirs(&list), &[0, 1])?);
    }
    let (ours, stream_peer, list_peer) = (Measured::median(a), Measured::median(b), Measured::median(c));
    let peer = if stream_peer.wall <= list_peer.wall { &stream_peer } else { &list_peer };
    let ratio = ours.wall.as_secs_f64() / peer.wall.as_secs_f64();
    let cpu_ratio = match (ours.cpu, peer.cpu) {
        (Some(o), Some(p)) => format!("{:.2}x", o.as_secs_f64() / p.as_secs_f64()),
        _ => "n/a".into(),
    };
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("bench validate: {OBJECTS} TrainJobs against the corpus 2.3.0 TrainJob CRD ({kind} {version}), median of {runs} runs");
    println!("  load average (1 min) {load_before} before, {} after, on {cpus} CPUs", load_average());
    println!("                                              wall       CPU   peak RSS");
    println!("  trainer-audit status --chart (List)    {}", ours.row());
    println!("  kubeconform v0.8.0, document stream    {}", stream_peer.row());
    println!("  kubeconform v0.8.0, one List           {}", list_peer.row());
    println!(
        "  ratio (wall, against the faster peer)  {ratio:>6.2}x  (CPU {cpu_ratio}; target <= 0.2x: {})",
        if ratio <= 0.2 { "met" } else { "NOT met" }
    );
    println!("  ours: {tally}");
    println!("  kubeconform: {summary}");
    if std::env::var_os("BENCH_VALIDATE_KEEP").is_some() {
        println!("  fixture kept in {} (BENCH_VALIDATE_KEEP)", scratch.display());
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(())
}

/// kubeconform v0.8.0 from the Go module proxy, installed once into `target/peers/`.
fn kubeconform() -> Result<PathBuf> {
    let dir = repo_root().join("target/peers");
    let binary = dir.join("kubeconform");
    if binary.exists() {
        return Ok(binary);
    }
    std::fs::create_dir_all(&dir)?;
    let status = Command::new("go").args(["install", KUBECONFORM]).env("GOBIN", &dir).env("GOFLAGS", "-mod=mod").status().context("go")?;
    if !status.success() || !binary.exists() {
        bail!("go install {KUBECONFORM} failed");
    }
    Ok(binary)
}

/// The TrainJob CRD the 2.3.0 chart renders (default values), as JSON.
fn trainjob_crd(chart: &Path) -> Result<Value> {
    use helm_render::chart::Chart;
    use helm_render::render::{render_chart, RenderOptions};
    use trainer_audit::inventory::Inventory;
    let chart = Chart::load_archive_file(chart)?;
    let mut o = RenderOptions::default();
    o.release.name = "kubeflow-trainer".into();
    o.release.namespace = "kubeflow-system".into();
    let inv = Inventory::build(&chart, &render_chart(&chart, &o)?, "kubeflow-system");
    let crd = inv
        .objects
        .iter()
        .find(|o| o.identity.kind == "CustomResourceDefinition" && o.identity.name == "trainjobs.trainer.kubeflow.org")
        .context("the chart renders no TrainJob CRD")?;
    Ok(serde_json::to_value(&crd.body)?)
}

/// The CRD's storage version as the JSON Schema kubeconform validates with, converted as
/// kubeconform's own conversion script does (`scripts/openapi2jsonschema.py` at v0.8.0,
/// `write_schema_file` without `DENY_ROOT_ADDITIONAL_PROPERTIES`): [`additional_properties`]
/// below the root, then [`replace_int_or_string`]. Returns the kind, the version and the schema.
fn json_schema(crd: &Value) -> Result<(String, String, Value)> {
    let kind = crd.pointer("/spec/names/kind").and_then(Value::as_str).context("spec.names.kind")?.to_string();
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array).context("spec.versions")?;
    let storage = versions.iter().find(|v| v["storage"] == json!(true)).context("no storage version")?;
    let version = storage["name"].as_str().context("version name")?.to_string();
    let mut schema = storage.pointer("/schema/openAPIV3Schema").cloned().context("openAPIV3Schema")?;
    additional_properties(&mut schema, true);
    replace_int_or_string(&mut schema);
    Ok((kind, version, schema))
}

/// The script's `additional_properties`: every mapping that has `properties` and no
/// `additionalProperties` gets `additionalProperties: false` (the root too unless `skip`);
/// it descends through mappings only, never into lists.
fn additional_properties(v: &mut Value, skip: bool) {
    if let Value::Object(m) = v {
        if m.contains_key("properties") && !skip && !m.contains_key("additionalProperties") {
            m.insert("additionalProperties".into(), Value::Bool(false));
        }
        for child in m.values_mut() {
            additional_properties(child, false);
        }
    }
}

/// The script's `replace_int_or_string`: a mapping's child that is a mapping with
/// `format: int-or-string` becomes `oneOf` string or integer; it descends through mappings and
/// lists, and never replaces the value it was called on (the root, a list's elements).
fn replace_int_or_string(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for child in m.values_mut() {
                if child.is_object() && child.get("format").and_then(Value::as_str) == Some("int-or-string") {
                    *child = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
                } else {
                    replace_int_or_string(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(replace_int_or_string),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script's own tests (`test_additional_properties`, `test_replace_int_or_string`), and
    /// where it descends.
    #[test]
    fn converts_as_openapi2jsonschema() {
        let mut v = json!({"something": {"properties": {}}});
        additional_properties(&mut v, false);
        assert_eq!(v, json!({"something": {"properties": {}, "additionalProperties": false}}));
        let mut v = json!({"something": {"somethingelse": {}}});
        additional_properties(&mut v, false);
        assert_eq!(v, json!({"something": {"somethingelse": {}}}));
        let mut v = json!({"something": {"format": "int-or-string"}});
        replace_int_or_string(&mut v);
        assert_eq!(v, json!({"something": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}));
        let mut v = json!({"something": {"format": "string"}});
        replace_int_or_string(&mut v);
        assert_eq!(v, json!({"something": {"format": "string"}}));
        // The root is skipped; lists are not entered by additional_properties.
        let mut v = json!({"properties": {"a": {"properties": {}}}, "anyOf": [{"properties": {}}]});
        additional_properties(&mut v, true);
        assert_eq!(v, json!({"properties": {"a": {"properties": {}, "additionalProperties": false}}, "anyOf": [{"properties": {}}]}));
        // replace_int_or_string enters lists but does not replace their elements themselves.
        let mut v = json!({"allOf": [{"format": "int-or-string", "x": {"format": "int-or-string"}}]});
        replace_int_or_string(&mut v);
        assert_eq!(v, json!({"allOf": [{"format": "int-or-string", "x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}]}));
    }
}
