//! Just enough of the Dockerfile and .dockerignore formats to check the repository's own files
//! without a container daemon: instructions with their continuation lines joined, stages, and the
//! allow-list form of .dockerignore. Anything outside that subset is refused with a message, so a
//! change to either file that these tests cannot follow fails loudly instead of being skipped.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Instruction {
    pub keyword: String,
    pub args: String,
}

#[derive(Debug, Default)]
pub struct Stage {
    pub from: String,
    pub name: Option<String>,
    pub instructions: Vec<Instruction>,
}

impl Stage {
    pub fn all<'a>(&'a self, keyword: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.instructions.iter().filter(move |i| i.keyword == keyword).map(|i| i.args.as_str())
    }

    pub fn last(&self, keyword: &str) -> Option<&str> {
        self.instructions.iter().rev().find(|i| i.keyword == keyword).map(|i| i.args.as_str())
    }

    /// `ENV` and `LABEL` pairs (`KEY=VALUE`, values optionally double-quoted), in order.
    pub fn pairs(&self, keyword: &str) -> Vec<(String, String)> {
        self.all(keyword).flat_map(|args| key_values(args).unwrap_or_else(|e| panic!("{keyword} {args}: {e}"))).collect()
    }
}

/// The stages of a Dockerfile, in order. Parser directives and comments are dropped.
pub fn parse(text: &str) -> Vec<Stage> {
    let mut stages: Vec<Stage> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if pending.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        if !pending.is_empty() && trimmed.starts_with('#') {
            continue; // a comment inside a continued instruction is dropped, as Docker does
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(trimmed);
        let full = std::mem::take(&mut pending);
        let (keyword, args) = full.split_once(char::is_whitespace).unwrap_or((full.as_str(), ""));
        let instruction = Instruction { keyword: keyword.to_ascii_uppercase(), args: args.trim().to_string() };
        if instruction.keyword == "FROM" {
            let words: Vec<&str> = instruction.args.split_whitespace().filter(|w| !w.starts_with("--")).collect();
            let name = match words.as_slice() {
                [_, as_kw, name] if as_kw.eq_ignore_ascii_case("as") => Some(name.to_string()),
                [_] => None,
                _ => panic!("FROM {}: expected `FROM IMAGE [AS NAME]`", instruction.args),
            };
            stages.push(Stage { from: words[0].to_string(), name, instructions: Vec::new() });
        } else {
            let stage = stages.last_mut().unwrap_or_else(|| panic!("{} before the first FROM", instruction.keyword));
            stage.instructions.push(instruction);
        }
    }
    assert!(pending.is_empty(), "the Dockerfile ends inside a continued line");
    stages
}

/// `KEY=VALUE KEY2="two words"` → pairs. Docker's older `ENV KEY VALUE` form is refused.
pub fn key_values(args: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && !c.is_whitespace())).collect();
        if chars.next() != Some('=') {
            return Err(format!("`{key}` is not in KEY=VALUE form"));
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => return Err(format!("unterminated quote in the value of {key}")),
                }
            }
        } else {
            value.extend(std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())));
        }
        out.push((key, value));
    }
}

/// An exec-form (`["a", "b"]`) instruction argument, as its words.
pub fn exec_form(args: &str) -> Vec<String> {
    serde_json::from_str(args).unwrap_or_else(|e| panic!("`{args}` is not in exec (JSON array) form: {e}"))
}

/// The build context a .dockerignore of the form `*`, then `!path` lines (entries to send: a
/// top-level name, or a path of plain names such as `tests/rules.rs`) and `**/name` lines (names to
/// drop at any depth), selects from `root`.
pub struct Context {
    pub include: Vec<String>,
    pub drop_anywhere: Vec<String>,
}

impl Context {
    pub fn parse(text: &str) -> Context {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        assert_eq!(lines.next(), Some("*"), ".dockerignore must start by excluding everything (`*`) and allow-list what the build needs");
        let mut context = Context { include: Vec::new(), drop_anywhere: Vec::new() };
        for line in lines {
            if let Some(name) = line.strip_prefix('!').filter(|n| n.split('/').all(is_plain_name)) {
                context.include.push(name.to_string());
            } else if let Some(name) = line.strip_prefix("**/").filter(|n| is_plain_name(n)) {
                context.drop_anywhere.push(name.to_string());
            } else {
                panic!(".dockerignore line `{line}`: this test follows only `*`, `!PATH` and `**/NAME` lines");
            }
        }
        context
    }

