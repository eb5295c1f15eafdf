//! Time-window compaction through the engine: each past window ends as one SSTable, and once
//! everything in a window has expired and `gc_grace_seconds` has passed, its SSTable is
//! deleted as one file, without being read or rewritten, and reads do not change.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, ManualClock, RealFs};
use khata_storage::Engine;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const HOUR: u32 = 3600;
const GC_GRACE: u32 = 3600;
/// Window 0 starts here (seconds, a multiple of an hour).
const W0: u32 = 1_700_002_800;
const FLUSHES_PER_WINDOW: u32 = 3;
const PER_FLUSH: u32 = 30;
/// Window 0's data lives 90 minutes, window 1's ten hours, window 2's forever.
const TTLS: [Option<u32>; 3] = [Some(5400), Some(36_000), None];

fn set_time(clock: &ManualClock, seconds: u32) {
    clock.set_micros(i64::from(seconds) * MICROS_PER_SECOND);
}

/// Write window `w`: three flushes a minute apart, starting a minute into the window.
fn write_window(engine: &Engine, table: Uuid, clock: &ManualClock, w: u32, model: &mut Content) {
    for f in 0..FLUSHES_PER_WINDOW {
        let t = W0 + w * HOUR + 60 + f * 60;
        set_time(clock, t);
        for i in 0..PER_FLUSH {
            let k = w * 1000 + f * PER_FLUSH + i;
            let v = value(u64::from(k), 100);
            let ts = i64::from(t) * MICROS_PER_SECOND + i64::from(i);
            let m = match TTLS[w as usize] {
                Some(ttl) => insert_ttl(table, k, 0, &v, ts, ttl, t),
                None => insert(table, k, 0, &v, ts),
            };
            engine.apply(m).unwrap();
            model.insert((k, 0), v.into());
        }
        engine.flush(table).unwrap();
    }
}

/// Live SSTables by the window of their newest write: window index -> generations.
fn windows(engine: &Engine, table: Uuid) -> BTreeMap<i64, Vec<u64>> {
    let mut out: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
    for s in engine.sstables(table).unwrap() {
        let newest = s.stats().max_timestamp.unwrap() / MICROS_PER_SECOND;
        let w = (newest - i64::from(W0)).div_euclid(i64::from(HOUR));
        out.entry(w).or_default().push(s.generation());
    }
    for g in out.values_mut() {
        g.sort_unstable();
    }
    out
}

fn all_keys() -> Vec<u32> {
    (0..3)
        .flat_map(|w| (0..FLUSHES_PER_WINDOW * PER_FLUSH).map(move |i| w * 1000 + i))
        .collect()
}

#[test]
fn past_windows_compact_to_one_sstable_and_expired_windows_are_dropped_whole() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    set_time(&clock, W0);
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let strategy = CompactionStrategy::TimeWindow {
        window_size_seconds: u64::from(HOUR),
    };
    let spec = create_table(&engine, options(strategy, GC_GRACE));
    let table = spec.id;
    let mut model = Content::new();

    // Window 0: three SSTables, and it is the newest window with fewer than four: no work.
    write_window(&engine, table, &clock, 0, &mut model);
    assert!(engine.compact_pending(table).unwrap().is_empty());
    assert_eq!(windows(&engine, table)[&0].len(), 3);

    // Window 1: now window 0 is in the past, and is merged into one SSTable.
    write_window(&engine, table, &clock, 1, &mut model);
    let w0_inputs = windows(&engine, table)[&0].clone();
    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].inputs, w0_inputs);
    assert_eq!(outcomes[0].outputs.len(), 1);

    // Window 2 (data without TTL): window 1 is merged too; window 2 is left as it is.
    write_window(&engine, table, &clock, 2, &mut model);
    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(!outcomes[0].dropped_whole);
    let layout = windows(&engine, table);
    assert_eq!(layout.len(), 3);
    assert_eq!(layout[&0].len(), 1);
    assert_eq!(layout[&1].len(), 1);
    assert_eq!(layout[&2].len(), 3);
    let w0_sstable = layout[&0][0];

    // Window 0's newest write (at W0 + 180 s) expires at W0 + 5580 s; it is gone from reads
    // from then on, but its SSTable may only be dropped gc_grace later: after W0 + 9180 s.
    let last_expiry = W0 + 180 + 5400;
    let expect_at = |t: u32| -> Content {
        model
            .iter()
            .filter(|((k, _), _)| *k >= 1000 || t < last_expiry)
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    };
    set_time(&clock, last_expiry + GC_GRACE);
    let before = read_keys(&engine, table, all_keys(), now(&clock));
    assert_eq!(before, expect_at(now(&clock)));
    assert_eq!(dump(&engine, table, now(&clock)), before);
    assert!(
        engine.compact_pending(table).unwrap().is_empty(),
        "dropped before gc_grace_seconds had passed"
    );
    assert_eq!(windows(&engine, table), layout);

    set_time(&clock, last_expiry + GC_GRACE + 1);
    let data_file = table_dir(dir.path(), &spec).join(format!("khata-{w0_sstable}-Data.db"));
    assert!(data_file.exists());
    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    let dropped = &outcomes[0];
    assert!(dropped.dropped_whole);
    assert_eq!(dropped.inputs, vec![w0_sstable]);
    assert!(dropped.outputs.is_empty());
    assert_eq!(dropped.bytes_read, 0, "an expired SSTable was read");
    assert_eq!(dropped.bytes_written, 0, "an expired SSTable was rewritten");
    assert!(
        !data_file.exists(),
        "the dropped SSTable's files are still there"
    );
    let mut rest = layout.clone();
    rest.remove(&0);
    assert_eq!(windows(&engine, table), rest, "other windows were touched");

    assert_eq!(
        read_keys(&engine, table, all_keys(), now(&clock)),
        before,
        "reads changed when the expired window was dropped"
    );
    assert_eq!(dump(&engine, table, now(&clock)), before);
    assert!(engine.compact_pending(table).unwrap().is_empty());
}
