//! The krew plugin manifest (`plugin/krew/trainer-audit.yaml`, filled per release by
//! `release/build.sh finish`): krew's manifest rules as sigs.k8s.io/krew v0.4.3 checks them
//! (`internal/index/validation/validate.go` `ValidatePlugin`, `validatePlatform`, `validateFiles`,
//! `validateSelector`; `internal/installation/semver/version.go` `Parse`), plus what makes the
//! plugin ours: every platform's `bin` is the release archive's `trainer-audit`, which krew links
//! onto PATH under the plugin's name as `kubectl-trainer_audit` (`internal/installation/install.go`
//! `pluginNameToBin`), the file kubectl runs for `kubectl trainer-audit`.

use serde_json::Value;

/// The executable name kubectl finds for `kubectl trainer-audit`.
pub const BIN: &str = "kubectl-trainer_audit";

/// The file every release archive holds, and each platform's `bin`.
pub const ARCHIVED: &str = "trainer-audit";

/// The link krew makes for a plugin (Unix): `kubectl-` and the name with `-` as `_`.
pub fn link_name(plugin: &str) -> String {
    format!("kubectl-{}", plugin.replace('-', "_"))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

/// krew's semver: a leading `v`, then MAJOR.MINOR.PATCH with optional pre-release and build.
fn krew_semver(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else { return false };
    let core = rest.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && (p.len() == 1 || !p.starts_with('0')))
}

fn safe_name(name: &str) -> bool {
    const WINDOWS: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4",
        "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS.iter().any(|w| w.eq_ignore_ascii_case(name))
}

/// krew's `ValidatePlugin(name, plugin)` on a parsed manifest, then our binary name.
pub fn validate(name: &str, m: &Value) -> Result<(), String> {
    if str_at(m, &["apiVersion"]) != "krew.googlecontainertools.github.com/v1alpha2" {
        return Err(format!("apiVersion={:?} is not supported", m["apiVersion"]));
    }
    if str_at(m, &["kind"]) != "Plugin" {
        return Err(format!("kind={:?}, only \"Plugin\" is supported", m["kind"]));
    }
    if !safe_name(name) {
        return Err(format!("the plugin name {name:?} is not allowed"));
    }
    if str_at(m, &["metadata", "name"]) != name {
        return Err(format!("plugin should be named {name:?}, not {:?}", m["metadata"]["name"]));
    }
    let short = str_at(m, &["spec", "shortDescription"]);
    if short.is_empty() {
        return Err("should have a short description".into());
    }
    if short.contains(['\r', '\n']) {
        return Err("should not have line breaks in short description".into());
    }
    let platforms = m["spec"]["platforms"].as_array().filter(|p| !p.is_empty()).ok_or("should have a platform specified")?;
    let version = str_at(m, &["spec", "version"]);
    if version.is_empty() {
        return Err("should have a version specified".into());
    }
    if !krew_semver(version) {
        return Err(format!("failed to parse plugin version {version:?}"));
    }
    for p in platforms {
        platform(p).map_err(|e| format!("platform ({p}) is badly constructed: {e}"))?;
    }
    Ok(())
}

