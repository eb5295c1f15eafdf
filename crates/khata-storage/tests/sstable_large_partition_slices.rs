//! A 100,000-row partition: the newest 50 rows (a reversed read) and a slice in the middle
//! read a few chunks through the row index, not the partition.

mod sstable_support;

use std::sync::Arc;

use bytes::Bytes;
use khata_storage::sstable::{BlockCache, SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{XorShift, collect, fs, simple_row, write};

const ROWS: u64 = 100_000;

fn clustering(i: u64) -> Bytes {
    Bytes::copy_from_slice(&i.to_be_bytes())
}

#[test]
fn reversed_read_of_the_newest_rows_touches_a_few_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0x5eed);
    let mut big = Partition::new();
    for i in 0..ROWS {
        big.add_row(clustering(i), simple_row(i as i64, rng.bytes(200)));
    }
    let key = DecoratedKey::new(Bytes::from_static(b"huge"));
    let mut small = Partition::new();
    small.add_row(clustering(1), simple_row(1, Bytes::from_static(b"x")));
    let neighbours = [
        DecoratedKey::new(Bytes::from_static(b"a")),
        DecoratedKey::new(Bytes::from_static(b"z")),
    ];
    let mut list = vec![(key.clone(), big.clone())];
    list.extend(neighbours.iter().map(|k| (k.clone(), small.clone())));
    write(dir.path(), 1, &list, WriterOptions::default());

    let table = SsTable::open(fs(), dir.path(), 1, Arc::new(BlockCache::new(64 << 20))).unwrap();
    let total_chunks = table.stats().uncompressed_data_size_bytes / (16 * 1024);
    assert!(
        total_chunks > 1000,
        "the partition spans {total_chunks} chunks"
    );

    let before = table.chunk_reads();
    let reader = table
        .read(&key, &[khata_types::clustering::full_range()], true)
        .unwrap()
        .unwrap();
    let newest: Vec<(Bytes, _)> = reader.rows.take(50).collect::<Result<_, _>>().unwrap();
    let read = table.chunk_reads() - before;
    let expected: Vec<Bytes> = (ROWS - 50..ROWS).rev().map(clustering).collect();
    assert_eq!(
        newest.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(),
        expected
    );
    for (c, row) in &newest {
        assert_eq!(Some(row), big.rows.get(c));
    }
    eprintln!("reversed read of the newest 50 rows: {read} chunks of {total_chunks}");
    assert!(
        read <= 12,
        "reversed read of 50 rows read {read} chunks of {total_chunks}"
    );

    // A slice in the middle, forwards and reversed.
    let range = (clustering(50_000), clustering(50_100));
    for reversed in [false, true] {
        let before = table.chunk_reads();
        let (got, order) = collect(
            table
                .read(&key, std::slice::from_ref(&range), reversed)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let read = table.chunk_reads() - before;
        assert_eq!(got.rows.len(), 100);
        let mut want: Vec<Bytes> = (50_000..50_100).map(clustering).collect();
        if reversed {
            want.reverse();
        }
        assert_eq!(order, want);
        eprintln!("slice of 100 rows (reversed: {reversed}): {read} chunks");
        assert!(read <= 12, "slice read {read} chunks");
    }
}
