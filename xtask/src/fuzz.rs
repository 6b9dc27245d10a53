//! `cargo xtask fuzz --seconds N`: a structured fuzzer for the template engine. It generates
//! templates from the grammar (actions, pipelines, control structures, defines, includes, tpl,
//! every function name) and values files, mutates bytes, and renders them with tight limits,
//! catching any panic. A crash is saved under `target/fuzz-crashes/` and fails the run.

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

pub fn run(args: &[String]) -> Result<()> {
    let seconds: u64 = match args {
        [flag, n] if flag == "--seconds" => n.parse()?,
        [flag, n] if flag == "--minutes" => n.parse::<u64>()? * 60,
        [] => 60,
        _ => bail!("usage: cargo xtask fuzz [--seconds N | --minutes N]"),
    };
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64 | 1;
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut runs, mut ok, mut errors, mut slowest) = (0u64, 0u64, 0u64, Duration::ZERO);
    std::panic::set_hook(Box::new(|_| {}));
    while Instant::now() < deadline {
        let tpl = template(&mut rng);
        let values = VALUES[rng.below(VALUES.len())];
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| trainer_audit::helm::snippet::render_snippet_limited(values, &tpl, fuzz_limits())));
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
        "fuzz: {runs} templates in {seconds} s (seed {seed}): {ok} rendered, {errors} refused with an error, 0 panics; slowest {slowest:?}"
    );
    Ok(())
}

fn fuzz_limits() -> trainer_audit::gotmpl::Limits {
    trainer_audit::gotmpl::Limits {
        max_steps: 200_000,
        max_output: 1 << 20,
        max_total_bytes: 64 << 20,
        ..trainer_audit::gotmpl::Limits::default()
    }
}