    /// Whether `relative` is sent: it is an allow-listed path or inside one, and no component of it
    /// is dropped.
    pub fn sends(&self, relative: &Path) -> bool {
        self.include.iter().any(|i| relative.starts_with(i)) && !self.dropped(relative)
    }

    /// Whether a directory that is not sent holds an allow-listed path (`tests` for `tests/rules.rs`).
    fn leads_to(&self, relative: &Path) -> bool {
        self.include.iter().any(|i| Path::new(i).starts_with(relative)) && !self.dropped(relative)
    }

    fn dropped(&self, relative: &Path) -> bool {
        relative.components().any(|c| self.drop_anywhere.iter().any(|d| c.as_os_str() == d.as_str()))
    }

    /// Copies what the context sends from `root` into a fresh `dest`, keeping modification times
    /// so that cargo sees unchanged sources as unchanged from one run to the next.
    pub fn materialize(&self, root: &Path, dest: &Path) -> std::io::Result<Vec<PathBuf>> {
        if dest.exists() {
            std::fs::remove_dir_all(dest)?;
        }
        std::fs::create_dir_all(dest)?;
        let mut copied = Vec::new();
        let mut tops: Vec<&str> = self.include.iter().map(|i| i.split('/').next().unwrap_or(i)).collect();
        tops.sort_unstable();
        tops.dedup();
        for top in tops {
            copy_tree(self, root, Path::new(top), dest, &mut copied)?;
        }
        Ok(copied)
    }
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['*', '?', '[', '/', '\\']) && name != ".." && name != "."
}

fn copy_tree(context: &Context, root: &Path, relative: &Path, dest: &Path, copied: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let (sent, leads) = (context.sends(relative), context.leads_to(relative));
    if !sent && !leads {
        return Ok(());
    }
    let source = root.join(relative);
    let meta = std::fs::symlink_metadata(&source).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", source.display())))?;
    if meta.is_dir() {
        std::fs::create_dir_all(dest.join(relative))?;
        let mut entries: Vec<_> = std::fs::read_dir(&source)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            copy_tree(context, root, &relative.join(entry.file_name()), dest, copied)?;
        }
    } else if meta.is_file() && sent {
        let target = dest.join(relative);
        std::fs::copy(&source, &target)?;
        std::fs::File::options().write(true).open(&target)?.set_modified(meta.modified()?)?;
        copied.push(relative.to_path_buf());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_continuations_pairs_and_stages() {
        let stages = parse("# c\nFROM a@sha256:1 AS build\nRUN one \\\n  # dropped\n  two\nFROM b\nLABEL x=\"y z\" w=v\nENV K=V\n");
        assert_eq!(stages.len(), 2);
        assert_eq!(stages[0].name.as_deref(), Some("build"));
        assert_eq!(stages[0].last("RUN"), Some("one two"));
        assert_eq!(stages[1].from, "b");
        assert_eq!(stages[1].pairs("LABEL"), vec![("x".into(), "y z".into()), ("w".into(), "v".into())]);
        assert!(key_values("K V").is_err());
    }

    #[test]
    fn the_allow_list_drops_nested_names() {
        let context = Context::parse("# c\n*\n!src\n**/target\n");
        assert!(context.sends(Path::new("src/main.rs")));
        assert!(!context.sends(Path::new("src/target/x")));
        assert!(!context.sends(Path::new("tests/a.rs")));
    }

    #[test]
    fn an_allow_listed_file_in_a_directory_is_sent_alone() {
        let context = Context::parse("*\n!src\n!tests/rules.rs\n**/target\n");
        assert!(context.sends(Path::new("tests/rules.rs")));
        assert!(!context.sends(Path::new("tests")));
        assert!(!context.sends(Path::new("tests/a.rs")));
        let root = tempfile::tempdir().unwrap();
        for file in ["src/main.rs", "tests/rules.rs", "tests/a.rs", "tests/rules/x.txt", "README.md"] {
            std::fs::create_dir_all(root.path().join(file).parent().unwrap()).unwrap();
            std::fs::write(root.path().join(file), file).unwrap();
        }
        let dest = tempfile::tempdir().unwrap();
        let mut copied = context.materialize(root.path(), &dest.path().join("ctx")).unwrap();
        copied.sort();
        assert_eq!(copied, vec![PathBuf::from("src/main.rs"), PathBuf::from("tests/rules.rs")]);
    }
}
