//! SSTables written by format versions 1, 2 and 3 (committed under `sstable_fixtures/v1`,
//! `sstable_fixtures/v2` and `sstable_fixtures/v3`) are read back exactly by this build: data (whole partitions, point
//! reads, reversed slices, scans), Bloom filter and statistics. If this fails, the format
//! changed: bump `FORMAT_VERSION` and add a fixture instead.
//!
//! Keys carry explicit tokens, so the fixtures do not depend on the partitioner's hash.
//! To write the fixture of the current version (only when adding a version), run the ignored
//! test `write_fixture`.

mod sstable_support;

use std::path::PathBuf;

use bytes::Bytes;
use khata_storage::sstable::{FORMAT_VERSION, SsTable, SsTableWriter, WriterOptions};
use khata_types::cell::{Cell, Expiry};
use khata_types::clustering::{after_prefix, full_range};
use khata_types::schema::Compression;
use khata_types::token::{DecoratedKey, Token};
use khata_types::{CellKey, DeletionTime, LivenessInfo, Partition, RangeTombstoneList, Row};
use sstable_support::{cache, collect, fs};

fn fixture_dir(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/sstable_fixtures/v{version}"))
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn partitions() -> Vec<(DecoratedKey, Partition)> {
    let mut out = Vec::new();
    // A partition with every kind of content.
    let mut p = Partition::new();
    p.merge(Partition {
        deletion: Some(DeletionTime::new(3, 1_000)),
        ..Default::default()
    });
    let mut rts = RangeTombstoneList::new();
    rts.add(b("\x02m"), b("\x02p"), DeletionTime::new(40, 1_100));
    p.merge(Partition {
        range_tombstones: rts,
        ..Default::default()
    });
    let mut stat = Row::default();
    stat.cells
        .insert(CellKey::simple(9), Cell::live(10, b("static")));
    p.merge(Partition {
        static_row: stat,
        ..Default::default()
    });
    let mut row = Row {
        liveness: Some(LivenessInfo::new(20, Some(Expiry::new(60, 2_000)))),
        ..Row::default()
    };
    row.column_deletions.insert(4, DeletionTime::new(15, 1_200));
    row.cells
        .insert(CellKey::element(4, b("k1")), Cell::live(21, b("v1")));
    row.cells
        .insert(CellKey::simple(1), Cell::expiring(22, b("ttl"), 60, 2_001));
    row.cells
        .insert(CellKey::simple(2), Cell::tombstone(23, 1_300));
    p.add_row(b("\x02a"), row);
    p.add_row(
        b("\x02z"),
        Row {
            deletion: Some(DeletionTime::new(50, 1_400)),
            ..Row::default()
        },
    );
    out.push((
        DecoratedKey {
            token: Token(-100),
            key: b("everything"),
        },
        p,
    ));
    // A partition large enough for a row index.
    let mut p = Partition::new();
    for i in 0..60u32 {
        let mut row = Row {
            liveness: Some(LivenessInfo::new(100, None)),
            ..Row::default()
        };
        row.cells.insert(
            CellKey::simple(1),
            Cell::live(100, Bytes::from(format!("value {i:03}"))),
        );
        p.add_row(Bytes::from(format!("\x02r{i:03}")), row);
    }
    out.push((
        DecoratedKey {
            token: Token(7),
            key: b("rows"),
        },
        p,
    ));
    // Partitions that differ only by key under one token.
    for k in ["same-a", "same-b"] {
        let mut p = Partition::new();
        p.add_row(
            Bytes::new(),
            Row {
                liveness: Some(LivenessInfo::new(1, None)),
                ..Row::default()
            },
        );
        out.push((
            DecoratedKey {
                token: Token(i64::MAX),
                key: b(k),
            },
            p,
        ));
    }
    out
}

fn options() -> WriterOptions {
    WriterOptions {
        compression: Compression::Lz4,
        chunk_length_bytes: 256,
        row_index_interval_bytes: 128,
        bloom_fp_chance: 0.01,
        expected_partitions: 4,
        level: 2,
        row_buffer_bytes: 1 << 20,
    }
}

#[test]
#[ignore = "writes the committed fixture; run only when adding a format version"]
fn write_fixture() {
    let dir = fixture_dir(FORMAT_VERSION);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let mut writer = SsTableWriter::create(fs(), &dir, 1, options()).unwrap();
    for (key, partition) in partitions() {
        writer.append(&key, &partition).unwrap();
    }
    writer.finish(cache()).unwrap();
}

#[test]
fn version_1_fixture_reads_back() {
    fixture_reads_back(1);
}

#[test]
fn version_2_fixture_reads_back() {
    fixture_reads_back(2);
}

#[test]
fn version_3_fixture_reads_back() {
    fixture_reads_back(3);
}

fn fixture_reads_back(version: u32) {
    // Copy, so that nothing a reader does can touch the committed files.
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_dir(version)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    assert_eq!(
        SsTable::list_generations(&*fs(), dir.path()).unwrap(),
        vec![1]
    );
    let table = SsTable::open(fs(), dir.path(), 1, cache()).unwrap();
    assert_eq!(table.format_version(), version);
    let expected = partitions();
    for (key, partition) in &expected {
        assert!(table.may_contain(key));
        let (got, _) = collect(table.read(key, &[full_range()], false).unwrap().unwrap()).unwrap();
        assert_eq!(&got, partition);
        let (reversed, _) =
            collect(table.read(key, &[full_range()], true).unwrap().unwrap()).unwrap();
        assert_eq!(&reversed, partition);
        for clustering in partition.rows.keys() {
            let end = after_prefix(clustering);
            let (one, _) = collect(
                table
                    .read(key, &[(clustering.clone(), end)], false)
                    .unwrap()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(one.rows.len(), 1, "row {clustering:?} of {key:?}");
            assert_eq!(one.rows.get(clustering), partition.rows.get(clustering));
        }
    }
    let scanned: Vec<_> = table.scan(None).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(scanned, expected);
    let s = table.stats();
    assert_eq!((s.partition_count, s.row_count, s.level), (4, 64, 2));
    assert_eq!((s.min_timestamp, s.max_timestamp), (Some(1), Some(100)));
    assert_eq!(
        (s.min_local_deletion_time, s.max_local_deletion_time),
        (Some(1_000), Some(1_400))
    );
    assert_eq!(s.max_expiry_time, Some(2_001));
    assert_eq!(s.first_key.as_ref().map(|k| k.token), Some(Token(-100)));
    assert_eq!(
        s.last_key.as_ref().map(|k| k.key.clone()),
        Some(b("same-b"))
    );
}
