//! Small readers several kinds share: object names as findings print them, TrainJobs using a
//! runtime, script lines matching a pattern, lists a message names, and a hook as a hit's subject.

use serde_json::Value as Json;

use super::Hit;
use crate::audit::input::CheckInput;
use crate::inventory::hook::HookInfo;
use crate::objects::str_at;

/// `Kind/name`, or `Kind/namespace/name` when namespaced: how every finding names an object.
pub fn name_of(o: &Json) -> String {
    match str_at(o, &["metadata", "namespace"]) {
        "" => format!("{}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "name"])),
        ns => format!("{}/{ns}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "name"])),
    }
}

/// TrainJobs naming the runtime `kind`/`name` in any namespace (from the one pass over them).
pub fn trainjobs_using(input: &CheckInput, kind: &str, name: &str) -> usize {
    input.trainjob_facts().using(kind, name, None)
}

/// Lines of a script matching `pattern`, trimmed, comments left out.
pub fn lines_matching(script: &str, pattern: &regex::Regex) -> Vec<String> {
    script.lines().map(str::trim).filter(|l| !l.starts_with('#') && pattern.is_match(l)).map(str::to_string).collect()
}

/// A list a message names: at most `shown` items, then how many more and where they all are (a
/// finding's evidence carries every item; machine formats print it whole). Messages are what a
/// person reads first; nothing is left out without saying so.
pub fn listed(items: &[impl AsRef<str>], shown: usize, separator: &str) -> String {
    let named: Vec<&str> = items.iter().take(shown).map(AsRef::as_ref).collect();
    if items.len() > named.len() {
        format!("{} and {} more (the evidence lists every one)", named.join(separator), items.len() - named.len())
    } else {
        named.join(separator)
    }
}

/// A hit about a hook, located at its template.
pub fn hook_hit(hook: &HookInfo, message: String, evidence: Vec<String>) -> Hit {
    Hit { subject: hook.identity.to_string(), location: hook.source.clone(), message, evidence, ..Hit::default() }
}

/// A static pattern, compiled on first use.
macro_rules! pattern {
    ($re:literal) => {{
        static PATTERN: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new($re).unwrap_or_else(|e| panic!("static pattern {}: {e}", $re)));
        &*PATTERN
    }};
}
pub(crate) use pattern;
