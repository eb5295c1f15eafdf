//! A tiny seeded PRNG (SplitMix64) for choosing torn-write lengths and garbage bytes.
//!
//! Written here rather than taken from `rand` because the fault file system needs only a few
//! numbers per crash, must replay bit for bit from a seed across crate versions, and this crate
//! is the one place that would otherwise pull `rand` into every test build.

/// SplitMix64 (Steele, Lea, Flood 2014): one `u64` of state, full period, good enough mixing
/// for test fault choices. Not for anything security-related.
#[derive(Debug, Clone)]
pub(super) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(super) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..=max` (multiply-shift; the bias is irrelevant at test sizes).
    pub(super) fn up_to(&mut self, max: u64) -> u64 {
        match max.checked_add(1) {
            Some(n) => ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64,
            None => self.next_u64(),
        }
    }

    pub(super) fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    pub(super) fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn up_to_stays_in_range() {
        let mut r = SplitMix64::new(7);
        for max in [0u64, 1, 2, 10, 1000] {
            for _ in 0..1000 {
                assert!(r.up_to(max) <= max);
            }
        }
        assert_eq!(r.up_to(0), 0);
    }
}
