//! The values an upgrade (or a render) uses, from Helm's value flags: read and merged exactly as
//! Helm's `MergeValues` does (helm/helm pkg/cli/values/options.go: `-f` files in order, then
//! `--set-json`, `--set`, `--set-string`, `--set-file`, `--set-literal`, each in command-line
//! order), and printed back as the same flags, shell-quoted and with absolute paths, so a printed
//! `helm upgrade` runs from any directory and applies the same values.

use std::path::{Path, PathBuf};

use gotmpl::{Map, Value};
use helm_render::strvals::{parse_into, parse_literal, set_path, Mode};
use helm_render::values::{merge_maps, read_values_file};

/// Values files bigger than this are refused before reading (Helm has no limit; 32 MiB is far
/// beyond any real values file and keeps a hostile one from exhausting memory).
pub const MAX_VALUES_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Helm's value flags as given, each group in command-line order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueFlags {
    pub files: Vec<PathBuf>,
    pub set_json: Vec<String>,
    pub set: Vec<String>,
    pub set_string: Vec<String>,
    /// `key=path`.
    pub set_file: Vec<String>,
    pub set_literal: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    #[error("values file {} is larger than {} MiB: refused (values files are configuration, not data)", .0.display(), MAX_VALUES_FILE_BYTES / (1024 * 1024))]
    TooLarge(PathBuf),
    #[error("cannot read values file {}: {}", .0.display(), .1)]
    Read(PathBuf, std::io::Error),
    #[error("failed to parse {}: {}", .0.display(), .1)]
    Parse(PathBuf, String),
    #[error("failed parsing {flag} data: {reason}")]
    Flag { flag: &'static str, reason: String },
    #[error("cannot read --set-file {0}: {1}")]
    SetFile(String, std::io::Error),
}

/// The user's values: the flags (paths made absolute) and what they merge to.
#[derive(Debug, Clone, Default)]
pub struct UserValues {
    flags: ValueFlags,
    merged: Map,
    /// Each flag's own values, in merge order (`-f v.yaml`, `--set a=b`): where a key came from.
    sources: Vec<(String, Map)>,
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

impl UserValues {
    /// Reads the files and parses the flags, as `helm` would (the same errors).
    pub fn read(given: &ValueFlags) -> Result<UserValues, ValuesError> {
        // Read with the paths as given (errors name them so); print them back absolute.
        let (merged, mut sources) = merge(given)?;
        for (label, _) in sources.iter_mut() {
            if let Some(file) = label.strip_prefix("-f ") {
                *label = format!("-f {}", absolute(Path::new(file)).display());
            }
        }
        let mut flags = given.clone();
        flags.files = flags.files.iter().map(|f| absolute(f)).collect();
        flags.set_file = flags
            .set_file
            .iter()
            .map(|s| match s.split_once('=') {
                Some((key, path)) => format!("{key}={}", absolute(Path::new(path)).display()),
                None => s.clone(),
            })
            .collect();
        Ok(UserValues { flags, merged, sources })
    }

    /// Each flag with the values it sets, in merge order (a later one wins): `-f v.yaml` as given.
    pub fn sources(&self) -> &[(String, Map)] {
        &self.sources
    }

    /// What the flags merge to (the user's values only, not the chart's defaults).
    pub fn merged(&self) -> &Map {
        &self.merged
    }

    pub fn is_empty(&self) -> bool {
        self.flags == ValueFlags::default()
    }

    /// The flags as argv words, in Helm's merge order (so the printed command merges the same).
    pub fn args(&self) -> Vec<String> {
        let f = &self.flags;
        let mut out = Vec::new();
        for file in &f.files {
            out.push("-f".to_string());
            out.push(file.display().to_string());
        }
        for (flag, values) in [
            ("--set-json", &f.set_json),
            ("--set", &f.set),
            ("--set-string", &f.set_string),
            ("--set-file", &f.set_file),
            ("--set-literal", &f.set_literal),
        ] {
            for v in values {
                out.push(flag.to_string());
                out.push(v.clone());
            }
        }
        out
    }

