//! Per-object work shared out over the machine's cores, through rayon's pool (one pool for the
//! process, so a fleet's concurrent clusters share the cores rather than multiply threads).
//! Results keep the input's order, so nothing downstream depends on how the work was shared.
//! Also: freeing large values where nobody waits for it.

use rayon::prelude::*;

/// Items below which a share is not worth handing to another thread.
const MIN_SHARE: usize = 256;

/// `f` over contiguous shares of `items` (one per core, none under [`MIN_SHARE`] items), in order.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> R + Sync + Send) -> Vec<R> {
    let size = items.len().div_ceil(rayon::current_num_threads().max(1)).max(MIN_SHARE);
    items.par_chunks(size).map(f).collect()
}

/// `f` over each item, results in order, shared out as [`map_chunks`] does.
pub fn map<'a, T: Sync, R: Send>(items: &'a [T], f: impl Fn(&'a T) -> R + Sync + Send) -> Vec<R> {
    items.par_iter().with_min_len(MIN_SHARE).map(f).collect()
}

/// `f` on each item in place, shared out as [`map`] does.
pub fn each_mut<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    items.par_iter_mut().with_min_len(MIN_SHARE).for_each(f);
}

/// A stable sort (equal items keep their order), on the pool's cores.
pub fn sort_by<T: Send>(items: &mut [T], compare: impl Fn(&T, &T) -> std::cmp::Ordering + Sync) {
    items.par_sort_by(compare);
}

/// `f` over each of a few large items (already cut one per core), each free to run on its own core.
pub fn map_each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    items.par_iter().with_max_len(1).map(f).collect()
}

/// The cores the pool shares work over.
pub fn threads() -> usize {
    rayon::current_num_threads().max(1)
}

/// Frees `value` on a thread of its own, so nobody waits for it: freeing a 50,000-object
/// survey and its conversions one allocation at a time took a sixth of `check`. A process that
/// exits first leaves the memory to the OS; one that goes on (a fleet) gets it back shortly.
pub fn drop_later<T: Send + 'static>(value: T) {
    // When no thread can be started the value comes back inside the error and is freed here.
    let _ = std::thread::Builder::new().name("drop-later".into()).spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_keep_the_order() {
        let items: Vec<u32> = (0..10_000).collect();
        let doubled: Vec<u32> = items.iter().map(|x| x * 2).collect();
        let shares = map_chunks(&items, |s| s.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(shares.iter().all(|s| s.len() >= MIN_SHARE || shares.len() == 1));
        assert_eq!(shares.concat(), doubled);
        assert_eq!(map(&items, |x| x * 2), doubled);
        // Small inputs make one share.
        assert_eq!(map_chunks(&items[..100], |s| s.len()), vec![100]);
        assert!(map(&[] as &[u32], |x| *x).is_empty());
        assert_eq!(map_each(&[1, 2, 3], |x| x * 10), vec![10, 20, 30]);
        let mut each = items.clone();
        each_mut(&mut each, |x| *x *= 2);
        assert_eq!(each, doubled);
        // Stable: equal keys keep their order, as `slice::sort_by` does.
        let mut pairs: Vec<(u32, u32)> = items.iter().map(|&x| (x % 7, x)).collect();
        let mut want = pairs.clone();
        want.sort_by_key(|p| p.0);
        sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        assert_eq!(pairs, want);
    }

    #[test]
    fn dropped_later_all_the_same() {
        struct Flag(std::sync::mpsc::Sender<()>);
        impl Drop for Flag {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        drop_later(Flag(tx));
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the value is dropped on the other thread");
    }
}
