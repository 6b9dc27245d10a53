//! The explorer's random numbers: SplitMix64 (Steele, Lea and Flood, 2014), seeded from the
//! campaign's seed and the state's index, so state K of seed S is the same on every machine and
//! can be rebuilt alone (`--seed S --state K`) without generating the states before it.

pub struct Rng(u64);

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// The generator of state `index` of campaign `seed`.
    pub fn for_state(seed: u64, index: u64) -> Rng {
        Rng(mix(seed ^ mix(index.wrapping_add(0x9e37_79b9_7f4a_7c15))))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `items` by weight.
    pub fn weighted<'a, T>(&mut self, items: &'a [(u32, T)]) -> &'a T {
        let total: u32 = items.iter().map(|(w, _)| w).sum();
        let mut at = self.below(total as usize) as u32;
        for (w, item) in items {
            if at < *w {
                return item;
            }
            at -= w;
        }
        &items[items.len() - 1].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_index_give_the_same_numbers() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_state(7, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r = Rng::for_state(7, 3);
        let mut s = Rng::for_state(7, 4);
        assert_ne!(r.next_u64(), s.next_u64());
        let hits = (0..1000).filter(|_| r.chance(30)).count();
        assert!((200..400).contains(&hits), "{hits}");
    }
}