    /// The flags shell-quoted, each preceded by a space (empty when there are none).
    pub fn shell_flags(&self) -> String {
        self.args().iter().map(|w| format!(" {}", crate::shell::quote(w))).collect()
    }
}

/// Helm's `MergeValues`, and each flag's own values (labelled as given) for telling where a key
/// came from.
fn merge(flags: &ValueFlags) -> Result<(Map, Vec<(String, Map)>), ValuesError> {
    let mut base = Map::new();
    let mut sources = Vec::new();
    for file in &flags.files {
        let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        if size > MAX_VALUES_FILE_BYTES {
            return Err(ValuesError::TooLarge(file.clone()));
        }
        let text = std::fs::read_to_string(file).map_err(|e| ValuesError::Read(file.clone(), e))?;
        let values = read_values_file(&text).map_err(|e| ValuesError::Parse(file.clone(), e.to_string()))?;
        merge_maps(&mut base, &values);
        sources.push((format!("-f {}", file.display()), values));
    }
    let bad = |flag: &'static str, e: helm_render::strvals::SetError| ValuesError::Flag { flag, reason: e.to_string() };
    let mut each = |flag: &'static str, s: &str, base: &mut Map, apply: &dyn Fn(&mut Map) -> Result<(), ValuesError>| {
        apply(base)?;
        let mut own = Map::new();
        apply(&mut own)?;
        sources.push((format!("{flag} {s}"), own));
        Ok::<(), ValuesError>(())
    };
    for s in &flags.set_json {
        each("--set-json", s, &mut base, &|m: &mut Map| parse_into(s, m, Mode::Json).map_err(|e| bad("--set-json", e)))?;
    }
    for s in &flags.set {
        each("--set", s, &mut base, &|m: &mut Map| parse_into(s, m, Mode::Typed).map_err(|e| bad("--set", e)))?;
    }
    for s in &flags.set_string {
        each("--set-string", s, &mut base, &|m: &mut Map| parse_into(s, m, Mode::Strings).map_err(|e| bad("--set-string", e)))?;
    }
    for s in &flags.set_file {
        let (key, path) = s.split_once('=').ok_or_else(|| bad("--set-file", helm_render::strvals::SetError::NoValue { key: s.clone() }))?;
        let content = std::fs::read_to_string(path).map_err(|e| ValuesError::SetFile(path.to_string(), e))?;
        let parts: Vec<&str> = key.split('.').collect();
        each("--set-file", s, &mut base, &|m: &mut Map| {
            set_path(m, &parts, Value::string(content.clone()));
            Ok(())
        })?;
    }
    for s in &flags.set_literal {
        each("--set-literal", s, &mut base, &|m: &mut Map| parse_literal(s, m).map_err(|e| bad("--set-literal", e)))?;
    }
    Ok((base, sources))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_come_back_in_helms_order_quoted_with_absolute_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("my values.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let note = dir.path().join("note.txt");
        std::fs::write(&note, "hi").unwrap();
        let flags = ValueFlags {
            files: vec![file.clone()],
            set: vec!["b=two words".into()],
            set_string: vec!["c=007".into()],
            set_json: vec![r#"d={"x":[1,2]}"#.into()],
            set_file: vec![format!("e={}", note.display())],
            set_literal: vec!["f=a,b".into()],
        };
        let values = UserValues::read(&flags).unwrap();
        let args = values.args();
        let order: Vec<&str> = args.iter().step_by(2).map(String::as_str).collect();
        assert_eq!(order, ["-f", "--set-json", "--set", "--set-string", "--set-file", "--set-literal"]);
        assert!(values.shell_flags().starts_with(&format!(" -f '{}'", file.display())), "{}", values.shell_flags());
        let m = values.merged();
        assert_eq!(m.get("c").and_then(|v| v.as_str()), Some("007"));
        assert_eq!(m.get("e").and_then(|v| v.as_str()), Some("hi"));
        assert_eq!(m.get("f").and_then(|v| v.as_str()), Some("a,b"));
    }
}
