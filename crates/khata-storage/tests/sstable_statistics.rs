//! The Statistics component describes exactly what was written.

mod sstable_support;

use std::sync::Arc;

use bytes::Bytes;
use khata_storage::sstable::{BlockCache, SsTable, WriterOptions};
use khata_types::cell::Cell;
use khata_types::token::DecoratedKey;
use khata_types::{CellKey, DeletionTime, LivenessInfo, Partition, RangeTombstoneList, Row};
use sstable_support::{fs, write};

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn partitions() -> Vec<(DecoratedKey, Partition)> {
    // Partition 1: a partition deletion, a range tombstone, a row deletion, and cells.
    let mut p1 = Partition::new();
    p1.merge(Partition {
        deletion: Some(DeletionTime::new(5, 1_000)),
        ..Default::default()
    });
    let mut rts = RangeTombstoneList::new();
    rts.add(b("c"), b("e"), DeletionTime::new(20, 1_100));
    p1.merge(Partition {
        range_tombstones: rts,
        ..Default::default()
    });
    let mut row = Row {
        liveness: Some(LivenessInfo::new(30, None)),
        ..Row::default()
    };
    row.cells.insert(CellKey::simple(1), Cell::live(30, b("v")));
    row.cells
        .insert(CellKey::simple(2), Cell::tombstone(31, 1_200));
    p1.add_row(b("b"), row);
    let deleted = Row {
        deletion: Some(DeletionTime::new(40, 1_300)),
        ..Row::default()
    };
    p1.add_row(b("x"), deleted);

    // Partition 2: an expiring cell and a collection deletion in the static row.
    let mut p2 = Partition::new();
    let mut stat = Row::default();
    stat.column_deletions.insert(7, DeletionTime::new(8, 900));
    stat.cells.insert(
        CellKey::element(7, b("k")),
        Cell::expiring(9, b("v"), 60, 5_000),
    );
    p2.merge(Partition {
        static_row: stat,
        ..Default::default()
    });
    let mut row = Row::default();
    row.cells.insert(
        CellKey::simple(1),
        Cell::expiring(50, Bytes::from(vec![7u8; 3000]), 100, 6_000),
    );
    p2.add_row(b("a"), row);

    vec![
        (DecoratedKey::new(b("one")), p1),
        (DecoratedKey::new(b("two")), p2),
    ]
}

#[test]
fn statistics_match_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let list = partitions();
    let options = WriterOptions {
        level: 3,
        ..WriterOptions::default()
    };
    write(dir.path(), 4, &list, options);
    let table = SsTable::open(fs(), dir.path(), 4, Arc::new(BlockCache::new(1 << 20))).unwrap();
    let s = table.stats();

    assert_eq!(s.partition_count, 2);
    assert_eq!(s.row_count, 3);
    assert_eq!(s.cell_count, 4);
    assert_eq!((s.min_timestamp, s.max_timestamp), (Some(5), Some(50)));
    assert_eq!(
        (s.min_local_deletion_time, s.max_local_deletion_time),
        (Some(900), Some(1_300))
    );
    assert_eq!(s.max_expiry_time, Some(6_000));
    assert!(s.has_non_expiring_data);
    assert_eq!(s.all_dead_after(), None);
    assert_eq!(
        (
            s.partition_tombstones,
            s.range_tombstones,
            s.row_tombstones,
            s.collection_tombstones,
            s.cell_tombstones
        ),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(s.tombstone_count(), 5);
    assert_eq!(s.expiring_cells, 2);
    assert_eq!(s.min_clustering, Some(b("a")));
    assert_eq!(s.max_clustering, Some(b("x")));
    let mut keys: Vec<DecoratedKey> = list.iter().map(|(k, _)| k.clone()).collect();
    keys.sort();
    assert_eq!(s.first_key.as_ref(), keys.first());
    assert_eq!(s.last_key.as_ref(), keys.last());
    assert_eq!(s.level, 3);
    assert_eq!(s.partition_size_histogram.iter().sum::<u64>(), 2);
    // The partition with the 3000-byte value is the largest and lands in the 2048..4096 bucket.
    assert_eq!(s.largest_partitions.len(), 2);
    assert_eq!(s.largest_partitions[0].0, DecoratedKey::new(b("two")));
    assert!((3000..4096).contains(&s.largest_partitions[0].1));
    assert_eq!(s.partition_size_histogram[11], 1);
    assert!(s.largest_partitions[1].1 < s.largest_partitions[0].1);
    let data_len = std::fs::metadata(&table.component_paths()[0])
        .unwrap()
        .len();
    assert_eq!(s.data_size_bytes, data_len);
    assert!(s.uncompressed_data_size_bytes > 3000);
}

#[test]
fn an_sstable_of_expiring_data_reports_when_it_is_all_dead() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    let mut row = Row {
        liveness: Some(LivenessInfo::new(
            1,
            Some(khata_types::cell::Expiry::new(10, 700)),
        )),
        ..Row::default()
    };
    row.cells
        .insert(CellKey::simple(1), Cell::expiring(1, b("v"), 10, 800));
    row.cells
        .insert(CellKey::simple(2), Cell::tombstone(2, 750));
    p.add_row(b("r"), row);
    let table = write(
        dir.path(),
        1,
        &[(DecoratedKey::new(b("k")), p)],
        WriterOptions::default(),
    );
    let s = table.stats();
    assert!(!s.has_non_expiring_data);
    assert_eq!(s.max_expiry_time, Some(800));
    assert_eq!(s.all_dead_after(), Some(800));
}
