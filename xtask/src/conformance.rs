//! `cargo xtask conformance --snippets`: small template + values cases rendered by our engine
//! and by Helm's own (the oracle), compared byte for byte. Cases come from `tests/snippets/*.txt`
//! (transcribed from the spec's probed rows and our own probes) and from generators below.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::setup;

pub struct Case {
    pub name: String,
    pub values: String,
    pub template: String,
}

const USAGE: &str = "usage: cargo xtask conformance [--chart PATH]... [--values FILE]... [--name N] [--namespace NS]
       cargo xtask conformance --snippets [--filter TEXT] [--update-expected]";

pub fn run(args: &[String]) -> Result<()> {
    let mut filter: Option<String> = None;
    let mut snippets = false;
    let mut update = false;
    let mut charts: Vec<String> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut name = "kubeflow-trainer".to_string();
    let mut namespace = "kubeflow-system".to_string();
    let mut i = 0;
    while i < args.len() {
        let take = |i: &mut usize| -> Result<String> {
            *i += 1;
            args.get(*i).cloned().with_context(|| format!("{} needs a value\n{USAGE}", args[*i - 1]))
        };
        match args[i].as_str() {
            "--snippets" => snippets = true,
            "--update-expected" => update = true,
            "--filter" => filter = Some(take(&mut i)?),
            "--chart" => charts.push(take(&mut i)?),
            "--values" | "-f" => values.push(take(&mut i)?),
            "--name" => name = take(&mut i)?,
            "--namespace" => namespace = take(&mut i)?,
            other => bail!("unknown conformance option {other}\n{USAGE}"),
        }
        i += 1;
    }
    if !snippets {
        return crate::conformance_charts::run(charts, values, &name, &namespace);
    }
    setup::ensure_helm_oracle()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let mut cases = load_case_files(&root.join("tests/snippets"))?;
    cases.extend(generated_cases());
    if let Some(f) = &filter {
        cases.retain(|c| c.name.contains(f.as_str()));
    }
    let mut seen = std::collections::HashSet::new();
    for c in &cases {
        if !seen.insert(c.name.clone()) {
            bail!("duplicate snippet case name {}", c.name);
        }
    }
    let oracle = oracle(&cases)?;
    if update {
        // Helm's answers, replayed by `cargo test` (tests/snippets.rs) without Python. The cases
        // this run did not select (`--filter`) keep their recorded answers; cases whose file is
        // gone are dropped only by a run over all of them.
        let path = root.join("tests/snippets/expected.json");
        let mut recorded: BTreeMap<String, serde_json::Value> =
            if filter.is_some() { serde_json::from_str(&std::fs::read_to_string(&path)?)? } else { BTreeMap::new() };
        for c in &cases {
            recorded.insert(c.name.clone(), serde_json::json!({"helm": oracle.get(&c.name), "template": c.template, "values": c.values}));
        }
        std::fs::write(&path, serde_json::to_string_pretty(&recorded)? + "\n")?;
        println!("wrote {} ({} cases, {} from this run)", path.display(), recorded.len(), cases.len());
    }
    let (mut passed, mut failed) = (0, 0);
    for case in &cases {
        let ours = match testkit::snippet::render_snippet(&case.values, &case.template) {
            Ok(out) => serde_json::json!({ "ok": out }),
            Err(e) => serde_json::json!({ "err": e }),
        };
        let theirs = oracle.get(&case.name).cloned().unwrap_or(serde_json::Value::Null);
        if ours == theirs {
            passed += 1;
        } else {
            failed += 1;
            println!("MISMATCH {}\n  template: {:?}\n  helm: {}\n  ours: {}", case.name, case.template, theirs, ours);
        }
    }
    println!("snippets: {} cases", cases.len());
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} snippet cases differ from Helm");
    }
    Ok(())
}

fn oracle(cases: &[Case]) -> Result<BTreeMap<String, serde_json::Value>> {
    let input: Vec<serde_json::Value> =
        cases.iter().map(|c| serde_json::json!({"name": c.name, "values": c.values, "template": c.template})).collect();
    Ok(serde_json::from_value(crate::oracle::run_json("oracle-snippets", include_str!("oracle_snippets.py"), &serde_json::json!(input))?)?)
}

