//! Per-object work shared out over the machine's cores: a slice cut into as many contiguous
//! shares as there are cores (at most [`MAX_THREADS`]), each run on a scoped thread, results in
//! the slice's order. Small inputs, and one-core machines, run on the calling thread. Written by
//! hand rather than taking rayon: two call sites, each one `chunks` over a slice.

/// Threads one call uses at most (a fleet's `--concurrency` multiplies it).
pub const MAX_THREADS: usize = 8;
/// Items below which a share is not worth a thread.
const MIN_SHARE: usize = 256;

/// The threads a call may use here: the cores the process may run on, bounded.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS)
}

/// `f` over contiguous shares of `items`, one per thread, in order.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    map_chunks_on(threads(), MIN_SHARE, items, f)
}

/// `f` over each of a few large items (already cut one per thread), each on a thread of its own.
pub fn map_each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_chunks_on(items.len(), 1, items, |share| share.iter().map(&f).collect::<Vec<R>>()).into_iter().flatten().collect()
}

/// `f` over each item, results in order, shared out as [`map_chunks`] does.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_chunks(items, |share| share.iter().map(&f).collect::<Vec<R>>()).into_iter().flatten().collect()
}

fn map_chunks_on<T: Sync, R: Send>(threads: usize, min_share: usize, items: &[T], f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let shares = threads.min(items.len().div_ceil(min_share)).max(1);
    if shares == 1 {
        return vec![f(items)];
    }
    let size = items.len().div_ceil(shares);
    let f = &f;
    std::thread::scope(|s| {
        let running: Vec<_> = items.chunks(size).map(|share| s.spawn(move || f(share))).collect();
        running.into_iter().map(|t| t.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    })
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
    fn shares_keep_the_order_whatever_the_thread_count() {
        let items: Vec<u32> = (0..10_000).collect();
        let one = map_chunks_on(1, MIN_SHARE, &items, |s| s.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(one.len(), 1);
        for n in [2, 3, 8] {
            let many = map_chunks_on(n, MIN_SHARE, &items, |s| s.iter().map(|x| x * 2).collect::<Vec<_>>());
            assert_eq!(many.len(), n, "{n} threads get {n} shares of 10,000 items");
            assert_eq!(many.concat(), one.concat());
        }
        // Small inputs stay on the calling thread.
        assert_eq!(map_chunks_on(8, MIN_SHARE, &items[..100], |s| s.len()), vec![100]);
        assert_eq!(map(&items, |x| x + 1)[9_999], 10_000);
        assert!(map(&[] as &[u32], |x| *x).is_empty());
        assert_eq!(map_each(&[1, 2, 3], |x| x * 10), vec![10, 20, 30]);
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
