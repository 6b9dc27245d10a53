//! Helm's template engine: every template of a chart and its subcharts parsed into one set in
//! Helm's order (deepest paths first, then reverse lexical, so the shallowest `define` wins),
//! partials skipped, `.Template` set on the chart's shared data before each file, `<no value>`
//! removed, and errors reformatted exactly as Helm v4 prints them.

use std::collections::BTreeMap;

use crate::funcs::helm_funcs;
use gotmpl::{Budget, GoError, Limits, Templates, Value};

/// One template file to render.
#[derive(Debug, Clone)]
pub struct TemplateFile<'a> {
    /// Full name, e.g. `kubeflow-trainer/charts/jobset/templates/deployment.yaml`.
    pub name: String,
    /// Borrowed from the chart when it is valid UTF-8 (always, for real charts).
    pub text: std::borrow::Cow<'a, str>,
    /// The chart's data map (`.Values`, `.Release`, `.Chart`, …); shared by its templates.
    pub data: Value,
    /// `<chart path>/templates`.
    pub base_path: String,
}

/// Why a chart did not render, worded exactly as Helm words it (the whole message is Helm's, so
/// callers print it as it is and tests compare it with Helm's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);

// The stages before and after the engine keep their own typed errors; a render reports their
// text, which is Helm's, unchanged.
impl From<crate::values::CoalesceError> for RenderError {
    fn from(e: crate::values::CoalesceError) -> RenderError {
        RenderError(e.to_string())
    }
}

impl From<crate::values_schema::InvalidSchema> for RenderError {
    fn from(e: crate::values_schema::InvalidSchema) -> RenderError {
        RenderError(e.to_string())
    }
}

impl From<crate::manifest::SortError> for RenderError {
    fn from(e: crate::manifest::SortError) -> RenderError {
        RenderError(e.to_string())
    }
}

/// Helm's `sortTemplates`: by number of `/` descending, then reverse byte order.
pub fn parse_order(names: &mut [&str]) {
    names.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
}

/// Renders every non-partial template; the result maps template names to output.
pub fn render(files: &[TemplateFile<'_>], limits: Limits) -> Result<BTreeMap<String, String>, RenderError> {
    let mut templates = Templates::new(helm_funcs(), "gotpl");
    let mut names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    parse_order(&mut names);
    let by_name: BTreeMap<&str, &TemplateFile<'_>> = files.iter().map(|f| (f.name.as_str(), f)).collect();
    for name in &names {
        let file = by_name[name];
        templates.parse(name, &file.text).map_err(|e| RenderError(cleanup_parse_error(name, &e.message)))?;
    }
    let budget = Budget::new(limits);
    let mut rendered = BTreeMap::new();
    for name in &names {
        let base = name.rsplit('/').next().unwrap_or(name);
        if base.starts_with('_') {
            continue;
        }
        let file = by_name[name];
        if let Value::Map(m) = &file.data {
            let mut template = gotmpl::Map::new();
            template.insert("Name".into(), Value::str(name));
            template.insert("BasePath".into(), Value::str(&file.base_path));
            m.entries.borrow_mut().insert("Template".into(), Value::map_of(gotmpl::MapKind::Values, template));
        }
        let out = templates.execute(name, file.data.clone(), &budget).map_err(|e| RenderError(reformat_exec_error(name, &e)))?;
        rendered.insert(name.to_string(), remove_no_value(out));
    }
    Ok(rendered)
}

/// Helm deletes every `<no value>` from the output; most outputs have none and are kept as is.
fn remove_no_value(out: String) -> String {
    if memchr::memmem::find(out.as_bytes(), b"<no value>").is_none() {
        return out;
    }
    out.replace("<no value>", "")
}

/// Helm's `cleanupParseError`.
pub fn cleanup_parse_error(filename: &str, message: &str) -> String {
    let tokens: Vec<&str> = message.split(": ").collect();
    if tokens.len() == 1 {
        return format!("parse error in ({filename}): {message}");
    }
    format!("parse error at ({}): {}", tokens[1], tokens[tokens.len() - 1])
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Traceable {
    location: String,
    message: String,
    executed: String,
}

impl Traceable {
    fn render(&self) -> String {
        let mut out = String::new();
        if !self.location.is_empty() {
            out.push_str(&format!("{}\n  ", self.location));
        }
        if !self.executed.is_empty() {
            out.push_str(&format!("{}\n    ", self.executed));
        }
        if !self.message.is_empty() {
            out.push_str(&format!("{}\n", self.message));
        }
        out
    }
}

fn cut_chained(message: &str) -> String {
    match message.find(" template:") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Helm's `parseTemplateExecErrorString`.
fn parse_exec_error(s: &str) -> Option<Traceable> {
    let remainder = s.strip_prefix("template: ")?;
    if remainder.starts_with("no template ") {
        return Some(Traceable { location: String::new(), message: s.to_string(), executed: String::new() });
    }
    if let Some((name, after)) = remainder.split_once(": executing ") {
        let after_quote = after.strip_prefix('"')?;
        let end = after_quote.find('"')?;
        let function = &after_quote[..end];
        let after_func = &after_quote[end + 1..];
        let after_at = after_func.strip_prefix(" at <")?;
        let (location, message) = after_at.split_once(">: ")?;
        return Some(Traceable {
            location: name.to_string(),
            message: cut_chained(message),
            executed: format!("executing \"{function}\" at <{location}>:"),
        });
    }
    let sep = remainder.rfind(": ")?;
    Some(Traceable { location: remainder[..sep].to_string(), message: cut_chained(&remainder[sep + 2..]), executed: String::new() })
}

/// Helm v4's `reformatExecErrorMsg`.
pub fn reformat_exec_error(filename: &str, err: &GoError) -> String {
    if !err.is_exec() {
        return err.text.clone();
    }
    let tokens: Vec<&str> = err.text.splitn(3, ": ").collect();
    if tokens.len() != 3 {
        return format!("execution error in ({filename}): {}", err.text);
    }
    let location = tokens[1];
    if let (Some(start), Some(end)) = (tokens[2].find(crate::funcs::WARN_START), tokens[2].rfind(crate::funcs::WARN_END)) {
        let inner_start = start + crate::funcs::WARN_START.len();
        if inner_start <= end {
            return format!("execution error at ({location}): {}", &tokens[2][inner_start..end]);
        }
    }
    let mut trace: Vec<Traceable> = Vec::new();
    for level in err.chain() {
        match parse_exec_error(level) {
            Some(t) => {
                if trace.last() != Some(&t) {
                    trace.push(t);
                }
            }
            None => return err.text.clone(),
        }
    }
    trace.iter().map(Traceable::render).collect::<String>().trim().to_string()
}
