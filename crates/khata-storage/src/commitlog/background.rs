//! The commit log's background thread: it prepares the next segment when an appender asks
//! (once the active segment is half full), maps in the active segment's pages ahead of the
//! writer and, in periodic mode, fsyncs every `period` and
//! whenever an appender reports [`super::SYNC_AHEAD_BYTES`] written since the last request.
//! Appenders only set flags in [`Wanted`] and signal; all the I/O happens here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use khata_env::PreallocatedFile;

use super::segment::SpareSegment;
use super::{Inner, SyncMode};

/// Work for the background thread, set by appenders (under `Inner::wanted`).
#[derive(Debug, Default)]
pub(super) struct Wanted {
    pub(super) stop: bool,
    pub(super) spare: bool,
    pub(super) sync: bool,
    /// Finish a pending segment switch.
    pub(super) finish_switch: bool,
    /// Map in these bytes of this segment.
    pub(super) prepare: Option<PrepareRange>,
}

/// Bytes `from..to` of a segment to map in ahead of the writer.
pub(super) type PrepareRange = (Arc<dyn PreallocatedFile>, u64, u64);

impl Wanted {
    /// Ask for `range` to be mapped in. Appenders ask for consecutive ranges of the active
    /// segment, so a range of the same segment still waiting (the thread busy with a sync)
    /// is extended, not replaced: replacing it left its pages to fault in under the append
    /// lock. A range of another segment replaces it (the log has moved on).
    pub(super) fn add_prepare(&mut self, range: PrepareRange) {
        let (file, from, to) = range;
        self.prepare = Some(match self.prepare.take() {
            Some((waiting, waiting_from, waiting_to)) if Arc::ptr_eq(&waiting, &file) => {
                (file, waiting_from.min(from), waiting_to.max(to))
            }
            _ => (file, from, to),
        });
    }
}

impl Inner {
    /// The lock on what the background thread is asked to do. A std mutex, like the append
    /// lock: appenders take it to signal the thread, and parking_lot's spinning yielded the
    /// CPU on the request threads (docs/benchmarks.md).
    pub(super) fn lock_wanted(&self) -> std::sync::MutexGuard<'_, Wanted> {
        self.wanted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The background thread: prepare spare segments when asked; in periodic mode fsync
    /// every `period` and when asked (sync-ahead); until told to stop.
    pub(super) fn run_background(&self) {
        let period = match self.config.sync {
            SyncMode::Periodic { period } => Some(period),
            SyncMode::Group { .. } | SyncMode::Batch => None,
        };
        let next_deadline = || period.map(|p| Instant::now() + p); // layering: allowed (paces the periodic sync)
        let mut deadline = next_deadline();
        let mut wanted = self.lock_wanted();
        loop {
            let due = deadline.is_some_and(|d| Instant::now() >= d); // layering: allowed (paces the periodic sync)
            if wanted.stop {
                return;
            }
            if !(due
                || wanted.spare
                || wanted.sync
                || wanted.finish_switch
                || wanted.prepare.is_some())
            {
                wanted = match deadline {
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now()); // layering: allowed (paces the periodic sync)
                        self.wanted_signal
                            .wait_timeout(wanted, left)
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .0
                    }
                    None => self
                        .wanted_signal
                        .wait(wanted)
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                };
                continue;
            }
            let spare = std::mem::take(&mut wanted.spare);
            let prepare = wanted.prepare.take();
            let sync_ahead = std::mem::take(&mut wanted.sync);
            let finish_switch = std::mem::take(&mut wanted.finish_switch);
            if due {
                deadline = next_deadline();
            }
            drop(wanted);
            if finish_switch && !self.durability.is_poisoned() {
                // Errors poison the log, which the next append reports.
                let _ = self.finish_switch();
            }
            if let Some((file, from, to)) = prepare {
                file.prepare(from, to);
            }
            if spare {
                self.prepare_spare();
            }
            // An error poisons the log and is logged; appends report it.
            if due && !self.durability.is_poisoned() {
                let _ = self.sync_to(self.current_position(), Duration::ZERO);
            } else if sync_ahead && !self.durability.is_poisoned() {
                let _ = self.sync_whole_pages();
            }
            wanted = self.lock_wanted();
        }
    }

    /// Create the segment after the active one under its temporary name and leave it for the
    /// next switch. A failure is only logged: the switch then creates the segment itself and
    /// reports the error if it fails again. Only one file is ever made for an id: a switch
    /// that finds this one in the making waits for it.
    fn prepare_spare(&self) {
        let id = {
            let mut writer = self.writer.lock();
            if writer.closed || writer.spare.is_some() || writer.preparing.is_some() {
                return;
            }
            let id = writer.active.id + 1;
            writer.preparing = Some(id);
            id
        };
        let made = SpareSegment::create(&*self.fs, &self.dir, id, self.config.segment_size_bytes);
        let mut writer = self.writer.lock();
        writer.preparing = None;
        self.spare_ready.notify_all();
        match made {
            Ok(spare) if !writer.closed && writer.spare.is_none() && writer.active.id + 1 == id => {
                writer.spare = Some(spare);
            }
            Ok(spare) => {
                // Closed while the file was being made.
                drop(writer);
                spare.remove(&*self.fs);
            }
            Err(e) => {
                tracing::warn!(segment = id, error = %e, "commit log: preparing the next segment failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use khata_env::{FileSystem, RealFs};

    use super::*;

    /// Ranges asked for while the thread is busy add up; a new segment's range replaces an
    /// old segment's.
    #[test]
    fn waiting_ranges_of_a_segment_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let fs = RealFs;
        let first = fs
            .create_preallocated(&dir.path().join("a"), 1 << 20)
            .unwrap();
        let second = fs
            .create_preallocated(&dir.path().join("b"), 1 << 20)
            .unwrap();
        let mut wanted = Wanted::default();
        wanted.add_prepare((first.clone(), 4096, 8192));
        wanted.add_prepare((first.clone(), 8192, 12288));
        let (file, from, to) = wanted.prepare.take().unwrap();
        assert!(Arc::ptr_eq(&file, &first));
        assert_eq!((from, to), (4096, 12288));

        wanted.add_prepare((first, 4096, 8192));
        wanted.add_prepare((second.clone(), 0, 4096));
        let (file, from, to) = wanted.prepare.take().unwrap();
        assert!(Arc::ptr_eq(&file, &second));
        assert_eq!((from, to), (0, 4096));
    }
}
