//! Packaged charts (`.tgz`) read into memory with Helm's rules: gzip sniffing, the first path
//! component dropped, traversal refused with Helm's own messages, link entries loaded as empty
//! files (never followed), UTF-8 BOMs stripped, and Helm's size limits. Nothing is written to disk.

use std::io::{self, Read};

use flate2::read::MultiGzDecoder;

/// Helm's `MaxDecompressedChartSize`: all file contents together.
pub const MAX_CHART_BYTES: u64 = 100 * 1024 * 1024;
/// Helm's `MaxDecompressedFileSize`: one file's content.
pub const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// Tar headers and padding are not counted by Helm's limits; this bounds them anyway, so that a
/// stream of millions of empty entries cannot keep the loader busy (each entry costs 512 bytes of
/// header plus padding, so legitimate charts stay far below it).
const MAX_STREAM_OVERHEAD: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub chart_bytes: u64,
    pub file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { chart_bytes: MAX_CHART_BYTES, file_bytes: MAX_FILE_BYTES }
    }
}

/// One file of a chart archive, path relative to the chart root, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    pub path: String,
    pub data: Vec<u8>,
}

/// Why an archive was refused. The Helm-worded variants carry exactly Helm's text.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("file '{name}' seems to be a YAML file, but expected a gzipped archive")]
    YamlNotArchive { name: String },
    #[error("file '{name}' does not appear to be a gzipped archive; got '{content_type}'")]
    NotGzip { name: String, content_type: String },
    #[error("chart illegally contains absolute paths")]
    AbsolutePath,
    #[error("chart illegally contains content outside the base directory: {0:?}")]
    OutsideBase(String),
    #[error("chart illegally references parent directory")]
    ParentDirectory,
    #[error("chart contains illegally named files")]
    DriveLetter,
    #[error("chart yaml not in base directory")]
    ChartYamlAtRoot,
    #[error("decompressed chart is larger than the maximum size {0}")]
    ChartTooLarge(u64),
    #[error("decompressed chart file {name:?} is larger than the maximum file size {limit}")]
    FileTooLarge { name: String, limit: u64 },
    #[error("no files in chart archive")]
    Empty,
    #[error("the archive's tar stream is larger than {0} bytes once decompressed (a gzip bomb?)")]
    StreamTooLarge(u64),
    #[error("the archive is truncated or corrupt: {0}")]
    Corrupt(String),
    /// The gzip or tar stream could not be read.
    #[error("the archive is truncated or corrupt: {0}")]
    Read(#[source] io::Error),
}

/// Helm's `EnsureArchive`: a friendlier error than a gzip failure when, say, a values file is
/// passed where a chart belongs.
pub fn ensure_gzip(name: &str, bytes: &[u8]) -> Result<(), ArchiveError> {
    if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
        return Ok(());
    }
    if name.ends_with(".yml") || name.ends_with(".yaml") {
        return Err(ArchiveError::YamlNotArchive { name: name.to_string() });
    }
    Err(ArchiveError::NotGzip { name: name.to_string(), content_type: sniff_content_type(bytes).to_string() })
}

/// Loads a `.tgz` with Helm's default limits.
pub fn load_archive(bytes: &[u8]) -> Result<Vec<ArchiveFile>, ArchiveError> {
    load_archive_with(bytes, Limits::default())
}

pub fn load_archive_with(bytes: &[u8], limits: Limits) -> Result<Vec<ArchiveFile>, ArchiveError> {
    let stream_cap = limits.chart_bytes.saturating_add(MAX_STREAM_OVERHEAD);
    let decoder = CappedReader { inner: MultiGzDecoder::new(bytes), remaining: stream_cap, cap: stream_cap };
    let mut archive = tar::Archive::new(decoder);
    let entries = archive.entries().map_err(corrupt)?;
    let mut files = Vec::new();
    let mut remaining = limits.chart_bytes;
    for entry in entries {
        let mut entry = entry.map_err(corrupt)?;
        let header = entry.header();
        let kind = header.entry_type();
        if kind.is_dir() || kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let path = chart_relative_path(&raw_name)?;
        // Links carry no content in the archive: they load as empty files, as in Helm.
        let size = if kind.is_symlink() || kind.is_hard_link() { 0 } else { entry.size() };
        if size > remaining {
            return Err(ArchiveError::ChartTooLarge(limits.chart_bytes));
        }
        if size > limits.file_bytes {
            return Err(ArchiveError::FileTooLarge { name: raw_name, limit: limits.file_bytes });
        }
        let mut data = Vec::with_capacity(size as usize);
        (&mut entry).take(size).read_to_end(&mut data).map_err(corrupt)?;
        if (data.len() as u64) < size {
            return Err(ArchiveError::Corrupt(format!("entry {raw_name:?} ends early")));
        }
        remaining -= size;
        if data.starts_with(UTF8_BOM) {
            data.drain(..UTF8_BOM.len());
        }
        files.push(ArchiveFile { path, data });
    }
    if files.is_empty() {
        return Err(ArchiveError::Empty);
    }
    Ok(files)
}

