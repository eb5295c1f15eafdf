//! Clocks. Write timestamps are microseconds since the epoch; local times are seconds.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time.
pub trait Clock: Send + Sync + Debug + 'static {
    /// Microseconds since the Unix epoch.
    fn now_micros(&self) -> i64;

    /// Seconds since the Unix epoch, as a local time (`u32`, good until 2106).
    fn now_seconds(&self) -> u32 {
        u32::try_from(self.now_micros().div_euclid(1_000_000)).unwrap_or(u32::MAX)
    }
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_micros(&self) -> i64 {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    micros: AtomicI64,
}

impl ManualClock {
    pub fn new(micros: i64) -> Self {
        ManualClock {
            micros: AtomicI64::new(micros),
        }
    }

    pub fn set_micros(&self, micros: i64) {
        self.micros.store(micros, Ordering::SeqCst);
    }

    pub fn advance_micros(&self, delta: i64) {
        self.micros.fetch_add(delta, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_micros(&self) -> i64 {
        self.micros.load(Ordering::SeqCst)
    }
}
