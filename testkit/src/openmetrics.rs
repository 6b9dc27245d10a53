//! A strict parser for the OpenMetrics 1.0 text format (the ABNF and the rules of
//! github.com/OpenObservability/OpenMetrics `specification/OpenMetrics.md`, "Text format"),
//! restricted to what Prometheus' own text format 0.0.4 also reads, so that output it accepts is
//! fit for both: a Pushgateway and node_exporter's textfile collector read the latter.
//!
//! Checked: every line ends in LF and the last is `# EOF`; `# HELP`, `# TYPE` and `# UNIT` come
//! at most once per family and before its samples; a family's samples are contiguous (no
//! interleaving) and their names are the family's (with the type's suffixes); metric and label
//! names match the ABNF; label values use only the `\\`, `\"` and `\n` escapes; no label name
//! repeats within a sample and no sample (name and label set) repeats; values are numbers,
//! `+Inf`, `-Inf` or `NaN`; no timestamps (Prometheus' textfile collector refuses them); a
//! `# UNIT` unit is the name's suffix.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Family {
    pub name: String,
    pub kind: String,
    pub help: Option<String>,
    pub unit: Option<String>,
    pub samples: Vec<Sample>,
}

const TYPES: [&str; 8] = ["counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown"];

fn metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn label_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The sample names a family of this type may have.
fn sample_names(family: &str, kind: &str) -> Vec<String> {
    let with = |suffixes: &[&str]| suffixes.iter().map(|s| format!("{family}{s}")).collect();
    match kind {
        "counter" => with(&["_total", "_created"]),
        "histogram" => with(&["_bucket", "_count", "_sum", "_created"]),
        "gaugehistogram" => with(&["_bucket", "_gcount", "_gsum"]),
        "summary" => with(&["", "_count", "_sum", "_created"]),
        "info" => with(&["_info"]),
        _ => with(&[""]),
    }
}

fn number(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => return Ok(f64::INFINITY),
        "-Inf" => return Ok(f64::NEG_INFINITY),
        "NaN" => return Ok(f64::NAN),
        _ => {}
    }
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) && s.chars().any(|c| c.is_ascii_digit());
    if !ok {
        return Err(format!("{s:?} is not a number"));
    }
    s.parse::<f64>().map_err(|e| format!("{s:?}: {e}"))
}

/// `{a="x",b="y"}` (the braces included) into its pairs; the rest of the line after it.
fn labels(text: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut out = BTreeMap::new();
    let mut rest = text.strip_prefix('{').ok_or("labels must open with {")?;
    if let Some(after) = rest.strip_prefix('}') {
        return Ok((out, after));
    }
    loop {
        let eq = rest.find('=').ok_or("a label without =")?;
        let name = &rest[..eq];
        if !label_name(name) {
            return Err(format!("invalid label name {name:?}"));
        }
        rest = rest[eq + 1..].strip_prefix('"').ok_or_else(|| format!("label {name}: the value must be quoted"))?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err(format!("label {name}: unterminated value")),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("label {name}: invalid escape {other:?}")),
                },
                Some((_, '\n')) => return Err(format!("label {name}: a raw newline")),
                Some((_, c)) => value.push(c),
            }
        };
        if out.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} repeats"));
        }
        rest = &rest[end + 1..];
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((out, after));
        }
        rest = rest.strip_prefix(',').ok_or("labels are separated by ,")?;
    }
}

