//! A large snapshot that is one `kubectl get -o yaml` List, read on several cores: the lines of
//! its items are cut where an item starts (`- ` at column 0) into one share per core, each share
//! read on its own as a block sequence by [`lines::read_items`] (each item scanned by hand, or by
//! [`fast::read_items`] where the scanner gives up), and the List's other keys read
//! from the text around them (`items:` left empty). Each item is parsed in the same context as
//! in the whole file (an entry of a block sequence at column 0), so the answer is the fast
//! path's. A file too small to be worth sharing out is one share. Any other shape — several
//! documents, items indented under `items:` — and any share the fast path gives up on (a cut inside a multi-line quoted or
//! flow scalar leaves one unterminated) answers None, and the file is read whole.

use super::{fast, lines, Doc, MAX_SNAPSHOT_ITEMS};

/// Files below this are read on one core (as one share: the line scanner still reads it).
const MIN_BYTES: usize = 4 << 20;

/// The documents of `text` read in shares, or None (see the module doc).
pub(super) fn read(text: &str, budget: &serde_saphyr::Budget) -> Option<Vec<Doc>> {
    read_on(crate::par::threads(), MIN_BYTES, text, budget)
}

fn read_on(threads: usize, min_bytes: usize, text: &str, budget: &serde_saphyr::Budget) -> Option<Vec<Doc>> {
    let threads = if text.len() < min_bytes { 1 } else { threads.max(1) };
    let (start, end) = items_lines(text)?;
    let around = format!("{}{}", &text[..start], &text[end..]);
    let mut docs = fast::read(&around, budget)?;
    let [doc] = &mut docs[..] else { return None };
    if !doc.kind.ends_with("List") || doc.object.is_some() || doc.seen != 0 {
        return None;
    }
    let cuts = cuts(text, start, end, threads);
    let shares: Vec<&str> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    for part in crate::par::map_each(&shares, |share| lines::read_items(share, budget)) {
        let part = part?;
        doc.seen += part.seen;
        if part.info.is_some() {
            doc.info = part.info;
        }
        doc.items.extend(part.items);
    }
    (doc.seen <= MAX_SNAPSHOT_ITEMS).then_some(docs)
}

/// The byte range of the lines after the only `items:` line at column 0 that belong to it: item
/// starts at column 0, indented lines, comments and blank lines, up to the next top-level key.
/// None unless the file is one document whose items start at column 0.
pub(super) fn items_lines(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let finder = |needle: &str| memchr::memmem::find_iter(bytes, needle.as_bytes()).count();
    if text.starts_with("---") || text.starts_with('%') || finder("\n---") + finder("\n...") > 0 {
        return None;
    }
    let start = if text.starts_with("items:\n") {
        if finder("\nitems:\n") > 0 {
            return None;
        }
        "items:\n".len()
    } else {
        let mut found = memchr::memmem::find_iter(bytes, b"\nitems:\n");
        let at = found.next()?;
        if found.next().is_some() {
            return None;
        }
        at + "\nitems:\n".len()
    };
    let mut end = start;
    let mut first_item = None;
    for line in text[start..].split_inclusive('\n') {
        let item = line.starts_with("- ") || line == "-\n";
        if !(item || line.starts_with(' ') || line.starts_with('#') || line == "\n") {
            break;
        }
        if first_item.is_none() && !line.starts_with('#') && line != "\n" {
            first_item = Some(item);
        }
        end += line.len();
    }
    // The first entry must sit at column 0 (`kubectl`'s style), so every share starts as the
    // whole sequence does.
    (first_item == Some(true)).then_some((start, end))
}

