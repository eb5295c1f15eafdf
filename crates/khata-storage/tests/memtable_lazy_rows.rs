//! A memtable read that may stop early copies rows lazily, a batch at a time
//! (`Memtable::read_lazily`); whatever the batch size, direction and ranges, it returns exactly
//! the rows, range tombstones, static row and deletion that slicing the whole partition would.

mod engine_support;

use std::sync::Arc;

use bytes::Bytes;
use engine_support::{ck, ck_int, insert_update, pk, value};
use khata_storage::memtable::{Memtable, slice_partition};
use khata_types::DeletionTime;
use khata_types::partition::Partition;
use proptest::prelude::*;

struct Holder(Memtable);

impl AsRef<Memtable> for Holder {
    fn as_ref(&self) -> &Memtable {
        &self.0
    }
}

/// Sorted, disjoint ranges from sorted cut points, pairing them up.
fn ranges_of(mut cuts: Vec<u32>) -> Vec<(Bytes, Bytes)> {
    cuts.sort_unstable();
    cuts.dedup();
    cuts.chunks_exact(2).map(|w| (ck(w[0]), ck(w[1]))).collect()
}

proptest! {
    #[test]
    fn lazy_rows_equal_the_slice(
        rows in proptest::collection::btree_set(0u32..80, 0..60),
        cuts in proptest::collection::vec(0u32..90, 0..8),
        tombstone in proptest::option::of((0u32..80, 1u32..20)),
        first_batch in 1usize..9,
        reversed in any::<bool>(),
    ) {
        let memtable = Arc::new(Holder(Memtable::new()));
        let key = pk(7);
        let mut whole = Partition::new();
        for &c in &rows {
            let update = insert_update(c, &value(u64::from(c), 8), 10, None);
            whole.merge(update.clone());
            memtable.0.apply(&key, update);
        }
        if let Some((start, len)) = tombstone {
            let mut update = Partition::new();
            update.range_tombstones.add(ck(start), ck(start + len), DeletionTime::new(5, 100));
            whole.merge(update.clone());
            memtable.0.apply(&key, update);
        }
        // The memtable counts its rows as writes add them.
        prop_assert_eq!(memtable.0.row_count(), whole.rows.len());
        let ranges = ranges_of(cuts);
        let expected = slice_partition(&whole, &ranges);
        let got = Memtable::read_lazily(memtable.clone(), &key, &ranges, reversed, first_batch);
        if whole.is_empty() {
            prop_assert!(got.is_none());
            return Ok(());
        }
        let got = got.expect("the partition is in the memtable");
        prop_assert_eq!(got.deletion, expected.deletion);
        prop_assert_eq!(&got.static_row, &expected.static_row);
        prop_assert_eq!(&got.range_tombstones, &expected.range_tombstones);
        let got_rows: Vec<u32> = got.rows.map(|(k, _)| ck_int(&k)).collect();
        let mut want: Vec<u32> = expected.rows.keys().map(|k| ck_int(k)).collect();
        if reversed {
            want.reverse();
        }
        prop_assert_eq!(got_rows, want);
    }
}

/// Rows written between two batches: what was there is returned once, in order, and a row
/// written ahead of the reader is seen.
#[test]
fn writes_between_batches_keep_order_and_lose_nothing() {
    let memtable = Arc::new(Holder(Memtable::new()));
    let key = pk(1);
    for c in (0..40).step_by(2) {
        memtable.0.apply(&key, insert_update(c, b"v", 1, None));
    }
    let ranges = vec![(ck(0), ck(1000))];
    for reversed in [false, true] {
        let mut rows = Memtable::read_lazily(memtable.clone(), &key, &ranges, reversed, 2)
            .expect("present")
            .rows;
        let first: Vec<u32> = rows.by_ref().take(3).map(|(k, _)| ck_int(&k)).collect();
        // One row behind the reader, one ahead of it.
        let (behind, ahead) = if reversed { (39, 1) } else { (1, 39) };
        memtable.0.apply(&key, insert_update(behind, b"w", 2, None));
        memtable.0.apply(&key, insert_update(ahead, b"w", 2, None));
        let rest: Vec<u32> = rows.map(|(k, _)| ck_int(&k)).collect();
        let all: Vec<u32> = first.into_iter().chain(rest).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        if reversed {
            sorted.reverse();
        }
        assert_eq!(all, sorted, "in order, no duplicates ({reversed})");
        assert!(all.contains(&ahead), "the row ahead is seen ({reversed})");
        for c in (0..40).step_by(2) {
            assert!(all.contains(&c), "row {c} returned ({reversed})");
        }
    }
}

/// A limited read of a wide memtable partition copies about the limit, not the partition.
#[test]
fn a_limited_read_copies_a_batch() {
    let memtable = Arc::new(Holder(Memtable::new()));
    let key = pk(2);
    for c in 0..5000 {
        memtable.0.apply(&key, insert_update(c, b"v", 1, None));
    }
    let ranges = vec![(ck(0), ck(u32::MAX >> 1))];
    let mut rows = Memtable::read_lazily(memtable.clone(), &key, &ranges, true, 51)
        .expect("present")
        .rows;
    let newest: Vec<u32> = rows.by_ref().take(50).map(|(k, _)| ck_int(&k)).collect();
    assert_eq!(newest, (4950..5000).rev().collect::<Vec<_>>());
    // The 51 rows of the first batch were copied, not the 4,949 left.
    let state = format!("{rows:?}");
    assert!(state.contains("exhausted: false"), "{state}");
    assert_eq!(rows.count(), 4950);
}
