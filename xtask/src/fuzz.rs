//! `cargo xtask fuzz [--seconds N | --minutes N] [--target NAME]`: fuzzers for everything the
//! tool reads from strangers, each for its share of the time. `template`: templates generated
//! from the grammar (actions, pipelines, control structures, defines, includes, tpl, every
//! function name) rendered with tight limits. `archive`, `yaml`, `values`, `release`,
//! `snapshot`: seeds mutated byte-wise (flips, YAML-significant insertions, truncation, splices)
//! and fed to the chart archive loader, the YAML reader, values coalescing, the Helm release
//! decoder and the snapshot reader. Any panic fails the run and saves the input under
//! `target/fuzz-crashes/`; so does any input that takes more than 5 s.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const FIELDS: &[&str] = &[
    ".Values.a",
    ".Values.m",
    ".Values.l",
    ".Values.s",
    ".Values.n",
    ".Values.missing",
    ".Values.m.x",
    ".Release.Name",
    ".Chart.Name",
    ".",
    "$",
    ".Capabilities.KubeVersion",
    ".Files",
    ".Template.Name",
];
const LITERALS: &[&str] = &[
    "1",
    "0",
    "-3",
    "1.5",
    "1e3",
    "0x10",
    "'a'",
    "\"x\"",
    "\"\"",
    "\"a,b\"",
    "`raw`",
    "true",
    "false",
    "nil",
    "\"{{ .Values.a }}\"",
    "\"- 1\\n- 2\"",
    "\"a: 1\"",
];
const FUNCS: &[&str] = &[
    "toYaml",
    "toJson",
    "fromYaml",
    "fromJson",
    "include \"d\"",
    "tpl",
    "default",
    "quote",
    "upper",
    "trim",
    "indent 2",
    "nindent 4",
    "trunc 3",
    "list",
    "dict",
    "first",
    "last",
    "rest",
    "len",
    "index",
    "printf \"%v %d %s\"",
    "print",
    "eq",
    "lt",
    "and",
    "or",
    "not",
    "add",
    "sub",
    "div",
    "mod",
    "mul",
    "max",
    "int",
    "float64",
    "toString",
    "keys",
    "hasKey",
    "get",
    "set",
    "merge",
    "deepCopy",
    "append",
    "concat",
    "slice",
    "until",
    "seq",
    "repeat 2",
    "replace \"a\" \"b\"",
    "split \",\"",
    "join \",\"",
    "sortAlpha",
    "uniq",
    "has",
    "regexFind \"[a-z]+\"",
    "regexSplit \",\"",
    "semverCompare \">=1\"",
    "kindOf",
    "typeOf",
    "empty",
    "coalesce",
    "ternary 1 2",
    "b64enc",
    "b64dec",
    "sha256sum",
    "toToml",
    "fromJsonArray",
    "dig \"a\" \"b\"",
    "required \"r\"",
    "fail",
    "mustToYaml",
    "toYamlPretty",
    "urlParse",
    "base",
    "ext",
    "title",
    "abbrev 5",
    "wrap 3",
    "round",
    "ceil",
    "addf",
    "divf",
    "date \"2006\"",
    "toDate \"2006-01-02\"",
    "duration",
];

fn operand(rng: &mut Rng, depth: usize) -> String {
    match rng.below(if depth > 3 { 2 } else { 4 }) {
        0 => rng.pick(FIELDS).to_string(),
        1 => rng.pick(LITERALS).to_string(),
        2 => format!("({})", pipeline(rng, depth + 1)),
        _ => format!("$v{}", rng.below(3)),
    }
}

fn pipeline(rng: &mut Rng, depth: usize) -> String {
    let mut p = operand(rng, depth);
    for _ in 0..rng.below(3) {
        let f = rng.pick(FUNCS);
        let args: Vec<String> = (0..rng.below(3)).map(|_| operand(rng, depth + 1)).collect();
        p = format!("{p} | {f} {}", args.join(" "));
    }
    if rng.below(4) == 0 {
        let f = rng.pick(FUNCS);
        p = format!("{f} {p}");
    }
    p
}

