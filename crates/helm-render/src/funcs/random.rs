//! The generator behind Sprig's random functions (`randAlphaNum`, `randInt`, `uuidv4`,
//! `shuffle`, …): xorshift64* per thread, seeded from the OS. Random-looking, not for secrets
//! (`crypto.rs` draws those from the OS itself).

use std::cell::Cell;

thread_local! {
    static RNG: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut bytes);
    }
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    u64::from_le_bytes(bytes) ^ t ^ (std::process::id() as u64).rotate_left(32) | 1
}

/// xorshift64*: random-looking output for the random functions (not for secrets).
pub fn random_u64() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        r.set(x);
        x.wrapping_mul(0x2545F4914F6CDD1D)
    })
}