/// Parses an exposition; every rule above broken is an error naming the line.
pub fn parse(text: &str) -> Result<Vec<Family>, String> {
    let body = text.strip_suffix("# EOF\n").ok_or("the exposition must end with the line `# EOF`")?;
    if body.contains('\r') {
        return Err("lines end with LF only".into());
    }
    let mut families: Vec<Family> = Vec::new();
    let mut seen_samples: BTreeSet<(String, Vec<(String, String)>)> = BTreeSet::new();
    for (n, line) in body.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.is_empty() {
            return Err(at("empty line".into()));
        }
        if let Some(meta) = line.strip_prefix("# ") {
            let mut parts = meta.splitn(3, ' ');
            let (what, name, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next());
            if !metric_name(name) {
                return Err(at(format!("invalid metric name {name:?}")));
            }
            let open = families.last().is_some_and(|f| f.name == name && f.samples.is_empty());
            if !open {
                if families.iter().any(|f| f.name == name) {
                    return Err(at(format!("family {name} appears twice or its metadata follows its samples")));
                }
                families.push(Family { name: name.to_string(), kind: "unknown".into(), ..Family::default() });
            }
            let family = families.last_mut().unwrap();
            let rest = rest.ok_or_else(|| at("metadata without a value".into()))?;
            match what {
                "HELP" if family.help.is_none() => {
                    family.help = Some(rest.replace("\\n", "\n").replace("\\\"", "\"").replace("\\\\", "\\"))
                }
                "TYPE" if family.kind == "unknown" && TYPES.contains(&rest) => family.kind = rest.to_string(),
                "UNIT" if family.unit.is_none() => {
                    if !name.ends_with(&format!("_{rest}")) {
                        return Err(at(format!("the unit {rest} must be the name's suffix")));
                    }
                    family.unit = Some(rest.to_string());
                }
                _ => return Err(at(format!("invalid or repeated # {what}"))),
            }
            continue;
        }
        if line.starts_with('#') {
            return Err(at("comments other than HELP, TYPE, UNIT and EOF are not OpenMetrics".into()));
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| at("a sample needs a value".into()))?;
        let name = &line[..name_end];
        if !metric_name(name) {
            return Err(at(format!("invalid metric name {name:?}")));
        }
        let (labels, rest) =
            if line[name_end..].starts_with('{') { labels(&line[name_end..]).map_err(at)? } else { (BTreeMap::new(), &line[name_end..]) };
        let rest = rest.strip_prefix(' ').ok_or_else(|| at("one space before the value".into()))?;
        if rest.contains(' ') || rest.contains('#') {
            return Err(at("a timestamp or an exemplar (the textfile collector refuses timestamps)".into()));
        }
        let value = number(rest).map_err(at)?;
        let index = families
            .iter()
            .rposition(|f| sample_names(&f.name, &f.kind).iter().any(|s| s == name))
            .ok_or_else(|| at(format!("sample {name} belongs to no declared family")))?;
        if index + 1 < families.len() {
            return Err(at("samples of a family must be contiguous".into()));
        }
        let family = &mut families[index];
        let key = (name.to_string(), labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        if !seen_samples.insert(key) {
            return Err(at("the same sample twice".into()));
        }
        family.samples.push(Sample { name: name.to_string(), labels, value });
    }
    Ok(families)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_format_and_refuses_what_breaks_it() {
        let good = "# HELP a_seconds When.\n# TYPE a_seconds gauge\n# UNIT a_seconds seconds\na_seconds{x=\"q\\\"\\\\\\n\"} 1.5e3\n# TYPE b counter\nb_total 1\n# EOF\n";
        let families = parse(good).unwrap();
        assert_eq!(families.len(), 2);
        assert_eq!(families[0].samples[0].labels["x"], "q\"\\\n");
        assert_eq!(families[0].samples[0].value, 1500.0);
        for (bad, why) in [
            ("# TYPE a gauge\na 1\n", "EOF"),
            ("# TYPE a gauge\na 1 1700000000\n# EOF\n", "timestamp"),
            ("# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n# EOF\n", "repeats"),
            ("# TYPE a gauge\na{x=\"\\t\"} 1\n# EOF\n", "escape"),
            ("# TYPE a gauge\n# TYPE b gauge\nb 1\na 1\n# EOF\n", "contiguous"),
            ("# TYPE a gauge\na 1\n# TYPE a gauge\n# EOF\n", "twice"),
            ("# TYPE a gauge\na one\n# EOF\n", "number"),
            ("# TYPE a gauge\na 1\na 1\n# EOF\n", "same sample"),
            ("c 1\n# EOF\n", "no declared family"),
            ("# TYPE a gauge\n\na 1\n# EOF\n", "empty line"),
            ("# TYPE a_bytes gauge\n# UNIT a_bytes seconds\n# EOF\n", "suffix"),
            ("# TYPE 1a gauge\n# EOF\n", "invalid metric name"),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }
}
