//! An SSTable marked obsolete (replaced by compaction) stays readable while anyone holds it
//! and its files are deleted when the last reference drops.

mod sstable_support;

use bytes::Bytes;
use khata_storage::sstable::{SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{fs, simple_row, write};

#[test]
fn files_go_when_the_last_reader_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    p.add_row(Bytes::new(), simple_row(1, Bytes::from_static(b"v")));
    let list = vec![(DecoratedKey::new(Bytes::from_static(b"k")), p)];
    let table = write(dir.path(), 2, &list, WriterOptions::default());
    let paths = table.component_paths();
    assert_eq!(paths.len(), 7);
    assert!(paths.iter().all(|p| p.exists()));

    let scanner = table.scan(None).unwrap();
    table.mark_obsolete();
    drop(table);
    assert!(
        paths.iter().all(|p| p.exists()),
        "deleted while a scanner holds it"
    );
    let got: Vec<_> = scanner.collect::<Result<_, _>>().unwrap();
    assert_eq!(got, list);
    assert!(paths.iter().all(|p| !p.exists()));
    assert!(
        SsTable::list_generations(&*fs(), dir.path())
            .unwrap()
            .is_empty()
    );
}
