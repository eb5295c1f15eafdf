//! An SSTable whose TOC declares a format version this build does not know is rejected with
//! `UnsupportedVersion`, not read as if it were ours.

mod sstable_support;

use bytes::Bytes;
use khata_storage::StorageError;
use khata_storage::sstable::{FORMAT_VERSION, SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::token::DecoratedKey;
use sstable_support::{cache, fs, simple_row, write};

#[test]
fn unknown_version_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    p.add_row(Bytes::new(), simple_row(1, Bytes::from_static(b"v")));
    let table = write(
        dir.path(),
        1,
        &[(DecoratedKey::new(Bytes::from_static(b"k")), p)],
        WriterOptions::default(),
    );
    let toc = table.component_paths().pop().unwrap();
    drop(table);

    let mut bytes = std::fs::read(&toc).unwrap();
    assert_eq!(&bytes[..8], b"KHATASST");
    assert_eq!(bytes[8..12], FORMAT_VERSION.to_le_bytes());
    bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
    let body = bytes.len() - 4;
    let crc = crc32c::crc32c(&bytes[..body]);
    bytes[body..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&toc, &bytes).unwrap();

    match SsTable::open(fs(), dir.path(), 1, cache()) {
        Err(StorageError::UnsupportedVersion { path, version, .. }) => {
            assert_eq!(version, 99);
            assert_eq!(path, toc);
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
}
