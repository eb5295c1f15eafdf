//! Index pages a point read loads are held by the SSTable (not in the block cache) and counted
//! in its memory: a held page is not read from the Index file again, a page no point read has
//! touched is, and a scan reads pages without holding them.

mod sstable_support;

use std::io::{Seek, SeekFrom, Write};

use bytes::Bytes;
use khata_storage::StorageError;
use khata_storage::sstable::{SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::clustering::full_range;
use khata_types::token::{DecoratedKey, Token};
use sstable_support::{cache, collect, fs, simple_row, write};

fn key(i: i64) -> DecoratedKey {
    DecoratedKey {
        token: Token(i * 1_000),
        key: Bytes::from(format!("partition-{i:05}")),
    }
}

#[test]
fn point_reads_hold_index_pages_and_scans_do_not() {
    let dir = tempfile::tempdir().unwrap();
    // Enough partitions for several index pages (at most 128 entries each).
    let partitions: Vec<(DecoratedKey, Partition)> = (0..1_000)
        .map(|i| {
            let mut p = Partition::new();
            p.add_row(Bytes::from_static(b"\x02r"), simple_row(1, format!("v{i}")));
            (key(i), p)
        })
        .collect();
    write(dir.path(), 1, &partitions, WriterOptions::default());
    let table = SsTable::open(fs(), dir.path(), 1, cache()).unwrap();
    assert_eq!(table.index_pages_bytes(), 0);
    let before = table.memory_bytes();

    let scanned = table.scan(None).unwrap().count();
    assert_eq!(scanned, partitions.len());
    assert_eq!(table.index_pages_bytes(), 0, "a scan holds no page");

    let read = |i: i64| {
        let reader = table.read(&key(i), &[full_range()], false)?;
        Ok::<_, StorageError>(collect(reader.expect("the partition is there"))?.0)
    };
    assert_eq!(read(0).unwrap(), partitions[0].1);
    let one_page = table.index_pages_bytes();
    assert!(one_page > 0);
    assert_eq!(table.memory_bytes(), before + one_page);
    assert_eq!(read(1).unwrap(), partitions[1].1);
    assert_eq!(
        table.index_pages_bytes(),
        one_page,
        "the same page, held once"
    );

    // Damage every byte of the Index file in place: the held page still serves reads, a page
    // never read is read from the file and fails its checksum.
    let index = dir.path().join("khata-1-Index.db");
    let length = std::fs::metadata(&index).unwrap().len();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&vec![0x5a; length as usize]).unwrap();
    file.sync_all().unwrap();
    assert_eq!(read(2).unwrap(), partitions[2].1);
    match read(999) {
        Err(StorageError::Corrupt { path, .. }) => assert_eq!(path, index),
        other => panic!("expected a corrupt index page, got {other:?}"),
    }
    assert_eq!(
        table.index_pages_bytes(),
        one_page,
        "a failed page is not held"
    );
}