const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Helm's path rules: split on `\` if the name has one (Windows archives), drop the first
/// component whatever it is, clean, and refuse anything that escapes the chart.
fn chart_relative_path(raw: &str) -> Result<String, ArchiveError> {
    let delimiter = if raw.contains('\\') { '\\' } else { '/' };
    let mut parts = raw.split(delimiter);
    let first = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let joined = rest.join("/");
    if joined.starts_with('/') {
        return Err(ArchiveError::AbsolutePath);
    }
    let cleaned = clean_path(&joined);
    if cleaned == "." {
        return Err(ArchiveError::OutsideBase(raw.to_string()));
    }
    if cleaned.starts_with("..") {
        return Err(ArchiveError::ParentDirectory);
    }
    let b = cleaned.as_bytes();
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/' {
        return Err(ArchiveError::DriveLetter);
    }
    if first == "Chart.yaml" {
        return Err(ArchiveError::ChartYamlAtRoot);
    }
    Ok(cleaned)
}

/// Go's `path.Clean` for relative paths: collapse `//`, drop `.`, resolve `..` lexically.
fn clean_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if matches!(out.last(), Some(last) if *last != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        ".".to_string()
    } else {
        out.join("/")
    }
}

fn corrupt(err: io::Error) -> ArchiveError {
    if let Some(cap) = err.get_ref().and_then(|inner| inner.downcast_ref::<StreamCapExceeded>()) {
        return ArchiveError::StreamTooLarge(cap.0);
    }
    match err.kind() {
        io::ErrorKind::UnexpectedEof => ArchiveError::Corrupt("unexpected end of data".into()),
        _ => ArchiveError::Read(err),
    }
}

#[derive(Debug)]
struct StreamCapExceeded(u64);

impl std::fmt::Display for StreamCapExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "decompressed stream exceeds {} bytes", self.0)
    }
}

impl std::error::Error for StreamCapExceeded {}