/// Share boundaries: `start`, then about every `(end - start) / threads` bytes the next line
/// that starts an item, then `end`.
fn cuts(text: &str, start: usize, end: usize, threads: usize) -> Vec<usize> {
    let bytes = &text.as_bytes()[..end];
    let mut out = vec![start];
    let step = (end - start) / threads.max(1);
    for k in 1..threads {
        let from = (start + k * step).max(*out.last().unwrap_or(&start));
        let Some(at) = memchr::memmem::find(&bytes[from..], b"\n-").map(|i| from + i + 1) else { break };
        if at < end && at > *out.last().unwrap_or(&start) {
            out.push(at);
        }
    }
    out.push(end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> serde_saphyr::Budget {
        super::super::yaml_budget()
    }

    fn list(items: &[&str]) -> String {
        format!("apiVersion: v1\nitems:\n{}kind: List\nmetadata:\n  resourceVersion: \"\"\n", items.concat())
    }

    fn object(i: usize) -> String {
        format!(
            "- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: TrainJob\n  metadata:\n    name: job-{i}\n    namespace: team-{}\n  spec:\n    text: |\n      line\n      - not an item\n    list:\n    - a\n    - {i}\n# between items\n\n",
            i % 3
        )
    }

    #[test]
    fn shares_read_what_the_whole_file_reads() {
        let items: Vec<String> = (0..200).map(object).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        let text = list(&refs);
        let whole = fast::read(&text, &budget()).expect("the fast path reads it");
        assert_eq!(whole[0].items.len(), 200);
        for threads in [2, 3, 7, 64] {
            let shared = read_on(threads, 0, &text, &budget()).expect("read in shares");
            assert_eq!(shared, whole, "{threads} shares");
        }
        // And the scenario snapshots, each at least a List of a few objects.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
        for path in std::fs::read_dir(&dir).expect("snapshots/").map(|e| e.expect("entry").path()) {
            let text = std::fs::read_to_string(&path).expect("text");
            if let Some(shared) = read_on(3, 0, &text, &budget()) {
                assert_eq!(Some(shared), fast::read(&text, &budget()), "{}", path.display());
            }
        }
    }

    #[test]
    fn other_shapes_are_read_whole() {
        let one = object(1);
        for text in [
            format!("---\n{}", list(&[&one])),
            format!("{}---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: a}}\n", list(&[&one])),
            "apiVersion: v1\nitems:\n  - a: 1\n  - b: 2\nkind: List\n".to_string(),
            "apiVersion: v1\nitems:\n- a: 1\nkind: List\nother:\n  items:\n  - x\nitems:\n- b\n".to_string(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n".to_string(),
            "apiVersion: v1\nitems: []\nkind: List\n".to_string(),
        ] {
            assert_eq!(read_on(4, 0, &text, &budget()), None, "{text}");
        }
        let two = list(&[&one, &one]);
        assert_eq!(read_on(1, 0, &two, &budget()), fast::read(&two, &budget()), "one core reads one share");
        assert_eq!(read_on(4, 1 << 20, &two, &budget()), fast::read(&two, &budget()), "a small file is one share");
    }

    /// A cut inside a multi-line quoted scalar leaves a share unterminated: the shares give up
    /// rather than answer differently from the whole file.
    #[test]
    fn a_cut_inside_a_scalar_gives_up() {
        let tricky = "- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: TrainJob\n  metadata: {name: q, namespace: a}\n  spec:\n    a: \"one\n- two\"\n";
        let items: Vec<String> = (0..20).map(object).collect();
        let mut refs: Vec<&str> = items.iter().map(String::as_str).collect();
        refs.insert(10, tricky);
        let text = list(&refs);
        let whole = fast::read(&text, &budget());
        let (start, end) = items_lines(&text).expect("items at column 0");
        let inside = text.find("- two").expect("the scalar's second line");
        assert!((2..12).any(|t| cuts(&text, start, end, t).contains(&inside)), "some share count cuts inside the scalar");
        for threads in 2..12 {
            let shared = read_on(threads, 0, &text, &budget());
            assert!(shared.is_none() || shared == whole, "{threads} shares answered differently from the whole file");
        }
    }
}