fn node(rng: &mut Rng, depth: usize) -> String {
    let trim_l = if rng.below(4) == 0 { "- " } else { " " };
    let trim_r = if rng.below(4) == 0 { " -" } else { " " };
    match rng.below(if depth > 4 { 3 } else { 10 }) {
        0 => "text\n  ".to_string(),
        1 => format!("{{{{{trim_l}{}{trim_r}}}}}", pipeline(rng, depth)),
        2 => format!("{{{{{trim_l}$v{} := {}{trim_r}}}}}", rng.below(3), pipeline(rng, depth)),
        3 => format!("{{{{ if {} }}}}{}{{{{ else }}}}{}{{{{ end }}}}", pipeline(rng, depth), body(rng, depth + 1), body(rng, depth + 1)),
        4 => format!("{{{{ with {} }}}}{}{{{{ end }}}}", pipeline(rng, depth), body(rng, depth + 1)),
        5 => format!(
            "{{{{ range $i, $e := {} }}}}{}{{{{ if $i }}}}{{{{ break }}}}{{{{ end }}}}{{{{ end }}}}",
            pipeline(rng, depth),
            body(rng, depth + 1)
        ),
        6 => format!("{{{{ template \"d\" {} }}}}", operand(rng, depth)),
        7 => format!("{{{{ include \"d\" {} | nindent 2 }}}}", operand(rng, depth)),
        8 => format!("{{{{ tpl {} . }}}}", rng.pick(LITERALS)),
        _ => "{{/* comment */}}".to_string(),
    }
}

fn body(rng: &mut Rng, depth: usize) -> String {
    (0..1 + rng.below(3)).map(|_| node(rng, depth)).collect()
}

fn template(rng: &mut Rng) -> String {
    let mut t = String::new();
    if rng.below(2) == 0 {
        t.push_str(&format!("{{{{ define \"d\" }}}}{}{{{{ end }}}}", body(rng, 2)));
    }
    t.push_str("{{ $v0 := 1 }}{{ $v1 := .Values.l }}{{ $v2 := .Values.m }}");
    t.push_str(&body(rng, 0));
    // Byte-level mutations reach the lexer's error paths.
    let mutations = if rng.below(3) == 0 { 1 + rng.below(3) } else { 0 };
    for _ in 0..mutations {
        let bytes: &[&str] = &["{{", "}}", "(", ")", "|", "\"", "`", "'", "$", ".", "-", " ", "\n", "{{-", "-}}", "/*", "*/", ":=", "="];
        let pos = rng.below(t.len() + 1);
        let pos = (0..=pos).rev().find(|&p| t.is_char_boundary(p)).unwrap_or(0);
        if rng.below(2) == 0 {
            t.insert_str(pos, rng.pick(bytes));
        } else {
            let end = (pos + 1 + rng.below(4)).min(t.len());
            let end = (end..=t.len()).find(|&p| t.is_char_boundary(p)).unwrap_or(t.len());
            t.replace_range(pos..end, "");
        }
    }
    t
}

const VALUES: &[&str] = &[
    "a: 1\nm: {x: 1, y: [1, 2]}\nl: [3, 1, 2]\ns: hello\nn: null\n",
    "a: yes\nm: {}\nl: []\ns: ''\n",
    "a: 1e6\nm: {x: {y: {z: 1}}}\nl: [{a: 1}, [1, [2]]]\ns: \"a: b\"\n",
    "a: &x [1, 2]\nm: {x: *x}\nl: *x\ns: |\n  multi\n  line\n",
];

const TARGETS: &[&str] = &["template", "archive", "yaml", "values", "release", "snapshot"];