/// Fails the read once more than `cap` decompressed bytes have come out of the gzip stream.
struct CappedReader<R> {
    inner: R,
    remaining: u64,
    cap: u64,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            // Only an error if there is really more to read.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(StreamCapExceeded(self.cap))),
            };
        }
        let want = buf.len().min(self.remaining.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// A small subset of Go's `http.DetectContentType`, enough to tell users what they passed.
fn sniff_content_type(bytes: &[u8]) -> &'static str {
    let head = &bytes[..bytes.len().min(512)];
    let signatures: &[(&[u8], &str)] = &[
        (b"PK\x03\x04", "application/zip"),
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"BZh", "application/x-bzip2"),
        (b"\xFD7zXZ\x00", "application/octet-stream"),
        (b"Rar!\x1a\x07", "application/x-rar-compressed"),
        (b"\x7FELF", "application/octet-stream"),
    ];
    for (signature, content_type) in signatures {
        if head.starts_with(signature) {
            return content_type;
        }
    }
    if head.len() > 262 && &head[257..262] == b"ustar" {
        // Go has no tar sniffer either; an uncompressed tar is binary to it.
        return "application/octet-stream";
    }
    let binary = head.iter().any(|&b| b <= 0x08 || b == 0x0B || (0x0E..=0x1A).contains(&b) || (0x1C..=0x1F).contains(&b));
    if binary {
        "application/octet-stream"
    } else {
        "text/plain; charset=utf-8"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;

    enum Entry<'a> {
        File(&'a str, &'a [u8]),
        Symlink(&'a str, &'a str),
        Dir(&'a str),
    }

    fn build(entries: &[Entry]) -> Vec<u8> {
        let mut tar_bytes = Vec::new();
        {
            let mut builder = tar::Builder::new(&mut tar_bytes);
            for entry in entries {
                let mut header = tar::Header::new_gnu();
                match entry {
                    Entry::File(name, data) => {
                        header.set_entry_type(tar::EntryType::Regular);
                        header.set_size(data.len() as u64);
                        set_raw_name(&mut header, name);
                        header.set_cksum();
                        builder.append(&header, *data).unwrap();
                    }
                    Entry::Symlink(name, target) => {
                        header.set_entry_type(tar::EntryType::Symlink);
                        header.set_size(0);
                        set_raw_name(&mut header, name);
                        header.set_link_name(target).unwrap();
                        header.set_cksum();
                        builder.append(&header, io::empty()).unwrap();
                    }
                    Entry::Dir(name) => {
                        header.set_entry_type(tar::EntryType::Directory);
                        header.set_size(0);
                        set_raw_name(&mut header, name);
                        header.set_cksum();
                        builder.append(&header, io::empty()).unwrap();
                    }
                }
            }
            builder.finish().unwrap();
        }
        gzip(&tar_bytes)
    }

    /// Writes the name bytes verbatim: `tar`'s own setters refuse `..` and absolute paths,
    /// which are exactly what these tests need to produce.
    fn set_raw_name(header: &mut tar::Header, name: &str) {
        let field = &mut header.as_old_mut().name;
        field.fill(0);
        field[..name.len()].copy_from_slice(name.as_bytes());
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    fn load_err(entries: &[Entry]) -> String {
        load_archive(&build(entries)).unwrap_err().to_string()
    }

    #[test]
    fn drops_first_component_and_merges_top_dirs() {
        let files = load_archive(&build(&[
            Entry::Dir("whatever/"),
            Entry::File("whatever/Chart.yaml", b"name: x\n"),
            Entry::File("other/templates//./a.yaml", b"a"),
        ]))
        .unwrap();
        let paths: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["Chart.yaml", "templates/a.yaml"]);
    }

    #[test]
    fn refuses_traversal_with_helms_messages() {
        assert_eq!(load_err(&[Entry::File("x/../../evil", b"")]), "chart illegally references parent directory");
        assert_eq!(
            load_err(&[Entry::File("Chart.yaml", b"")]),
            "chart illegally contains content outside the base directory: \"Chart.yaml\""
        );
        assert_eq!(load_err(&[Entry::File("x//etc/passwd", b"")]), "chart illegally contains absolute paths");
        assert_eq!(load_err(&[Entry::File("x/c:/windows", b"")]), "chart contains illegally named files");
        assert_eq!(load_err(&[Entry::File("Chart.yaml/x", b"")]), "chart yaml not in base directory");
    }

    #[test]
    fn leading_slash_is_just_an_empty_first_component() {
        let files = load_archive(&build(&[Entry::File("/abs", b"A")])).unwrap();
        assert_eq!(files[0].path, "abs");
    }

    #[test]
    fn backslash_archives_are_normalised() {
        let files = load_archive(&build(&[Entry::File("x\\templates\\a.yaml", b"a")])).unwrap();
        assert_eq!(files[0].path, "templates/a.yaml");
    }

    #[test]
    fn symlinks_load_as_empty_files_and_are_not_followed() {
        let files = load_archive(&build(&[Entry::File("x/real.txt", b"secret"), Entry::Symlink("x/link.txt", "/etc/passwd")])).unwrap();
        assert_eq!(files[1], ArchiveFile { path: "link.txt".into(), data: vec![] });
    }

    #[test]
    fn strips_bom() {
        let files = load_archive(&build(&[Entry::File("x/Chart.yaml", b"\xEF\xBB\xBFname: x")])).unwrap();
        assert_eq!(files[0].data, b"name: x");
    }

    #[test]
    fn enforces_helms_limits() {
        let big = vec![b'a'; (MAX_FILE_BYTES + 1) as usize];
        assert_eq!(
            load_err(&[Entry::File("x/./sub/big.txt", &big)]),
            "decompressed chart file \"x/./sub/big.txt\" is larger than the maximum file size 5242880"
        );
        let exact = vec![b'a'; MAX_FILE_BYTES as usize];
        assert!(load_archive(&build(&[Entry::File("x/big.txt", &exact)])).is_ok());
        let small = Limits { chart_bytes: 10, file_bytes: 8 };
        let err = load_archive_with(&build(&[Entry::File("x/a", b"123456"), Entry::File("x/b", b"123456")]), small);
        assert_eq!(err.unwrap_err().to_string(), "decompressed chart is larger than the maximum size 10");
    }

    #[test]
    fn empty_and_corrupt_archives() {
        assert_eq!(load_err(&[Entry::Dir("x/")]), "no files in chart archive");
        let good = build(&[Entry::File("x/Chart.yaml", &[b'a'; 4000])]);
        let truncated = &good[..good.len() / 2];
        let err = load_archive(truncated).unwrap_err().to_string();
        assert!(err.starts_with("the archive is truncated or corrupt"), "{err}");
        assert!(load_archive(&gzip(b"not a tar stream at all, just text that is long enough")).is_err());
    }

    #[test]
    fn bounds_the_decompressed_stream() {
        // A directory entry that claims 200 MiB of content: Helm's limits never see it (it is
        // skipped), but reading past it would decompress all of it. ~200 KiB compressed.
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_size(200 * 1024 * 1024);
        set_raw_name(&mut header, "x/bomb/");
        header.set_cksum();
        enc.write_all(header.as_bytes()).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        assert!(bomb.len() < 1 << 20);
        let small = Limits { chart_bytes: 1024, file_bytes: 1024 };
        let err = load_archive_with(&bomb, small).unwrap_err();
        assert!(matches!(err, ArchiveError::StreamTooLarge(_)), "{err}");
    }

    #[test]
    fn sniffs_what_is_not_gzip() {
        assert_eq!(
            ensure_gzip("values.yaml", b"a: 1").unwrap_err().to_string(),
            "file 'values.yaml' seems to be a YAML file, but expected a gzipped archive"
        );
        assert_eq!(
            ensure_gzip("c.tgz", b"PK\x03\x04zip").unwrap_err().to_string(),
            "file 'c.tgz' does not appear to be a gzipped archive; got 'application/zip'"
        );
        assert_eq!(
            ensure_gzip("c.tgz", b"hello").unwrap_err().to_string(),
            "file 'c.tgz' does not appear to be a gzipped archive; got 'text/plain; charset=utf-8'"
        );
        assert!(ensure_gzip("c.tgz", &gzip(b"x")).is_ok());
    }
}