/// `=== name` starts a case; an optional `--- values` block precedes `--- template`; a case
/// without values uses the file's `=== @defaults` values. The template ends at the next case
/// (its final newline dropped).
fn load_case_files(dir: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    let mut paths: Vec<_> =
        std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "txt")).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let mut defaults = String::new();
        for block in text.split("\n=== ").map(|b| b.strip_prefix("=== ").unwrap_or(b)) {
            let Some((name, body)) = block.split_once('\n') else { continue };
            let name = name.trim();
            if name.is_empty() || name.starts_with('#') {
                continue;
            }
            let (values, template) = if let Some(rest) = body.strip_prefix("--- values\n") {
                let (v, t) = match rest.split_once("--- template\n") {
                    Some(parts) => parts,
                    None => (
                        rest.strip_suffix("--- template").with_context(|| format!("{}: case {name} lacks --- template", path.display()))?,
                        "",
                    ),
                };
                (v.to_string(), t.to_string())
            } else {
                (String::new(), body.strip_prefix("--- template\n").unwrap_or(body).to_string())
            };
            let template = template.strip_suffix('\n').unwrap_or(&template).to_string();
            if name == "@defaults" {
                defaults = values;
                continue;
            }
            let values = if values.is_empty() { defaults.clone() } else { values };
            cases.push(Case { name: format!("{stem}/{name}"), values, template });
        }
    }
    Ok(cases)
}

/// values.yaml scalars and structures, each printed, serialised and typed (the spec's A1 shape).
const VALUE_SOURCES: &[&str] = &[
    "1", "1.5", "1e6", "1.0e+6", "100000000", "1234567", "12345678901234567890", "9007199254740993", "-3", "0", "1.0", "0.0001", "0.00001",
    "1e21", "100000000000000000000", "0o17", "017", "0x1F", "yes", "on", "y", "true", "True", "null", "~", "\"\"", "\"a: b\"",
    "\"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua\"",
    "|\n  line1\n  line2", "|+\n  line1\n", "|-\n  line1\n  line2", "\"  indented\\nnext\\n\"", "\"  lead\"", "\"trail  \"", "\"1.0\"", "\"123\"",
    "\"0777\"", "\"0x1F\"", "\"2001-12-14\"", "\"2001-12-14T21:59:43.10-05:00\"", "\"*foo\"", "\"&foo\"", "\"# c\"", "\"a #b\"", "\"a#b\"", "\"- a\"",
    "\"-a\"", "\"it's\"", "'say \"hi\"'", "\"a\\tb\"", "\"héllo ☃\"", "\"<a&b>\"", "\"back\\\\slash\"", "\"@x\"", "\"'x\"", "\"%x\"", "\"{x}\"", "\"[x]\"",
    "\"a, b\"", "\"?x\"", "\"!x\"", "\"|x\"", "\">x\"", "\"=\"", "\".inf\"", "\".nan\"", "\"No\"", "\"OFF\"", "\"\\n\"", "\"a\\r\\nb\"", "\"abc\\n\"", "\"abc:\"",
    "\"a :b\"", "\"---\"", "\"...\"", "\"1e3\"", "\"1_000\"", "\"+1\"", "\"null\"", "\"Null\"", "\"NULL\"", "{}", "[]", "{b: 2, a: 1, c: {z: [1, 2, {x: y}], y: []}}",
    "[{name: a, v: 1}, {name: b}]", "[[1, 2], [], [[3]]]", "2001-12-14", "1_000", "+12", "0b101", "{1: a, 2: b, 10: c}", "{true: a, false: b}",
    "{a: null, b: ~}", "\"aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh iiiiiiiii jjjjjjjjj\"",
    "{a: {b: {c: \"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua\"}}}",
];

const VALUE_TEMPLATES: &[(&str, &str)] = &[
    ("print", "{{ .Values.k }}"),
    ("toYaml", "{{ toYaml .Values.k }}"),
    ("toJson", "{{ toJson .Values.k }}"),
    ("kind", "{{ kindOf .Values.k }}/{{ typeOf .Values.k }}"),
    ("dict", "{{ dict \"k\" .Values.k | toYaml }}"),
    ("quote", "{{ quote .Values.k }}"),
];

