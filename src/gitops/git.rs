//! `--base-ref REV`: the YAML files of a directory as they are at a git revision, read through
//! the `git` command (`rev-parse`, `ls-tree`, `cat-file --batch`) without a checkout, so the
//! work tree is never touched. The same bounds as a directory apply. Errors say whether git is
//! missing, the directory is not in a repository, or the revision does not exist.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::tree::{is_yaml_name, Files, MAX_FILE_BYTES};
use super::GitopsError;

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitopsError> {
    let output = Command::new("git").arg("-C").arg(dir).args(args).stdin(Stdio::null()).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            GitopsError::Git(
                "--base-ref needs the git command, which is not installed: install git, or check the base out yourself and pass --base DIR"
                    .into(),
            )
        } else {
            GitopsError::Git(format!("cannot run git: {e}"))
        }
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(GitopsError::Git(format!("git {} failed in {}: {}", args.join(" "), dir.display(), stderr.trim())));
    }
    Ok(output.stdout)
}

/// The YAML files under `dir` at revision `rev`, named relative to `dir`.
pub fn read_revision(dir: &Path, rev: &str) -> Result<Files, GitopsError> {
    let shown = dir.display().to_string();
    if !dir.is_dir() {
        return Err(GitopsError::Input(format!("{shown} is not a directory: give the root of a checkout of your GitOps repository")));
    }
    if rev.is_empty() || rev.starts_with('-') {
        return Err(GitopsError::Git(format!("--base-ref {rev:?} is not a revision: give a branch, tag or commit such as origin/main")));
    }
    git(dir, &["rev-parse", "--git-dir"]).map_err(|_| {
        GitopsError::Git(format!("{shown} is not inside a git repository: --base-ref reads the base from git; use --base DIR instead"))
    })?;
    let commit = git(dir, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]).map_err(|_| {
        GitopsError::Git(format!(
            "revision {rev:?} is not in the repository at {shown}: fetch it (git fetch) or name a branch, tag or commit that exists"
        ))
    })?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let prefix = String::from_utf8_lossy(&git(dir, &["rev-parse", "--show-prefix"])?).trim().to_string();
    let treeish = format!("{commit}:{prefix}");
    let listing = match git(dir, &["ls-tree", "-r", "-z", "-l", "--full-tree", &treeish]) {
        Ok(l) => l,
        // The directory did not exist at the base: an empty base, every reference is added.
        Err(_) => return Ok(Files::default()),
    };
    let mut files = Files::default();
    let mut wanted: Vec<(String, String)> = Vec::new();
    for entry in listing.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        // `<mode> blob <oid> <size>\t<path>`
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let fields: Vec<&str> = meta.split_whitespace().collect();
        if fields.len() != 4 || fields[1] != "blob" || !is_yaml_name(path.rsplit('/').next().unwrap_or("")) {
            continue;
        }
        if path.split('/').any(|c| c.starts_with('.')) {
            continue;
        }
        let size: u64 = fields[3].parse().unwrap_or(u64::MAX);
        if size > MAX_FILE_BYTES {
            files.too_large(path.to_string(), size);
            continue;
        }
        wanted.push((fields[2].to_string(), path.to_string()));
    }
    let mut total = 0u64;
    for (path, bytes) in cat_blobs(dir, &wanted)? {
        files.push(path, bytes, &mut total, &format!("{shown} at {rev}"))?;
    }
    Ok(files)
}

/// Reads blobs through one `git cat-file --batch`; a thread feeds the object ids so a large
/// answer cannot block the request.
fn cat_blobs(dir: &Path, wanted: &[(String, String)]) -> Result<Vec<(String, Vec<u8>)>, GitopsError> {
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| GitopsError::Git(format!("cannot run git cat-file: {e}")))?;
    let mut stdin = child.stdin.take().ok_or_else(|| GitopsError::Git("git cat-file has no input".into()))?;
    let ids: String = wanted.iter().map(|(oid, _)| format!("{oid}\n")).collect();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(ids.as_bytes());
    });
    let stdout = child.stdout.take().ok_or_else(|| GitopsError::Git("git cat-file has no output".into()))?;
    let mut reader = BufReader::new(stdout);
    let mut out = Vec::with_capacity(wanted.len());
    let broken = |what: &str| GitopsError::Git(format!("git cat-file answered unexpectedly ({what})"));
    for (_, path) in wanted {
        let mut header = String::new();
        reader.read_line(&mut header).map_err(|e| GitopsError::Git(format!("reading git cat-file: {e}")))?;
        let size: u64 = header.split_whitespace().nth(2).and_then(|s| s.parse().ok()).ok_or_else(|| broken(header.trim()))?;
        if size > MAX_FILE_BYTES {
            return Err(broken("a blob larger than listed"));
        }
        let mut bytes = vec![0u8; size as usize];
        reader.read_exact(&mut bytes).map_err(|e| GitopsError::Git(format!("reading git cat-file: {e}")))?;
        let mut newline = [0u8; 1];
        reader.read_exact(&mut newline).map_err(|e| GitopsError::Git(format!("reading git cat-file: {e}")))?;
        out.push((path.clone(), bytes));
    }
    let _ = feeder.join();
    let _ = child.wait();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git").arg("-C").arg(dir).args(args).output().map(|o| o.status.success()).unwrap_or(false);
        assert!(ok, "git {args:?}");
    }

    fn have_git() -> bool {
        Command::new("git").arg("--version").output().is_ok()
    }

    #[test]
    fn reads_a_subdirectory_at_a_revision() {
        if !have_git() {
            eprintln!("SKIPPED: git is not installed");
            assert!(std::env::var_os("CI").is_none(), "git is required in CI");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        run(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join("sub/deep/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("sub/readme.md"), "x").unwrap();
        std::fs::write(root.join("top.yaml"), "t: 1\n").unwrap();
        run(root, &["add", "."]);
        run(root, &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"]);
        std::fs::write(root.join("sub/deep/a.yaml"), "a: 2\n").unwrap();
        let files = read_revision(&root.join("sub"), "HEAD").unwrap();
        let got: Vec<(&str, &str)> = files.files.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
        assert_eq!(got, vec![("deep/a.yaml", "a: 1\n")]);
        let err = read_revision(&root.join("sub"), "no-such-branch").unwrap_err().to_string();
        assert!(err.contains("no-such-branch") && err.contains("not in the repository"), "{err}");
        let err = read_revision(&root.join("sub"), "--help").unwrap_err().to_string();
        assert!(err.contains("not a revision"), "{err}");
    }

    #[test]
    fn outside_a_repository_is_a_clear_error() {
        if !have_git() {
            eprintln!("SKIPPED: git is not installed");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let err = read_revision(tmp.path(), "HEAD").unwrap_err().to_string();
        assert!(err.contains("not inside a git repository"), "{err}");
    }
}
