//! Random sorted partitions written to an SSTable read back exactly: whole, by random
//! clustering slices forwards and reversed, and by a full scan.

mod sstable_support;

use std::collections::BTreeMap;

use bytes::Bytes;
use khata_storage::sstable::WriterOptions;
use khata_types::Partition;
use khata_types::clustering::full_range;
use khata_types::schema::Compression;
use khata_types::token::DecoratedKey;
use proptest::prelude::*;
use sstable_support::{collect, partition, ranges, slice, write};

fn options(compressed: bool, chunk: u32, interval: u32) -> WriterOptions {
    WriterOptions {
        compression: if compressed {
            Compression::Lz4
        } else {
            Compression::None
        },
        chunk_length_bytes: chunk,
        row_index_interval_bytes: interval,
        expected_partitions: 16,
        ..WriterOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn partitions_read_back_whole_and_sliced(
        input in prop::collection::btree_map(prop::collection::vec(any::<u8>(), 0..6), partition(), 1..12),
        slices in prop::collection::vec(ranges(), 4),
        compressed in any::<bool>(),
        chunk in 256u32..2048,
        interval in 32u32..600,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let partitions: BTreeMap<DecoratedKey, Partition> = input
            .into_iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(k, p)| (DecoratedKey::new(k), p))
            .collect();
        let list: Vec<_> = partitions.clone().into_iter().collect();
        let table = write(dir.path(), 1, &list, options(compressed, chunk, interval));
        prop_assert_eq!(table.stats().partition_count, partitions.len() as u64);

        for (key, expected) in &partitions {
            prop_assert!(table.may_contain(key));
            let whole = [full_range()];
            let (got, _) = collect(table.read(key, &whole, false).unwrap().unwrap()).unwrap();
            prop_assert_eq!(&got, &slice(expected, &whole));
            for ranges in &slices {
                let want = slice(expected, ranges);
                let (got, order) = collect(table.read(key, ranges, false).unwrap().unwrap()).unwrap();
                prop_assert_eq!(&got, &want);
                let ascending: Vec<Bytes> = want.rows.keys().cloned().collect();
                prop_assert_eq!(&order, &ascending);
                let (got, order) = collect(table.read(key, ranges, true).unwrap().unwrap()).unwrap();
                prop_assert_eq!(&got, &want);
                let descending: Vec<Bytes> = want.rows.keys().rev().cloned().collect();
                prop_assert_eq!(&order, &descending);
            }
        }
        let absent = DecoratedKey::new(Bytes::from_static(b"not a generated key"));
        if !partitions.contains_key(&absent) {
            prop_assert!(table.read(&absent, &[full_range()], false).unwrap().is_none());
        }
        let scanned: Vec<(DecoratedKey, Partition)> =
            table.scan(None).unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(scanned, list);
    }
}