pub fn run(args: &[String]) -> Result<()> {
    let mut seconds: u64 = 60;
    let mut targets: Vec<&str> = TARGETS.to_vec();
    let mut engine = if cargo_fuzz_available() { "cargo-fuzz" } else { "builtin" };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().map(String::as_str).unwrap_or("");
        match flag.as_str() {
            "--seconds" => seconds = value.parse()?,
            "--minutes" => seconds = value.parse::<u64>()? * 60,
            "--target" if TARGETS.contains(&value) => targets = vec![TARGETS[TARGETS.iter().position(|t| *t == value).unwrap_or(0)]],
            "--engine" if value == "builtin" || value == "cargo-fuzz" => engine = if value == "builtin" { "builtin" } else { "cargo-fuzz" },
            _ => {
                bail!("usage: cargo xtask fuzz [--seconds N | --minutes N] [--target {}] [--engine cargo-fuzz|builtin]", TARGETS.join("|"))
            }
        }
    }
    let share = (seconds / targets.len() as u64).max(1);
    if engine == "cargo-fuzz" {
        for target in targets {
            libfuzzer(target, share)?;
        }
        return Ok(());
    }
    std::panic::set_hook(Box::new(|_| {}));
    for target in targets {
        if target == "template" {
            templates(share)?;
        } else {
            bytes(target, share)?;
        }
    }
    Ok(())
}

/// Whether `cargo +nightly fuzz` can run here (cargo-fuzz installed, a nightly toolchain).
fn cargo_fuzz_available() -> bool {
    std::process::Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One cargo-fuzz (libFuzzer) target for `seconds`, seeded with the same inputs as the builtin
/// fuzzer; a crash fails the run (libFuzzer saves it under `fuzz/artifacts/`).
fn libfuzzer(target: &str, seconds: u64) -> Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus)?;
    let seeds = if target == "template" {
        VALUES.iter().map(|v| format!("{{{{ toYaml .Values }}}}\0{v}").into_bytes()).collect()
    } else {
        seeds(target)
    };
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(corpus.join(format!("seed-{i}")), seed)?;
    }
    let status = std::process::Command::new("cargo")
        .current_dir(&root)
        .args([
            "+nightly",
            "fuzz",
            "run",
            target,
            "--",
            &format!("-max_total_time={seconds}"),
            "-rss_limit_mb=1024",
            "-timeout=5",
            "-print_final_stats=1",
        ])
        .status()?;
    if !status.success() {
        bail!("cargo fuzz run {target} found a crash ({status}); see fuzz/artifacts/{target}/");
    }
    println!("fuzz {target} (libFuzzer): {seconds} s, no crash");
    Ok(())
}

/// Mutation fuzzing of one byte-input target for `seconds`.
fn bytes(target: &str, seconds: u64) -> Result<()> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64 | 1;
    let mut rng = Rng(seed);
    let seeds = seeds(target);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut runs, mut slowest) = (0u64, Duration::ZERO);
    while Instant::now() < deadline {
        let mut input = seeds[rng.below(seeds.len())].clone();
        for _ in 0..=rng.below(8) {
            mutate(&mut rng, &mut input);
        }
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| feed(target, &input)));
        let took = started.elapsed();
        slowest = slowest.max(took);
        runs += 1;
        if outcome.is_err() || took > Duration::from_secs(5) {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-crashes");
            std::fs::create_dir_all(&dir)?;
            let file = dir.join(format!("{target}-{seed}-{runs}.bin"));
            std::fs::write(&file, &input)?;
            let what = if outcome.is_err() { "panic".to_string() } else { format!("{took:?}") };
            bail!("{target}: {what} after {runs} inputs; input saved to {}", file.display());
        }
    }
    println!("fuzz {target}: {runs} inputs in {seconds} s (seed {seed}): 0 panics; slowest {slowest:?}");
    Ok(())
}

const YAML_BYTES: &[u8] = b":-[]{}&*!|>'\"#%@`,? \n\t0.~";

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    let len = input.len();
    match rng.below(6) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(len + 1);
            input.insert(i, YAML_BYTES[rng.below(YAML_BYTES.len())]);
        }
        2 if len > 0 => {
            let i = rng.below(len);
            input.remove(i);
        }
        3 if len > 0 => input.truncate(rng.below(len)),
        4 if len > 2 => {
            // Duplicate a slice (repetition finds nesting and size bugs).
            let (a, b) = (rng.below(len), rng.below(len));
            let (a, b) = (a.min(b), a.max(b));
            let piece = input[a..b.min(a + 256)].to_vec();
            let at = rng.below(len);
            input.splice(at..at, piece);
        }
        _ => {
            let i = rng.below(len + 1);
            input.insert(i, rng.next() as u8);
        }
    }
}

