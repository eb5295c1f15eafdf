//! Group commit: which positions are durable, who syncs next, and poisoning.
//!
//! Appenders that must wait for durability (group and batch modes, `sync`, `close`, the
//! periodic thread) call [`Durability::sync_to`] with the position just after their record. It
//! follows the leader/follower pattern: if no fsync is in flight, the caller becomes the leader,
//! snapshots the log's end position, fsyncs the active segment *without* holding the append lock
//! (so appends continue during the fsync), publishes the snapshot as the new synced position
//! and wakes every waiter; callers whose position is already covered return at once, and the
//! rest wait for the next round. One fsync therefore acknowledges every record written before
//! it started, however many threads wrote them, and at most one fsync runs at a time.
//!
//! Group mode adds a window: a leader whose previous sync started less than `window` ago sleeps
//! (std `thread::sleep`, the real clock: this is the one place the commit log waits on time
//! besides the periodic thread) until the window has passed, so that more appenders join its
//! fsync. Batch mode has no window.
//!
//! Invariants: `synced` only grows; it is published only after an fsync that covers it
//! succeeded. Once a sync fails the log is poisoned for good: the state on disk is unknown (the
//! kernel may have dropped the dirty pages, "fsyncgate"), so every waiter and every later append
//! gets [`StorageError::Poisoned`] until the log is reopened and replayed.
//!
//! Memory is bounded: waiting appenders hold only their own position; there is no queue.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::CommitLogPosition;
use crate::error::{Result, StorageError};

#[derive(Debug)]
struct SyncState {
    /// Everything before this position is durable.
    synced: CommitLogPosition,
    /// A leader is between deciding to sync and publishing the result.
    syncing: bool,
    /// When the last fsync started (for the group window).
    last_sync_start: Option<Instant>,
    /// Why the log is poisoned, once it is.
    poison_reason: Option<String>,
}

/// The durable position of the log and the machinery to advance it.
#[derive(Debug)]
pub(super) struct Durability {
    state: Mutex<SyncState>,
    /// Signalled whenever `synced`, `syncing` or `poison_reason` change.
    changed: Condvar,
    /// A lock-free copy of `poison_reason.is_some()` for the append fast path.
    poisoned: AtomicBool,
}

impl Durability {
    /// Start with everything before `synced` known to be durable.
    pub(super) fn new(synced: CommitLogPosition) -> Self {
        Durability {
            state: Mutex::new(SyncState {
                synced,
                syncing: false,
                last_sync_start: None,
                poison_reason: None,
            }),
            changed: Condvar::new(),
            poisoned: AtomicBool::new(false),
        }
    }

    /// `Err(Poisoned)` once a sync has failed.
    pub(super) fn check(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            let state = self.state.lock();
            return Err(poisoned_error(&state));
        }
        Ok(())
    }

    pub(super) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Poison the log (the first reason is kept) and wake every waiter.
    pub(super) fn poison(&self, reason: String) {
        let mut state = self.state.lock();
        self.poison_locked(&mut state, reason);
        self.changed.notify_all();
    }

    /// Record that everything before `pos` is durable (a segment synced whole at rotation).
    pub(super) fn mark_synced(&self, pos: CommitLogPosition) {
        let mut state = self.state.lock();
        if pos > state.synced {
            state.synced = pos;
            self.changed.notify_all();
        }
    }

    /// Return once everything before `target` is durable, syncing it if need be (see the module
    /// docs). `sync_active` fsyncs the active segment and returns the log's end position as it
    /// was *before* the fsync started, or a description of the failure.
    pub(super) fn sync_to(
        &self,
        target: CommitLogPosition,
        window: Duration,
        sync_active: impl Fn() -> std::result::Result<CommitLogPosition, String>,
    ) -> Result<()> {
        let mut state = self.state.lock();
        loop {
            if state.poison_reason.is_some() {
                return Err(poisoned_error(&state));
            }
            if state.synced >= target {
                return Ok(());
            }
            if state.syncing {
                self.changed.wait(&mut state);
                continue;
            }
            state.syncing = true;
            if let Some(last) = state.last_sync_start {
                let wake = last + window;
                let now = Instant::now(); // layering: allowed (group-commit window)
                if now < wake {
                    MutexGuard::unlocked(&mut state, || std::thread::sleep(wake - now));
                }
            }
            state.last_sync_start = Some(Instant::now()); // layering: allowed (group-commit window)
            let result = MutexGuard::unlocked(&mut state, &sync_active);
            state.syncing = false;
            match result {
                Ok(pos) if pos > state.synced => state.synced = pos,
                Ok(_) => {}
                Err(reason) => self.poison_locked(&mut state, reason),
            }
            self.changed.notify_all();
        }
    }

    fn poison_locked(&self, state: &mut SyncState, reason: String) {
        if state.poison_reason.is_none() {
            tracing::error!(%reason, "commit log poisoned; it refuses writes until reopened");
            state.poison_reason = Some(reason);
            self.poisoned.store(true, Ordering::Release);
        }
    }
}

fn poisoned_error(state: &SyncState) -> StorageError {
    StorageError::Poisoned(
        state
            .poison_reason
            .clone()
            .unwrap_or_else(|| "unknown".into()),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    use super::*;

    fn pos(offset: u64) -> CommitLogPosition {
        CommitLogPosition {
            segment_id: 1,
            offset,
        }
    }

    #[test]
    fn covered_positions_do_not_sync_again() {
        let d = Durability::new(pos(0));
        let syncs = AtomicU64::new(0);
        let sync = || {
            syncs.fetch_add(1, Ordering::Relaxed);
            Ok(pos(100))
        };
        d.sync_to(pos(50), Duration::ZERO, sync).unwrap();
        d.sync_to(pos(100), Duration::ZERO, sync).unwrap();
        assert_eq!(syncs.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn failed_sync_poisons_everyone() {
        let d = Durability::new(pos(0));
        let err = d
            .sync_to(pos(10), Duration::ZERO, || Err("disk on fire".into()))
            .unwrap_err();
        assert!(matches!(err, StorageError::Poisoned(ref r) if r.contains("disk on fire")));
        assert!(matches!(d.check(), Err(StorageError::Poisoned(_))));
        assert!(d.sync_to(pos(0), Duration::ZERO, || Ok(pos(10))).is_err());
    }

    #[test]
    fn concurrent_waiters_share_syncs() {
        let d = Arc::new(Durability::new(pos(0)));
        let end = Arc::new(AtomicU64::new(0));
        let syncs = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (d, end, syncs) = (d.clone(), end.clone(), syncs.clone());
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        let mine = end.fetch_add(1, Ordering::SeqCst) + 1;
                        let sync = || {
                            let snapshot = end.load(Ordering::SeqCst);
                            syncs.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_micros(200));
                            Ok(pos(snapshot))
                        };
                        d.sync_to(pos(mine), Duration::ZERO, sync).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(
            syncs.load(Ordering::Relaxed) < 1600,
            "no sharing: {syncs:?}"
        );
    }
}
