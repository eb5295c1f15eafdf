//! The read merge's single-source path (`merge_single`, and `merge_partition` when only one
//! source has rows) answers exactly as the general k-way merge does: for random partitions,
//! slices, directions, row limits and read times, from memory and from an SSTable (through a
//! boxed row stream and through a borrowed read, `merge_single_rows`).

mod sstable_support;

use bytes::Bytes;
use khata_storage::read::{
    ReadLimits, ReadResult, SourcePartition, merge_partition, merge_single, merge_single_rows,
};
use khata_storage::sstable::{WriterOptions, check_ranges};
use khata_types::schema::Compression;
use khata_types::token::DecoratedKey;
use khata_types::{LocalTime, Partition};
use proptest::prelude::*;
use sstable_support::{partition, ranges, slice, write};

/// Everything a read answers, in a comparable form.
fn answer(r: ReadResult) -> (Partition, usize, usize, bool, Vec<String>) {
    (
        r.partition,
        r.tombstones_scanned,
        r.live_rows,
        r.limit_reached,
        r.warnings,
    )
}

fn source(p: &Partition, reversed: bool) -> SourcePartition {
    SourcePartition::from_partition(p.clone(), reversed)
}

/// The partition's partition-level parts and every other row in one half, the other rows in
/// the other: two sources whose join is the partition.
fn split(p: &Partition) -> (Partition, Partition) {
    let mut a = Partition {
        deletion: p.deletion,
        static_row: p.static_row.clone(),
        range_tombstones: p.range_tombstones.clone(),
        ..Partition::default()
    };
    let mut b = Partition::default();
    for (i, (c, r)) in p.rows.iter().enumerate() {
        let half = if i % 2 == 0 { &mut a } else { &mut b };
        half.rows.insert(c.clone(), r.clone());
    }
    (a, b)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_single_source_path_answers_as_the_merge_does(
        p in partition(),
        slices in ranges(),
        reversed in any::<bool>(),
        limit in prop::option::of(1usize..12),
        now in 0u32..2_000,
        warn in 0usize..8,
        chunk in 256u32..2048,
        interval in 32u32..600,
    ) {
        let now: LocalTime = now;
        let limits = ReadLimits {
            row_limit: limit,
            tombstone_warn_threshold: warn,
            tombstone_failure_threshold: 100_000,
            tombstone_page_limit: None,
        };
        let sliced = slice(&p, &slices);
        let (a, b) = split(&sliced);
        // The general merge: two sources with rows (or one with none), through the heap.
        let general = answer(
            merge_partition(vec![source(&a, reversed), source(&b, reversed)], reversed, now, limits)
                .unwrap(),
        );
        let single = merge_single(source(&sliced, reversed), reversed, now, limits).unwrap();
        prop_assert_eq!(&answer(single), &general);
        let one = merge_partition(vec![source(&sliced, reversed)], reversed, now, limits).unwrap();
        let one = answer(one);
        prop_assert_eq!(&one, &general);
        let with_empty = answer(
            merge_partition(
                vec![source(&Partition::default(), reversed), source(&sliced, reversed)],
                reversed,
                now,
                limits,
            )
            .unwrap(),
        );
        prop_assert_eq!(&with_empty, &general);

        // The same partition read from an SSTable (small chunks and blocks, so that rows
        // straddle chunks and reads cross blocks) through the single-source path.
        if !p.is_empty() {
            let dir = tempfile::tempdir().unwrap();
            let key = DecoratedKey::new(Bytes::from_static(b"k"));
            let options = WriterOptions {
                compression: Compression::Lz4,
                chunk_length_bytes: chunk,
                row_index_interval_bytes: interval,
                expected_partitions: 1,
                ..WriterOptions::default()
            };
            let table = write(dir.path(), 1, &[(key.clone(), p.clone())], options);
            let r = table.read(&key, &slices, reversed).unwrap().unwrap();
            let from_disk = SourcePartition {
                deletion: r.deletion,
                static_row: r.static_row,
                range_tombstones: r.range_tombstones,
                rows: r.rows,
            };
            let got = answer(merge_single(from_disk, reversed, now, limits).unwrap());
            prop_assert_eq!(&got, &general);

            // And through the borrowed read (no boxed stream, ranges not copied), as a read
            // that finds the partition in one SSTable alone takes it.
            let checked = check_ranges(&slices).unwrap();
            let b = table.read_borrowed(&key, &checked, reversed).unwrap().unwrap();
            let borrowed = merge_single_rows(
                b.deletion,
                b.static_row,
                &b.range_tombstones,
                b.rows,
                reversed,
                now,
                limits,
            )
            .unwrap();
            prop_assert_eq!(&answer(borrowed), &general);
        }
    }
}
