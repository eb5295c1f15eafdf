//! FaultFs damage helpers: `flip_byte` and `corrupt` change durable bytes, which reads and
//! later crashes then see.

use std::io::ErrorKind;
use std::path::Path;

use khata_env::{FaultFs, FileSystem, create_dir_all_durably};

fn fs_with_file(data: &[u8]) -> FaultFs {
    let fs = FaultFs::with_seed(5);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let w = fs.create(Path::new("/db/f")).unwrap();
    w.append(data).unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs
}

#[test]
fn flip_byte_inverts_one_byte() {
    let fs = fs_with_file(&[0x0f; 8]);
    fs.flip_byte(Path::new("/db/f"), 3).unwrap();
    let expected = [0x0f, 0x0f, 0x0f, 0xf0, 0x0f, 0x0f, 0x0f, 0x0f];
    assert_eq!(fs.contents(Path::new("/db/f")).unwrap(), expected);
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/f")).unwrap(), expected);
}

#[test]
fn corrupt_changes_every_byte_in_range() {
    let original = vec![0xAA; 64];
    let fs = fs_with_file(&original);
    fs.corrupt(Path::new("/db/f"), 10, 20).unwrap();
    let after = fs.contents(Path::new("/db/f")).unwrap();
    assert_eq!(after.len(), 64);
    for (i, (a, b)) in original.iter().zip(&after).enumerate() {
        assert_eq!((10..30).contains(&i), a != b, "byte {i}");
    }
}

#[test]
fn damage_beyond_durable_length_is_refused() {
    let fs = fs_with_file(b"abc");
    let w = fs.open_append(Path::new("/db/f")).unwrap();
    w.append(b"unsynced").unwrap();
    let err = fs.corrupt(Path::new("/db/f"), 2, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(fs.flip_byte(Path::new("/db/missing"), 0).is_err());
    assert_eq!(
        fs.contents(Path::new("/db/f")).unwrap(),
        b"abcunsynced",
        "a refused damage changes nothing"
    );
}
