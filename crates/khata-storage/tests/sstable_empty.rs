//! An SSTable with no partitions (every partition appended was empty) is valid: it opens,
//! holds nothing, and scans to nothing.

mod sstable_support;

use bytes::Bytes;
use khata_storage::sstable::{SsTable, SsTableWriter, WriterOptions};
use khata_types::Partition;
use khata_types::clustering::full_range;
use khata_types::token::DecoratedKey;
use sstable_support::{cache, fs};

#[test]
fn an_empty_sstable_opens_and_holds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let key = DecoratedKey::new(Bytes::from_static(b"k"));
    let mut writer = SsTableWriter::create(fs(), dir.path(), 1, WriterOptions::default()).unwrap();
    writer.append(&key, &Partition::new()).unwrap();
    assert_eq!(writer.partition_count(), 0);
    writer.finish(cache()).unwrap();

    let table = SsTable::open(fs(), dir.path(), 1, cache()).unwrap();
    assert_eq!(table.stats().partition_count, 0);
    assert_eq!(table.stats().first_key, None);
    assert!(!table.may_contain(&key));
    assert!(table.read(&key, &[full_range()], false).unwrap().is_none());
    assert_eq!(table.scan(None).unwrap().count(), 0);
    assert_eq!(table.scan(Some(&key)).unwrap().count(), 0);
}

#[test]
fn keys_out_of_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    p.deletion = Some(khata_types::DeletionTime::new(1, 1));
    let a = DecoratedKey::new(Bytes::from_static(b"a"));
    let mut writer = SsTableWriter::create(fs(), dir.path(), 1, WriterOptions::default()).unwrap();
    writer.append(&a, &p).unwrap();
    assert!(writer.append(&a, &p).is_err());
    // A second writer for a generation that exists is refused too.
    drop(writer);
    let table = sstable_support::write(
        dir.path(),
        2,
        &[(a.clone(), p.clone())],
        WriterOptions::default(),
    );
    assert!(
        SsTableWriter::create(
            fs(),
            dir.path(),
            table.generation(),
            WriterOptions::default()
        )
        .is_err()
    );
}
