//! Loopback ports for the tests' servers (etcd, kube-apiserver, the registry, …), picked so that
//! a port cannot be taken between being chosen and being bound.
//!
//! Binding `127.0.0.1:0` and closing the socket hands out a port from the kernel's ephemeral range
//! (`net.ipv4.ip_local_port_range`), the same range the kernel draws from for every *outgoing*
//! connection's source port: with a control plane's clients connecting all the time, such a port
//! can be given to a client socket before the server binds it (`bind: address already in use`,
//! seen once as an etcd start-up failure). So [`pick`] chooses below the ephemeral range, where
//! the kernel never assigns a port on its own, skips ports this process already handed out, and
//! checks the port is bindable now. What remains — another process choosing the same port in
//! the same instant — is handled by the callers: each server's start is retried with new ports
//! when its log says [`in_use`].

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Lowest port handed out (above the well-known and most registered service ports).
const LOW: u16 = 12_000;
/// How many servers a start may try before giving up on `address already in use`.
pub const START_ATTEMPTS: usize = 5;

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The kernel's ephemeral range, `(low, high)`; Linux's default when it cannot be read.
fn ephemeral_range() -> (u16, u16) {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let mut parts = text.split_whitespace().filter_map(|p| p.parse::<u16>().ok());
    match (parts.next(), parts.next()) {
        (Some(low), Some(high)) if low <= high => (low, high),
        _ => (32_768, 60_999),
    }
}

/// A small xorshift generator seeded from the clock and pid: ports spread across the range so
/// that concurrent test processes rarely start from the same candidate.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// The candidate window: below the ephemeral range when there is room, else above it.
fn window() -> (u16, u16) {
    let (low, high) = ephemeral_range();
    if low > LOW + 1_000 {
        (LOW, low - 1)
    } else {
        (high.saturating_add(1).max(LOW), u16::MAX)
    }
}

/// A free loopback port outside the kernel's ephemeral range, never handed out before by this
/// process.
pub fn pick() -> std::io::Result<u16> {
    let (from, to) = window();
    let span = u64::from(to - from) + 1;
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut state = nanos ^ (u64::from(std::process::id()) << 32) | 1;
    let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    let handed = handed.get_or_insert_with(HashSet::new);
    for _ in 0..10_000 {
        let port = from + (next_random(&mut state) % span) as u16;
        if handed.contains(&port) {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            handed.insert(port);
            return Ok(port);
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AddrInUse, format!("no free loopback port in {from}..={to}")))
}

/// Whether a server's output says it lost the race for its port.
pub fn in_use(log: &str) -> bool {
    log.contains("address already in use")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_ports_are_outside_the_ephemeral_range_distinct_and_bindable() {
        let (low, high) = ephemeral_range();
        let ports: Vec<u16> = (0..50).map(|_| pick().unwrap()).collect();
        let distinct: HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        for port in ports {
            assert!(!(low..=high).contains(&port), "{port} is in the ephemeral range {low}-{high}");
            assert!(port >= LOW);
        }
        let port = pick().unwrap();
        TcpListener::bind(("127.0.0.1", port)).unwrap();
    }

    #[test]
    fn in_use_recognises_gos_bind_error() {
        assert!(in_use("listen tcp 127.0.0.1:2379: bind: address already in use"));
        assert!(!in_use("listen tcp 127.0.0.1:2379: bind: permission denied"));
    }
}
