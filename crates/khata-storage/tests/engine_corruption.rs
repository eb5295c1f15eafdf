//! Corruption met through the engine is an error naming the damaged file, never a panic or
//! wrong data: a flipped byte in an SSTable's Data chunk or Index fails the reads (and scans,
//! and compactions) that need it while the rest of the table stays readable; a damaged record
//! in the middle of a commit-log segment stops `Engine::open` with an error naming the segment
//! and the offset.

mod engine_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use engine_support::*;
use khata_env::{FaultFs, FileSystem, ManualClock};
use khata_storage::commitlog::SyncMode;
use khata_storage::{Engine, StorageError, TableSpec};
use khata_types::schema::{CompactionStrategy, TableOptions};
use khata_types::token::DecoratedKey;

const PARTITIONS: u32 = 200;

fn data_dir() -> PathBuf {
    PathBuf::from("/node")
}

fn open_on(fs: &FaultFs, clock: &Arc<ManualClock>) -> khata_storage::Result<Engine> {
    let fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    Engine::open(fs, config(&data_dir(), clock, SyncMode::Batch))
}

/// A table of `PARTITIONS` partitions of one 500-byte row, flushed into one SSTable cut into
/// 4 KiB chunks, then the engine closed.
fn flushed_table(fs: &FaultFs, clock: &Arc<ManualClock>) -> (TableSpec, Content) {
    let engine = open_on(fs, clock).unwrap();
    let opts = TableOptions {
        chunk_length_bytes: 4096,
        ..options(CompactionStrategy::size_tiered(), 864_000)
    };
    let spec = create_table(&engine, opts);
    let mut model = Content::new();
    for k in 0..PARTITIONS {
        let v = value(u64::from(k), 500);
        engine
            .apply(insert(spec.id, k, 0, &v, START_MICROS))
            .unwrap();
        model.insert((k, 0), Bytes::from(v));
    }
    engine.flush(spec.id).unwrap();
    assert_eq!(engine.sstables(spec.id).unwrap().len(), 1);
    drop(engine);
    (spec, model)
}

/// Partition ints in token order (the order of the Data component).
fn token_order() -> Vec<u32> {
    let mut keys: Vec<(DecoratedKey, u32)> = (0..PARTITIONS).map(|k| (pk(k), k)).collect();
    keys.sort();
    keys.into_iter().map(|(_, k)| k).collect()
}

fn component(spec: &TableSpec, name: &str) -> PathBuf {
    table_dir(&data_dir(), spec).join(format!("khata-1-{name}.db"))
}

fn assert_corrupt_in(result: khata_storage::Result<Content>, file: &Path, context: &str) {
    match result {
        Err(StorageError::Corrupt { path, .. }) => {
            assert_eq!(path, file, "{context}: the error names another file")
        }
        other => panic!(
            "{context}: wanted Corrupt in {}, got {other:?}",
            file.display()
        ),
    }
}

/// Every read is either exactly right or `Corrupt` naming `file`; returns the partitions that
/// failed.
fn read_all(engine: &Engine, spec: &TableSpec, model: &Content, file: &Path, now: u32) -> Vec<u32> {
    let mut failed = Vec::new();
    for k in 0..PARTITIONS {
        match try_read_partition(engine, spec.id, k, now) {
            Ok(rows) => {
                let want: Content = model
                    .range((k, 0)..(k + 1, 0))
                    .map(|(k, v)| (*k, v.clone()))
                    .collect();
                assert_eq!(rows, want, "partition {k}: wrong data instead of an error");
            }
            Err(e) => {
                assert_corrupt_in(Err(e), file, &format!("partition {k}"));
                failed.push(k);
            }
        }
    }
    failed
}

#[test]
fn a_flipped_byte_in_a_data_chunk_fails_the_reads_of_that_chunk_only() {
    let fs = FaultFs::with_seed(1);
    let clock = manual_clock();
    let (spec, model) = flushed_table(&fs, &clock);
    let data = component(&spec, "Data");
    // On disk a chunk is `kind payload crc`, chunk 0 first: byte 100 is in chunk 0's payload,
    // which holds the first partitions in token order (about 500 bytes each).
    fs.flip_byte(&data, 100).unwrap();

    let engine = open_on(&fs, &clock).unwrap();
    let now = now(&clock);
    let failed = read_all(&engine, &spec, &model, &data, now);
    let order = token_order();
    assert!(
        failed.contains(&order[0]),
        "the first partition read fine: {failed:?}"
    );
    assert!(!failed.contains(&order[order.len() - 1]));
    // 4 KiB chunks of ~520-byte partitions: the damaged chunk holds at most 9 of them.
    assert!(failed.len() <= 9, "{failed:?}");
    assert_corrupt_in(try_dump(&engine, spec.id, now), &data, "a full scan");
    match engine.compact_major(spec.id) {
        Err(StorageError::Corrupt { path, .. }) => assert_eq!(path, data),
        other => panic!("compacting a corrupt SSTable: {other:?}"),
    }
    // The failed compaction removed nothing: the healthy partitions still read.
    assert_eq!(engine.sstables(spec.id).unwrap().len(), 1);
    assert_eq!(read_all(&engine, &spec, &model, &data, now), failed);
}

#[test]
fn a_flipped_byte_in_the_index_fails_the_reads_that_need_it() {
    let fs = FaultFs::with_seed(2);
    let clock = manual_clock();
    let (spec, model) = flushed_table(&fs, &clock);
    let index = component(&spec, "Index");
    fs.flip_byte(&index, 20).unwrap();

    let engine = open_on(&fs, &clock).unwrap();
    let failed = read_all(&engine, &spec, &model, &index, now(&clock));
    assert!(!failed.is_empty(), "no read noticed the damaged index");
}

#[test]
fn a_damaged_commit_log_record_stops_open_naming_the_segment_and_offset() {
    let fs = FaultFs::with_seed(3);
    let clock = manual_clock();
    let engine = open_on(&fs, &clock).unwrap();
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    for k in 0..100 {
        engine
            .apply(insert(
                spec.id,
                k,
                0,
                &value(u64::from(k), 100),
                START_MICROS,
            ))
            .unwrap();
    }
    power_cut(&fs, engine);
    let segment = fs
        .list_files()
        .into_iter()
        .filter(|p| p.starts_with(data_dir().join("commitlog")))
        .max_by_key(|p| fs.contents(p).map_or(0, |c| c.len()))
        .unwrap();
    // Segments are preallocated: the records are followed by zeros up to the segment's size.
    let bytes = fs.contents(&segment).unwrap();
    let records_end = bytes.iter().rposition(|&b| b != 0).unwrap() as u64 + 1;
    let middle = records_end / 2;
    fs.flip_byte(&segment, middle).unwrap();

    match open_on(&fs, &clock) {
        Err(StorageError::Corrupt { path, offset, .. }) => {
            assert_eq!(path, segment, "the error names another file");
            assert!(
                offset > 0 && offset <= middle,
                "offset {offset} is not the damaged record's (byte {middle} was flipped)"
            );
        }
        Err(other) => panic!("wanted Corrupt naming {}, got {other:?}", segment.display()),
        Ok(_) => panic!("opened over a damaged commit-log record"),
    }
    // Opening again fails the same way (nothing was cut or rewritten).
    assert!(matches!(
        open_on(&fs, &clock),
        Err(StorageError::Corrupt { .. })
    ));
}
