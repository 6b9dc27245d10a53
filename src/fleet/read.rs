//! Reading a fleet's clusters with at most N reads at once, each exactly as a single-cluster run
//! reads it (`cluster::snapshot::read_file`, `cluster::live::read`), on worker threads (snapshot
//! parsing is CPU work; live reads get their own small async runtime). Each state is handed to
//! the calling thread as soon as it is read, and the hand-off is a rendezvous: a worker with a
//! finished state waits until the caller takes it. So at most N + 1 cluster states exist at any
//! moment, whatever the fleet's size, and the caller (which owns the non-thread-safe chart
//! store) audits them one by one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::Member;
use crate::cluster::neighbours::Declared;
use crate::cluster::ClusterState;
use kube_version::KubeVersion;

/// Reads every member with at most `concurrency` reads in flight and calls `each(index, result)`
/// on the calling thread, in the order the reads finish. A failed read is passed on as its
/// error; it never stops the others.
pub fn read_all<R, F, E>(members: &[Member], concurrency: usize, read: R, mut each: F)
where
    R: Fn(&Member) -> Result<ClusterState, E> + Sync,
    F: FnMut(usize, Result<ClusterState, E>),
    E: Send,
{
    let workers = concurrency.clamp(1, members.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        // Capacity 0: `send` returns only once the caller has received, so no finished state
        // queues up beyond the one each worker holds.
        let (tx, rx) = mpsc::sync_channel::<(usize, Result<ClusterState, E>)>(0);
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, read) = (&next, &read);
            scope.spawn(move || loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                let Some(member) = members.get(index) else { return };
                if tx.send((index, read(member))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        for (index, result) in rx {
            each(index, result);
        }
    });
}

/// What the user states about the clusters that they do not tell themselves: `--kube-version`
/// and `--neighbour` (each for every cluster, or a `--neighbour` for one named cluster).
#[derive(Debug, Clone, Default)]
pub struct Assumed {
    /// The `--kube-version` to assume.
    pub kube_version: Option<KubeVersion>,
    /// `--neighbour [CLUSTER:]ID=VERSION`, parsed.
    pub neighbours: Vec<(Option<String>, String, Declared)>,
}

impl Assumed {
    /// `--neighbour` values parsed; a declaration for a cluster the flags do not name, or two for
    /// one component of one cluster, is refused.
    pub fn with_neighbours(kube_version: Option<KubeVersion>, given: &[String], members: &[Member]) -> Result<Assumed, String> {
        let mut neighbours = Vec::new();
        for text in given {
            let (cluster, id, declared) = crate::cluster::neighbours::parse_declaration(text)?;
            if let Some(c) = &cluster {
                if !members.iter().any(|m| &m.name == c) {
                    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                    return Err(format!("--neighbour {text}: no cluster is named {c:?} (the clusters: {})", names.join(", ")));
                }
            }
            let clash = |(c, i, _): &&(Option<String>, String, Declared)| *i == id && (c.is_none() || cluster.is_none() || *c == cluster);
            if neighbours.iter().any(|n| clash(&n)) {
                return Err(format!("--neighbour {text}: {id} is declared twice for the same cluster"));
            }
            neighbours.push((cluster, id, declared));
        }
        Ok(Assumed { kube_version, neighbours })
    }
}

/// One cluster read, with what the user assumes for it: `kube_version` standing in for a server
/// version the cluster does not record, neighbour versions it does not tell; `progress` shows a
/// live read's progress on standard error.
pub fn read_member(member: &Member, assumed: &Assumed, progress: bool) -> Result<ClusterState, String> {
    let mut state = member.source.read(progress).map_err(|e| e.to_string())?;
    if let Some(v) = &assumed.kube_version {
        state.assume_kube_version(v).map_err(|e| e.to_string())?;
    }
    for (cluster, id, declared) in &assumed.neighbours {
        if cluster.as_ref().is_none_or(|c| *c == member.name) {
            state.declare_neighbour(id, declared.clone()).map_err(|e| e.to_string())?;
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::source::Source;
    use std::path::PathBuf;
    use std::sync::Mutex;
    use std::time::Duration;

    fn members(n: usize) -> Vec<Member> {
        (0..n).map(|i| Member { name: format!("c{i}"), source: Source::Snapshot { path: PathBuf::from(format!("c{i}")) } }).collect()
    }

    /// Live states are counted by a guard inside them: created by a read, dropped by the caller.
    #[test]
    fn reads_are_bounded_and_states_never_pile_up() {
        let fleet = members(40);
        let (in_flight, alive) = (AtomicUsize::new(0), std::sync::Arc::new(AtomicUsize::new(0)));
        let (max_in_flight, max_alive) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let seen = Mutex::new(Vec::new());
        read_all(
            &fleet,
            4,
            |m| {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                max_in_flight.fetch_max(now, Ordering::SeqCst);
                // Uneven read times, so completion order differs from input order.
                std::thread::sleep(Duration::from_millis(1 + (m.name.len() as u64 * 7 + m.name.as_bytes()[1] as u64) % 5));
                in_flight.fetch_sub(1, Ordering::SeqCst);
                // A failed read holds no state.
                if m.name == "c7" {
                    return Err(String::from("unreachable"));
                }
                let a = alive.fetch_add(1, Ordering::SeqCst) + 1;
                max_alive.fetch_max(a, Ordering::SeqCst);
                Ok(ClusterState { warnings: vec![m.name.clone()], ..ClusterState::default() })
            },
            |i, result| {
                // The caller is slow: finished reads must wait, not queue.
                std::thread::sleep(Duration::from_millis(3));
                if result.is_ok() {
                    alive.fetch_sub(1, Ordering::SeqCst);
                }
                seen.lock().unwrap().push((i, result.map(|s| s.warnings[0].clone())));
            },
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|(i, _)| *i);
        assert_eq!(seen.len(), 40);
        for (i, result) in &seen {
            match result {
                Ok(name) => assert_eq!(name, &format!("c{i}")),
                Err(e) => assert_eq!((*i, e.as_str()), (7, "unreachable")),
            }
        }
        assert!(max_in_flight.load(Ordering::SeqCst) <= 4);
        assert!(max_alive.load(Ordering::SeqCst) <= 4 + 1, "{} states alive at once", max_alive.load(Ordering::SeqCst));
    }

    #[test]
    fn an_empty_fleet_and_a_concurrency_above_the_fleet_size_are_fine() {
        let mut calls = 0;
        read_all(&[], 8, |_| Ok::<_, String>(ClusterState::default()), |_, _| calls += 1);
        assert_eq!(calls, 0);
        read_all(&members(2), 64, |_| Ok::<_, String>(ClusterState::default()), |_, _| calls += 1);
        assert_eq!(calls, 2);
    }
}
