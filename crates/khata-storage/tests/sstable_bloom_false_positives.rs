//! The Bloom filter answers "maybe" for every key written and for about 1 % of absent keys.

mod sstable_support;

use bytes::Bytes;
use khata_storage::sstable::WriterOptions;
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{simple_row, write};

const KEYS: u64 = 100_000;

fn key(prefix: &str, i: u64) -> DecoratedKey {
    DecoratedKey::new(Bytes::from(format!("{prefix}-{i}")))
}

#[test]
fn false_positive_rate_is_near_one_percent() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    p.add_row(Bytes::new(), simple_row(1, Bytes::from_static(b"v")));
    let list: Vec<_> = (0..KEYS).map(|i| (key("present", i), p.clone())).collect();
    let options = WriterOptions {
        expected_partitions: KEYS,
        ..WriterOptions::default()
    };
    let table = write(dir.path(), 1, &list, options);

    assert!(
        list.iter().all(|(k, _)| table.may_contain(k)),
        "a false negative"
    );
    let false_positives = (0..KEYS)
        .filter(|&i| table.may_contain(&key("absent", i)))
        .count();
    let rate = false_positives as f64 / KEYS as f64;
    assert!((0.005..0.015).contains(&rate), "false-positive rate {rate}");
    // The absent keys that pass the filter are still not found.
    for i in 0..1000 {
        assert!(
            table
                .read(
                    &key("absent", i),
                    &[khata_types::clustering::full_range()],
                    false
                )
                .unwrap()
                .is_none()
        );
    }
}
