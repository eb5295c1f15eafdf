//! A flipped byte anywhere in any component is reported as `StorageError::Corrupt` naming the
//! damaged file, by `open` or by the read that meets it; never a panic, never wrong data. Run
//! on two layouts: row blocks longer than chunks (every read crosses chunks), and small blocks
//! each in a chunk of its own with row indexes both copied into index entries and too long
//! for that (read lazily across chunks).

mod sstable_support;

use std::path::{Path, PathBuf};

use bytes::Bytes;
use khata_storage::StorageError;
use khata_storage::sstable::{SsTable, WriterOptions};
use khata_types::Partition;
use khata_types::clustering::{after_prefix, full_range};
use khata_types::token::DecoratedKey;
use sstable_support::{XorShift, cache, collect, fs, simple_row, write};

fn data() -> Vec<(DecoratedKey, Partition)> {
    let mut rng = XorShift(99);
    let mut list: Vec<(DecoratedKey, Partition)> = (0..300u32)
        .map(|i| {
            let mut p = Partition::new();
            let rows = if i % 50 == 0 { 200 } else { 1 + i % 5 };
            for r in 0..rows {
                let value = rng.bytes(10 + (r % 30) as usize);
                p.add_row(
                    Bytes::copy_from_slice(&r.to_be_bytes()),
                    simple_row(i64::from(r), value),
                );
            }
            (DecoratedKey::new(Bytes::from(format!("key-{i}"))), p)
        })
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    list
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Open and read everything; return the errors met. Panics on wrong data.
fn read_everything(dir: &Path, expected: &[(DecoratedKey, Partition)]) -> Vec<StorageError> {
    let table = match SsTable::open(fs(), dir, 1, cache()) {
        Ok(table) => table,
        Err(e) => return vec![e],
    };
    let mut errors = Vec::new();
    for (key, want) in expected {
        for reversed in [false, true] {
            // A point read of one row, in the middle of the partition.
            if let Some((clustering, row)) = want.rows.iter().nth(want.rows.len() / 2) {
                let range = [(clustering.clone(), after_prefix(clustering))];
                match table.read(key, &range, reversed) {
                    Ok(Some(reader)) => match collect(reader) {
                        Ok((got, _)) => {
                            assert_eq!(got.rows.len(), 1, "wrong row count for {key:?}");
                            assert_eq!(got.rows.get(clustering), Some(row), "wrong row");
                        }
                        Err(e) => errors.push(e),
                    },
                    Ok(None) => panic!("{key:?} not found"),
                    Err(e) => errors.push(e),
                }
            }
            match table.read(key, &[full_range()], reversed) {
                Ok(Some(reader)) => match collect(reader) {
                    Ok((got, _)) => assert_eq!(&got, want, "wrong data for {key:?}"),
                    Err(e) => errors.push(e),
                },
                Ok(None) => panic!("{key:?} not found"),
                Err(e) => errors.push(e),
            }
        }
    }
    let mut scanned = 0;
    for item in table.scan(None).unwrap() {
        match item {
            Ok((key, partition)) => {
                assert_eq!(
                    (&key, &partition),
                    (&expected[scanned].0, &expected[scanned].1)
                );
                scanned += 1;
            }
            Err(e) => errors.push(e),
        }
    }
    errors
}

fn assert_names(errors: &[StorageError], file: &Path, what: &str) {
    assert!(!errors.is_empty(), "{what}: damage went unnoticed");
    for e in errors {
        match e {
            StorageError::Corrupt { path, .. } => assert_eq!(path, file, "{what}: {e}"),
            other => panic!("{what}: expected Corrupt, got {other:?}"),
        }
    }
}

#[test]
fn flipped_bytes_are_reported_as_corruption_of_the_file() {
    flipped_bytes_are_reported(WriterOptions {
        chunk_length_bytes: 512,
        row_index_interval_bytes: 1024,
        ..WriterOptions::default()
    });
}

#[test]
fn flipped_bytes_in_small_blocks_and_row_indexes_are_reported() {
    flipped_bytes_are_reported(WriterOptions {
        chunk_length_bytes: 1024,
        row_index_interval_bytes: 96,
        ..WriterOptions::default()
    });
}

fn flipped_bytes_are_reported(options: WriterOptions) {
    let pristine = tempfile::tempdir().unwrap();
    let expected = data();
    let table = write(pristine.path(), 1, &expected, options);
    let components: Vec<PathBuf> = table.component_paths();
    drop(table);
    assert!(read_everything(pristine.path(), &expected).is_empty());

    for component in &components {
        let name = component.file_name().unwrap().to_owned();
        let len = std::fs::metadata(component).unwrap().len() as usize;
        let mut offsets: Vec<usize> = (0..40).map(|i| i * len / 40).collect();
        offsets.push(len - 1);
        offsets.dedup();
        for offset in offsets {
            let dir = tempfile::tempdir().unwrap();
            copy_dir(pristine.path(), dir.path());
            let file = dir.path().join(&name);
            let mut bytes = std::fs::read(&file).unwrap();
            bytes[offset] ^= 0x5a;
            std::fs::write(&file, &bytes).unwrap();
            let errors = read_everything(dir.path(), &expected);
            assert_names(&errors, &file, &format!("{name:?} byte {offset}"));
        }
        // A truncated file is damage too.
        let dir = tempfile::tempdir().unwrap();
        copy_dir(pristine.path(), dir.path());
        let file = dir.path().join(&name);
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 1]).unwrap();
        let errors = read_everything(dir.path(), &expected);
        assert_names(&errors, &file, &format!("{name:?} truncated"));
    }
}
