//! `Engine::writes_would_wait`: while flushes cannot keep up (sealed memtables over
//! `memtable_space_bytes`), the engine says that a write would wait for memory, so that a
//! request thread can hand the write to a thread that may block; once the flushes go through
//! it says so no more.

mod commitlog_common;
mod engine_support;

use std::sync::Arc;

use commitlog_common::SyncProbeFs;
use engine_support::*;
use khata_env::{FileSystem, ManualClock};
use khata_storage::Engine;
use khata_types::schema::CompactionStrategy;

#[test]
fn writes_would_wait_while_sealed_memtables_are_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Less than one memtable: one sealed memtable waiting for its flush passes it.
    let (probe, _clock, engine) = with_hanging_flushes(dir.path(), 16 << 10, 8 << 10);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 60));
    assert!(!engine.writes_would_wait());
    let mut key = 0u32;
    while !engine.writes_would_wait() {
        assert!(key < 100_000, "the sealed memtables never passed the limit");
        engine
            .apply(insert(
                spec.id,
                key,
                0,
                b"value",
                START_MICROS + i64::from(key),
            ))
            .unwrap();
        key += 1;
    }
    probe.gate.open();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30); // layering: allowed (a test's deadline)
    while engine.writes_would_wait() {
        let now = std::time::Instant::now(); // layering: allowed (a test's deadline)
        assert!(now < deadline, "the flushes did not free memory in 30 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    engine
        .apply(insert(spec.id, key, 0, b"value", START_MICROS))
        .unwrap();
    assert!(!engine.sstables(spec.id).unwrap().is_empty());
}

/// A table written while its flush hangs: each time its active memtable fills again it is
/// sealed again (counted against `memtable_space_bytes`) rather than growing uncounted for as
/// long as the flush takes, so writers are told to wait before memtables pass the space plus
/// about two flush sizes; once the disk lets the flushes through, every sealed memtable is
/// flushed (none is left behind by the flush that was running when it was sealed) and every
/// row is there.
#[test]
fn a_table_written_while_its_flush_hangs_keeps_within_the_memtable_space() {
    let dir = tempfile::tempdir().unwrap();
    let flush_size = 16 << 10;
    let space = 64 << 10;
    let (probe, clock, engine) = with_hanging_flushes(dir.path(), flush_size, space);
    // Dropped before the engine: a failed assertion opens the gate, so closing the engine
    // (which flushes) ends.
    let _opens = OpenOnDrop(&probe);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 60));
    let mut key = 0u32;
    while !engine.writes_would_wait() {
        // Before sealing while a flush ran, the first flush hung with the table still queued
        // and the active memtable took every write from then on: this never turned true.
        assert!(key < 100_000, "writers were never told to wait");
        let held = engine.memtable_bytes();
        assert!(
            held <= space + 2 * flush_size,
            "memtables hold {held} bytes after {key} writes"
        );
        engine
            .apply(insert(spec.id, key, 0, b"value", START_MICROS))
            .unwrap();
        key += 1;
    }
    assert!(engine.memtable_bytes() <= space + 2 * flush_size + 1024);
    probe.gate.open();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30); // layering: allowed (a test's deadline)
    while engine.writes_would_wait() || engine.memtable_bytes() >= flush_size {
        let now = std::time::Instant::now(); // layering: allowed (a test's deadline)
        assert!(
            now < deadline,
            "sealed memtables were not flushed in 30 s: {} bytes held",
            engine.memtable_bytes()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let rows = dump(&engine, spec.id, now(&clock));
    assert_eq!(rows.len(), key as usize);
}

/// `MemtableFlushWriter` in `Engine::pools` (`nodetool tpstats`): while a flush hangs it is
/// active, and a write that must wait for memtable space is blocked; once the flushes go
/// through, nothing is, and the pool counts what it did.
#[test]
fn the_flush_pool_shows_a_hanging_flush_and_a_blocked_write() {
    let dir = tempfile::tempdir().unwrap();
    let (probe, _clock, engine) = with_hanging_flushes(dir.path(), 16 << 10, 8 << 10);
    let _opens = OpenOnDrop(&probe);
    let engine = Arc::new(engine);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 60));
    let flush_pool = |engine: &Engine| {
        engine
            .pools()
            .into_iter()
            .find(|p| p.name == "MemtableFlushWriter")
            .unwrap()
    };
    let mut key = 0u32;
    while !engine.writes_would_wait() {
        engine
            .apply(insert(spec.id, key, 0, b"value", START_MICROS))
            .unwrap();
        key += 1;
    }
    let blocked = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            engine
                .apply(insert(spec.id, key, 0, b"value", START_MICROS))
                .unwrap()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30); // layering: allowed (a test's deadline)
    let waiting = loop {
        let pool = flush_pool(&engine);
        if pool.blocked == 1 {
            break pool;
        }
        let now = std::time::Instant::now(); // layering: allowed (a test's deadline)
        assert!(now < deadline, "the write never waited: {pool:?}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert_eq!(waiting.active, 1, "the hanging flush: {waiting:?}");
    assert_eq!(waiting.active_limit, Some(1));
    assert_eq!(waiting.blocked_all_time, 1);
    probe.gate.open();
    blocked.join().unwrap();
    let after = flush_pool(&engine);
    assert_eq!(after.blocked, 0, "{after:?}");
    assert_eq!(after.blocked_all_time, 1);
    assert!(after.completed >= 1, "{after:?}");
}

/// An engine whose flushes hang until `probe.gate.open()`: SSTable data files cannot be
/// created, as on a disk that cannot keep up. Flushes run on the engine's own thread, as in a
/// node (without it the writer flushes).
fn with_hanging_flushes(
    dir: &std::path::Path,
    flush_size: usize,
    space: usize,
) -> (Arc<SyncProbeFs>, Arc<ManualClock>, Engine) {
    let probe = Arc::new(SyncProbeFs::default());
    probe.gate.close("Data");
    let fs: Arc<dyn FileSystem> = probe.clone();
    let clock = manual_clock();
    let mut cfg = config(dir, &clock, periodic());
    cfg.background_threads = true;
    cfg.memtable_flush_size_bytes = flush_size;
    cfg.memtable_space_bytes = space;
    let engine = open(&fs, &cfg);
    (probe, clock, engine)
}

struct OpenOnDrop<'a>(&'a SyncProbeFs);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        self.0.gate.open();
    }
}