const STRINGS: &[&str] = &[
    "hello world",
    "",
    "Hello World",
    "a-b_c d",
    "HelloWorldHTTP",
    "  spaced  ",
    "ÄÖü ß",
    "x\ny",
    "it's \"q\"",
    "<&>",
    "123",
    "CamelCase",
];
const STRING_FUNCS: &[&str] = &[
    "upper",
    "lower",
    "title",
    "untitle",
    "quote",
    "squote",
    "trim",
    "b64enc",
    "sha256sum",
    "sha1sum",
    "adler32sum",
    "toString",
    "nospace",
    "swapcase",
    "initials",
    "len",
    "toYaml",
    "toJson",
    "html",
    "js",
    "urlquery",
    "snakecase",
    "kebabcase",
    "camelcase",
    "b32enc",
    "toStrings",
    "splitList \" \"",
    "trimSuffix \"d\"",
    "trimPrefix \"h\"",
    "trimAll \" \"",
    "replace \"o\" \"0\"",
    "contains \"o\"",
    "hasPrefix \"he\"",
    "indent 2",
    "nindent 4",
    "trunc 5",
    "trunc -3",
    "abbrev 6",
    "repeat 2",
    "wrap 5",
    "plural \"one\" \"many\"",
    "regexFind \"[a-z]+\"",
    "regexReplaceAll \"[aeiou]\" \"_\"",
];

const PRINTF_VERBS: &[&str] =
    &["%v", "%s", "%d", "%q", "%x", "%t", "%f", "%g", "%e", "%T", "%5.2f", "%-6s|", "%05d", "%+d", "%#v", "%8.3e", "%X", "%o", "%c", "%U"];
const PRINTF_ARGS: &[&str] =
    &[".Values.i1", ".Values.f15", ".Values.s", ".Values.m", ".Values.l", "true", "nil", "42", "\"str\"", "1.5", "-7", ".Values.missing"];

const COMPARE_ARGS: &[&str] = &["1", "2", "1.0", ".Values.i1", "\"a\"", "\"b\"", "true", ".Values.missing", ".Values.l"];

const DEFAULT_VALUES: &str = "i1: 1\nf15: 1.5\ns: hello world\nm: {b: 2, a: 1, c: {x: 1}}\nl: [3, 1, 2, 1]\nemptys: \"\"\nemptyl: []\nemptym: {}\nt: true\nf: false\n";

fn generated_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, source) in VALUE_SOURCES.iter().enumerate() {
        let values = format!("k: {source}\n");
        for (label, template) in VALUE_TEMPLATES {
            cases.push(Case { name: format!("gen/value-{i:03}-{label}"), values: values.clone(), template: template.to_string() });
        }
    }
    for (fi, func) in STRING_FUNCS.iter().enumerate() {
        for (si, s) in STRINGS.iter().enumerate() {
            let arg = format!("{:?}", s).replace("\\'", "'");
            let template = if func.starts_with("plural") { format!("{{{{ {func} {si} }}}}") } else { format!("{{{{ {arg} | {func} }}}}") };
            cases.push(Case { name: format!("gen/string-{fi:02}-{si:02}"), values: DEFAULT_VALUES.into(), template });
        }
    }
    for (vi, verb) in PRINTF_VERBS.iter().enumerate() {
        for (ai, arg) in PRINTF_ARGS.iter().enumerate() {
            cases.push(Case {
                name: format!("gen/printf-{vi:02}-{ai:02}"),
                values: DEFAULT_VALUES.into(),
                template: format!("{{{{ printf \"{verb}\" {arg} }}}}"),
            });
        }
    }
    for (oi, op) in ["eq", "ne", "lt", "le", "gt", "ge"].iter().enumerate() {
        for (ai, a) in COMPARE_ARGS.iter().enumerate() {
            for (bi, b) in COMPARE_ARGS.iter().enumerate() {
                cases.push(Case {
                    name: format!("gen/compare-{oi}-{ai}-{bi}"),
                    values: DEFAULT_VALUES.into(),
                    template: format!("{{{{ {op} {a} {b} }}}}"),
                });
            }
        }
    }
    cases
}
