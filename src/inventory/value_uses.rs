//! Where a chart's own templates read `.Values.<path>`: the file and line of each use, so a
//! finding about a values key can name what the key controls in that chart.

use serde::Serialize;

use helm_render::chart::Chart;

/// One `.Values.<path>` (or `$.Values.<path>`) in a template of the chart itself (subcharts
/// read their own scope and are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValueUse {
    /// The values path read (`manager.config.clientConnection.qps`).
    pub path: String,
    /// The template, relative to the chart (`templates/manager/configmap.yaml`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The line, trimmed (shortened past 160 characters).
    pub text: String,
}

impl ValueUse {
    /// Whether this use reads the user's value at `path`: the same path, a map above it the
    /// template reads whole (`toYaml .Values.manager.podAnnotations`), or a path below a map
    /// the user set.
    pub fn reads(&self, path: &str) -> bool {
        self.path == path || path.starts_with(&format!("{}.", self.path)) || self.path.starts_with(&format!("{path}."))
    }
}

/// Every `.Values.` use in the chart's templates, in file then line order.
pub fn value_uses(chart: &Chart) -> Vec<ValueUse> {
    let mut out = Vec::new();
    let mut templates: Vec<_> = chart.templates.iter().collect();
    templates.sort_by(|a, b| a.path.cmp(&b.path));
    for t in templates {
        let text = String::from_utf8_lossy(&t.data);
        for (i, line) in text.lines().enumerate() {
            for path in paths_in(line) {
                let trimmed = line.trim();
                let shown = if trimmed.chars().count() > 160 {
                    format!("{}…", trimmed.chars().take(160).collect::<String>())
                } else {
                    trimmed.to_string()
                };
                out.push(ValueUse { path, file: t.path.clone(), line: i + 1, text: shown });
            }
        }
    }
    out
}

/// The values paths one line reads, each once, in order.
fn paths_in(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(".Values.") {
        let after = &rest[at + ".Values.".len()..];
        let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(after.len());
        let path = after[..end].trim_end_matches('.');
        // `x.Values.y` is a field of something else, not the chart's values.
        let before = rest[..at].chars().next_back();
        if !path.is_empty() && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_from_template_lines() {
        assert_eq!(paths_in("  qps: {{ .Values.manager.config.clientConnection.qps }}"), ["manager.config.clientConnection.qps"]);
        assert_eq!(
            paths_in(r#"image: "{{ .Values.a.registry }}/{{ $.Values.a.repository }}:{{ .Values.a.registry }}""#),
            ["a.registry", "a.repository"]
        );
        assert_eq!(paths_in("{{- with .Values.manager.labels }}"), ["manager.labels"]);
        assert!(paths_in("{{ .Chart.Name }} foo.Values.x").is_empty());
    }

    #[test]
    fn a_use_reads_the_path_its_parent_map_and_its_children() {
        let u = ValueUse { path: "manager.podAnnotations".into(), file: "t".into(), line: 1, text: String::new() };
        assert!(u.reads("manager.podAnnotations"));
        assert!(u.reads("manager.podAnnotations.a"));
        assert!(u.reads("manager"));
        assert!(!u.reads("manager.pod"));
        assert!(!u.reads("manager.podAnnotationsX"));
    }
}
