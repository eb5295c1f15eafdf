//! An SSTable exists only once its TOC does: unfinished writes (a crash before the TOC, a
//! dropped writer, leftover `.tmp` files) are never listed, and can be cleaned up.

mod sstable_support;

use bytes::Bytes;
use khata_storage::sstable::{SsTable, SsTableWriter, WriterOptions};
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{cache, fs, simple_row, write};

fn one_partition() -> Vec<(DecoratedKey, Partition)> {
    let mut p = Partition::new();
    p.add_row(Bytes::new(), simple_row(1, Bytes::from_static(b"v")));
    vec![(DecoratedKey::new(Bytes::from_static(b"k")), p)]
}

#[test]
fn sstables_without_a_toc_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = fs();
    write(dir.path(), 1, &one_partition(), WriterOptions::default());

    // Generation 3: complete, then its TOC lost, as after a crash just before the TOC rename.
    let three = write(dir.path(), 3, &one_partition(), WriterOptions::default());
    let toc = three.component_paths().pop().unwrap();
    drop(three);
    std::fs::rename(&toc, toc.with_extension("db.tmp")).unwrap();

    // Generation 5: being written.
    let mut writer =
        SsTableWriter::create(fs.clone(), dir.path(), 5, WriterOptions::default()).unwrap();
    for (k, p) in one_partition() {
        writer.append(&k, &p).unwrap();
    }
    assert_eq!(
        SsTable::list_generations(&*fs, dir.path()).unwrap(),
        vec![1]
    );

    // A writer dropped without finishing removes its files.
    drop(writer);
    let leftovers_of_5 = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("khata-5-")
        })
        .count();
    assert_eq!(leftovers_of_5, 0);

    // Clean-up removes generation 3's files and nothing of generation 1.
    let removed = SsTable::remove_incomplete(&*fs, dir.path()).unwrap();
    assert_eq!(removed.len(), 7);
    assert!(removed.iter().all(|p| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("khata-3-")
    }));
    assert_eq!(
        SsTable::list_generations(&*fs, dir.path()).unwrap(),
        vec![1]
    );
    assert!(SsTable::open(fs.clone(), dir.path(), 1, cache()).is_ok());

    // A missing directory has no SSTables.
    assert!(
        SsTable::list_generations(&*fs, &dir.path().join("none"))
            .unwrap()
            .is_empty()
    );
}
