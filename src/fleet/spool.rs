//! Reports in input order whatever order the clusters finish in, without holding them in
//! memory: each finished report is appended to a spool (in memory up to a few MiB, then an
//! anonymous temporary file) and remembered by position; [`Spool::flush_ready`] copies out the
//! reports whose predecessors are all in (JSON Lines stream this way), [`Spool::finish`] the rest
//! (text prints the fleet summary first, so it copies everything at the end).

use std::io::{Read, Seek, SeekFrom, Write};

/// Reports up to this size stay in memory; beyond it the spool rolls over to a temporary file.
const IN_MEMORY: usize = 4 * 1024 * 1024;

pub struct Spool {
    file: tempfile::SpooledTempFile,
    /// Per input position: where its report sits in the spool, once it is in.
    placed: Vec<Option<(u64, u64)>>,
    end: u64,
    /// Reports before this position have been copied out.
    next: usize,
}

impl Spool {
    /// A spool for `count` reports.
    pub fn new(count: usize) -> Spool {
        Spool { file: tempfile::spooled_tempfile(IN_MEMORY), placed: vec![None; count], end: 0, next: 0 }
    }

    /// Keeps the report of position `index`.
    pub fn put(&mut self, index: usize, report: &[u8]) -> std::io::Result<()> {
        let Some(slot) = self.placed.get_mut(index) else {
            return Err(std::io::Error::other(format!("report {index} is beyond the fleet")));
        };
        self.file.seek(SeekFrom::Start(self.end))?;
        self.file.write_all(report)?;
        *slot = Some((self.end, report.len() as u64));
        self.end += report.len() as u64;
        Ok(())
    }

    /// Copies to `out` every report whose predecessors have all been copied.
    pub fn flush_ready(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        while let Some(Some((start, len))) = self.placed.get(self.next).copied() {
            self.copy(start, len, out)?;
            self.next += 1;
        }
        out.flush()
    }

    /// Copies out everything not yet copied, in input order (positions never filled are skipped).
    pub fn finish(mut self, out: &mut impl Write) -> std::io::Result<()> {
        while self.next < self.placed.len() {
            if let Some((start, len)) = self.placed[self.next] {
                self.copy(start, len, out)?;
            }
            self.next += 1;
        }
        out.flush()
    }

    fn copy(&mut self, start: u64, len: u64, out: &mut impl Write) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(start))?;
        let copied = std::io::copy(&mut (&mut self.file).take(len), out)?;
        if copied != len {
            return Err(std::io::Error::other("the report spool was cut short"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_come_out_in_input_order_as_soon_as_they_can() {
        let mut spool = Spool::new(4);
        let mut out = Vec::new();
        spool.put(2, b"two\n").unwrap();
        spool.flush_ready(&mut out).unwrap();
        assert!(out.is_empty(), "position 0 is not in yet");
        spool.put(0, b"zero\n").unwrap();
        spool.flush_ready(&mut out).unwrap();
        assert_eq!(out, b"zero\n");
        spool.put(1, b"one\n").unwrap();
        spool.flush_ready(&mut out).unwrap();
        assert_eq!(out, b"zero\none\ntwo\n");
        spool.finish(&mut out).unwrap();
        assert_eq!(out, b"zero\none\ntwo\n", "position 3 never came and is skipped");
        assert!(Spool::new(1).put(1, b"x").is_err());
    }

    #[test]
    fn reports_larger_than_memory_roll_over_to_a_file() {
        let big: Vec<u8> = (0..IN_MEMORY + 10).map(|i| b'a' + (i % 26) as u8).collect();
        let mut spool = Spool::new(3);
        spool.put(1, &big).unwrap();
        spool.put(2, b"tail").unwrap();
        spool.put(0, b"head").unwrap();
        let mut out = Vec::new();
        spool.finish(&mut out).unwrap();
        assert_eq!(out.len(), big.len() + 8);
        assert_eq!(&out[..4], b"head");
        assert_eq!(&out[4..4 + big.len()], &big[..]);
        assert_eq!(&out[out.len() - 4..], b"tail");
    }
}
