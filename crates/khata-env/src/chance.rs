//! Sampling: whether to do something a given share of the time (probabilistic tracing,
//! `nodetool settraceprobability`).
//!
//! A xorshift64* generator per thread, seeded from the standard library's per-thread random
//! hash keys: no lock and no system call per draw, and nothing to replay (what is sampled is
//! never data, only whether to record how a request went).

use std::cell::Cell;
use std::hash::BuildHasher;

thread_local! {
    /// The generator's state (never zero).
    static STATE: Cell<u64> = Cell::new(
        std::collections::hash_map::RandomState::new().hash_one(0u64) | 1,
    );
}

/// A uniform draw from [0, 1).
fn unit() -> f64 {
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// True with probability `p` (never when `p` is 0 or less, always when it is 1 or more).
pub fn with_probability(p: f64) -> bool {
    p > 0.0 && unit() < p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_uniform_in_the_unit_interval() {
        let n = 100_000;
        let draws: Vec<f64> = (0..n).map(|_| unit()).collect();
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        let below_tenth = draws.iter().filter(|&&d| d < 0.1).count();
        assert!((9_000..11_000).contains(&below_tenth), "{below_tenth}");
        let mean = draws.iter().sum::<f64>() / f64::from(n);
        assert!((0.49..0.51).contains(&mean), "{mean}");
    }

    #[test]
    fn probabilities_zero_and_one_are_never_and_always() {
        assert!((0..1_000).all(|_| !with_probability(0.0)));
        assert!((0..1_000).all(|_| with_probability(1.0)));
        let hits = (0..100_000).filter(|_| with_probability(0.25)).count();
        assert!((24_000..26_000).contains(&hits), "{hits}");
    }
}