fn tiny_archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut tar_bytes = Vec::new();
    {
        let mut b = tar::Builder::new(&mut tar_bytes);
        for (path, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            let _ = b.append_data(&mut h, path, data.as_bytes());
        }
        let _ = b.finish();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = std::io::Write::write_all(&mut gz, &tar_bytes);
    gz.finish().unwrap_or_default()
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "archive" => vec![
            tiny_archive(&[
                ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n"),
                ("c/values.yaml", "a: 1\n"),
                ("c/templates/t.yaml", "x: {{ .Values.a }}\n"),
            ]),
            tiny_archive(&[
                ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- name: s\n  version: 0.1.0\n"),
                ("c/charts/s/Chart.yaml", "apiVersion: v2\nname: s\nversion: 0.1.0\n"),
            ]),
        ],
        "release" => {
            let release = serde_json::json!({"name": "r", "namespace": "n", "version": 1, "info": {"status": "deployed"},
                "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.2.1"}}, "config": {"a": {"password": "x"}}, "manifest": "---\nkind: A\n"});
            let secret = testkit::release::encode_secret(&release, true);
            let plain = testkit::release::encode_secret(&release, false);
            vec![
                secret["data"]["release"].as_str().unwrap_or("").as_bytes().to_vec(),
                plain["data"]["release"].as_str().unwrap_or("").as_bytes().to_vec(),
            ]
        }
        "snapshot" => ["helm-2.2.1", "kustomize-2.2.0"]
            .iter()
            .filter_map(|s| testkit::scenario::scenario_yaml(s))
            .map(String::into_bytes)
            .chain(std::iter::once(
                br#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}]}"#.to_vec(),
            ))
            .collect(),
        _ => VALUES.iter().map(|v| v.as_bytes().to_vec()).collect(),
    }
}

/// Feeds one input to a target (the same entry points the cargo-fuzz targets use).
fn feed(target: &str, input: &[u8]) {
    match target {
        "archive" => testkit::fuzz::archive(input),
        "yaml" => testkit::fuzz::yaml(input),
        "values" => testkit::fuzz::values(input),
        "release" => testkit::fuzz::release(input),
        "snapshot" => testkit::fuzz::snapshot(input),
        _ => {}
    }
}

/// The grammar-based template fuzzer for `seconds`.
fn templates(seconds: u64) -> Result<()> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64 | 1;
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut runs, mut ok, mut errors, mut slowest) = (0u64, 0u64, 0u64, Duration::ZERO);
    while Instant::now() < deadline {
        let tpl = template(&mut rng);
        let values = VALUES[rng.below(VALUES.len())];
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| testkit::snippet::render_snippet_limited(values, &tpl, testkit::fuzz::limits())));
        let took = started.elapsed();
        slowest = slowest.max(took);
        runs += 1;
        match outcome {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(_)) => errors += 1,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-crashes");
                std::fs::create_dir_all(&dir)?;
                let file = dir.join(format!("crash-{seed}-{runs}.tpl"));
                std::fs::write(&file, format!("{tpl}\n---values---\n{values}"))?;
                bail!("panic after {runs} runs: {message}; input saved to {}", file.display());
            }
        }
        // Key generation and scrypt are bounded by the engine's work units (about 13 s of CPU per
        // render at most), not by the step budget, so those templates get a wider time limit.
        let limit = if ["genPrivateKey", "genCA", "genSelfSigned", "genSignedCert", "derivePassword"].iter().any(|f| tpl.contains(f)) {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(5)
        };
        if took > limit {
            bail!("a render took {took:?} (limit {limit:?}): {tpl:?}");
        }
    }
    println!(
        "fuzz template: {runs} templates in {seconds} s (seed {seed}): {ok} rendered, {errors} refused with an error, 0 panics; slowest {slowest:?}"
    );
    Ok(())
}
