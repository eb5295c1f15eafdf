//! One SSTable read by many threads at once through a small shared block cache (so entries are
//! evicted while others read them) returns the right data to every thread.

mod sstable_support;

use std::sync::Arc;

use bytes::Bytes;
use khata_storage::sstable::{BlockCache, SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{XorShift, collect, fs, simple_row, write};

#[test]
fn concurrent_readers_see_the_data_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(7);
    let mut list: Vec<(DecoratedKey, Partition)> = (0..200u32)
        .map(|i| {
            let mut p = Partition::new();
            for r in 0..(1 + i % 40) {
                p.add_row(
                    Bytes::copy_from_slice(&r.to_be_bytes()),
                    simple_row(1, rng.bytes(64)),
                );
            }
            (DecoratedKey::new(Bytes::from(format!("k{i}"))), p)
        })
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    let options = WriterOptions {
        chunk_length_bytes: 1024,
        row_index_interval_bytes: 512,
        ..WriterOptions::default()
    };
    write(dir.path(), 1, &list, options);
    let cache = Arc::new(BlockCache::new(64 * 1024));
    let table = SsTable::open(fs(), dir.path(), 1, cache.clone()).unwrap();
    let list = Arc::new(list);

    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let (table, list) = (table.clone(), list.clone());
            std::thread::spawn(move || {
                let mut rng = XorShift(t + 1);
                for _ in 0..2_000 {
                    let (key, want) = &list[(rng.next() % list.len() as u64) as usize];
                    let reversed = rng.next().is_multiple_of(2);
                    let range = khata_types::clustering::full_range();
                    let reader = table.read(key, &[range], reversed).unwrap().unwrap();
                    let (got, _) = collect(reader).unwrap();
                    assert_eq!(&got, want);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let stats = cache.stats();
    assert!(stats.size_bytes <= stats.capacity_bytes);
    assert!(stats.evictions > 0 && stats.hits > 0);
}
