//! Writing a file so that a reader (or a crash) sees the old content or the new, never a part:
//! the bytes go to a temporary file beside the target, are flushed to disk, and the temporary
//! file is renamed over the target; the directory is flushed too, so the rename itself survives
//! a crash. Used by the chart cache and by every command that writes a file the user named.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` atomically. The directory must exist: none is created. Errors name
/// `path`, never the temporary file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_with(path, bytes, tempfile::Builder::new().prefix(".tmp-"))
}

/// [`write_atomically`] for a file others read (a report served or collected by another user,
/// such as a metrics file for node_exporter): readable by all, writable by its owner.
pub fn write_atomically_readable(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    write_with(path, bytes, &builder)
}

fn write_with(path: &Path, bytes: &[u8], builder: &tempfile::Builder) -> Result<(), WriteError> {
    // tempfile's errors carry the temporary file's name: keep what went wrong, not where.
    let fail = |source: std::io::Error| WriteError { path: path.to_path_buf(), source: std::io::Error::new(source.kind(), plain(&source)) };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        let what = if dir.exists() { "is not a directory" } else { "does not exist (create it first)" };
        return Err(fail(std::io::Error::new(std::io::ErrorKind::NotFound, format!("the directory {} {what}", dir.display()))));
    }
    if path.is_dir() {
        return Err(fail(std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory; name a file")));
    }
    let mut temp = builder.tempfile_in(dir).map_err(fail)?;
    temp.write_all(bytes).map_err(fail)?;
    temp.as_file().sync_all().map_err(fail)?;
    temp.persist(path).map_err(|e| fail(e.error))?;
    sync_dir(dir).map_err(fail)
}

/// An I/O error's words without the path tempfile appends (` at path "…/.tmp-…"`).
fn plain(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" at path ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Flushes a directory's entries (the rename) to disk. Only Unix can open a directory for this;
/// elsewhere the rename is as durable as the platform makes it.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["out.txt"]);
    }

    #[test]
    fn a_missing_directory_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/out.txt");
        let err = write_atomically(&path, b"x").unwrap_err();
        assert!(err.to_string().starts_with(&format!("cannot write {}: ", path.display())), "{err}");
        // Issue #21: the error named tempfile's internal `.tmp-…` name.
        assert!(err.to_string().contains("does not exist (create it first)") && !err.to_string().contains(".tmp-"), "{err}");
        assert!(!path.exists());
        assert!(!dir.path().join("no").exists(), "no directory is created");
    }
}