fn platform(p: &Value) -> Result<(), String> {
    if str_at(p, &["uri"]).is_empty() {
        return Err("`uri` has to be set".into());
    }
    let sha = str_at(p, &["sha256"]);
    if sha.is_empty() {
        return Err("`sha256` sum has to be set".into());
    }
    if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) {
        return Err(format!("`sha256` value {sha} is not valid"));
    }
    let bin = str_at(p, &["bin"]);
    if bin.is_empty() {
        return Err("`bin` has to be set".into());
    }
    if let Some(files) = p.get("files").filter(|f| !f.is_null()) {
        let files = files.as_array().filter(|f| !f.is_empty()).ok_or("`files` has to be unspecified or non-empty")?;
        for f in files {
            if str_at(f, &["from"]).is_empty() {
                return Err("`files`: `from` field has to be set".into());
            }
            if str_at(f, &["to"]).is_empty() {
                return Err("`files`: `to` field has to be set".into());
            }
        }
    }
    let selector = p.get("selector").filter(|s| !s.is_null()).ok_or("nil selector is not supported")?;
    let labels = selector.get("matchLabels").filter(|l| !l.is_null());
    let exprs = selector.get("matchExpressions").filter(|e| !e.is_null());
    let label_keys: Vec<&String> = labels.and_then(Value::as_object).map(|o| o.keys().collect()).unwrap_or_default();
    let expr_keys: Vec<&str> = exprs.and_then(Value::as_array).map(|a| a.iter().map(|e| str_at(e, &["key"])).collect()).unwrap_or_default();
    if labels.is_none() && expr_keys.is_empty() {
        return Err("empty selector is not supported".into());
    }
    for key in label_keys.iter().map(|k| k.as_str()).chain(expr_keys.iter().copied()) {
        if key != "os" && key != "arch" {
            return Err(format!("key {key:?} not supported"));
        }
    }
    if labels.is_some() && label_keys.is_empty() {
        return Err("`matchLabels` specified but empty".into());
    }
    if exprs.is_some() && expr_keys.is_empty() {
        return Err("`matchExpressions` specified but empty".into());
    }
    // Ours: the archive's binary, linked by krew where kubectl finds `kubectl trainer-audit`.
    if bin != ARCHIVED {
        return Err(format!("`bin` is {bin:?}: the release archives hold {ARCHIVED} (krew links it as {BIN})"));
    }
    Ok(())
}

/// The `os/arch` of every platform, in manifest order.
pub fn platforms(m: &Value) -> Vec<String> {
    m["spec"]["platforms"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| format!("{}/{}", str_at(p, &["selector", "matchLabels", "os"]), str_at(p, &["selector", "matchLabels", "arch"])))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn good() -> Value {
        json!({
            "apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
            "kind": "Plugin",
            "metadata": {"name": "trainer-audit"},
            "spec": {"version": "v0.1.0", "shortDescription": "x", "platforms": [{
                "selector": {"matchLabels": {"os": "linux", "arch": "amd64"}},
                "uri": "https://e.invalid/a.tar.gz", "sha256": "a".repeat(64), "bin": ARCHIVED,
                "files": [{"from": ARCHIVED, "to": "."}]
            }]}
        })
    }

    #[test]
    fn krews_rules_refuse_what_krew_refuses() {
        assert_eq!(validate("trainer-audit", &good()), Ok(()));
        type Breaks = Box<dyn Fn(&mut Value)>;
        let broken: Vec<(&str, Breaks)> = vec![
            ("apiVersion", Box::new(|m| m["apiVersion"] = json!("v1"))),
            ("named", Box::new(|m| m["metadata"]["name"] = json!("other"))),
            ("line breaks", Box::new(|m| m["spec"]["shortDescription"] = json!("a\nb"))),
            ("version", Box::new(|m| m["spec"]["version"] = json!("0.1.0"))),
            ("sha256", Box::new(|m| m["spec"]["platforms"][0]["sha256"] = json!("ABC"))),
            ("not supported", Box::new(|m| m["spec"]["platforms"][0]["selector"] = json!({"matchLabels": {"distro": "x"}}))),
            ("nil selector", Box::new(|m| m["spec"]["platforms"][0].as_object_mut().unwrap().remove("selector").map(|_| ()).unwrap())),
            ("non-empty", Box::new(|m| m["spec"]["platforms"][0]["files"] = json!([]))),
            ("release archives hold trainer-audit", Box::new(|m| m["spec"]["platforms"][0]["bin"] = json!(BIN))),
        ];
        for (why, breaks) in broken {
            let mut m = good();
            breaks(&mut m);
            let err = validate("trainer-audit", &m).unwrap_err();
            assert!(err.contains(why), "{why}: {err}");
        }
        assert!(validate("CON", &good()).is_err());
        assert_eq!(link_name("trainer-audit"), BIN);
    }
}
