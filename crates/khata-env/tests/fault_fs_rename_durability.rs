//! FaultFs renames: a rename is a directory-entry change, durable only once the directories
//! involved are synced; `durable_rename` does it right.

use std::path::Path;

use khata_env::{FaultFs, FileSystem, create_dir_all_durably, durable_rename, write_file_durably};

fn synced_file(fs: &FaultFs, path: &Path, data: &[u8]) {
    let w = fs.create(path).unwrap();
    w.append(data).unwrap();
    w.sync().unwrap();
}

#[test]
fn rename_not_durable_until_sync_dir() {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    synced_file(&fs, Path::new("/db/table.tmp"), b"v1");
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.rename(Path::new("/db/table.tmp"), Path::new("/db/table"))
        .unwrap();
    fs.crash();
    assert!(!fs.exists(Path::new("/db/table")));
    assert_eq!(fs.contents(Path::new("/db/table.tmp")).unwrap(), b"v1");
}

#[test]
fn durable_rename_survives_crash() {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    synced_file(&fs, Path::new("/db/table.tmp"), b"v1");
    durable_rename(&fs, Path::new("/db/table.tmp"), Path::new("/db/table")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/table")).unwrap(), b"v1");
    assert!(!fs.exists(Path::new("/db/table.tmp")));
}

#[test]
fn replacing_rename_keeps_old_version_until_sync_dir() {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    write_file_durably(&fs, Path::new("/db/manifest"), b"v1").unwrap();
    synced_file(&fs, Path::new("/db/manifest.tmp"), b"v2");
    fs.rename(Path::new("/db/manifest.tmp"), Path::new("/db/manifest"))
        .unwrap();
    assert_eq!(fs.contents(Path::new("/db/manifest")).unwrap(), b"v2");
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/manifest")).unwrap(), b"v1");

    write_file_durably(&fs, Path::new("/db/manifest"), b"v3").unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/manifest")).unwrap(), b"v3");
}

#[test]
fn rename_of_unsynced_data_is_durable_name_with_no_data() {
    // The classic bug: rename before sync. The name survives, the bytes do not.
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    fs.create(Path::new("/db/f.tmp"))
        .unwrap()
        .append(b"lost")
        .unwrap();
    durable_rename(&fs, Path::new("/db/f.tmp"), Path::new("/db/f")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/f")).unwrap(), b"");
}

#[test]
fn cross_directory_rename_needs_both_directories_synced() {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db/incoming")).unwrap();
    create_dir_all_durably(&fs, Path::new("/db/live")).unwrap();
    synced_file(&fs, Path::new("/db/incoming/s1"), b"rows");
    fs.sync_dir(Path::new("/db/incoming")).unwrap();

    fs.rename(Path::new("/db/incoming/s1"), Path::new("/db/live/s1"))
        .unwrap();
    fs.sync_dir(Path::new("/db/live")).unwrap();
    fs.crash();
    // Only the target was synced: the file is found under both names.
    assert_eq!(fs.contents(Path::new("/db/live/s1")).unwrap(), b"rows");
    assert_eq!(fs.contents(Path::new("/db/incoming/s1")).unwrap(), b"rows");

    fs.rename(Path::new("/db/incoming/s1"), Path::new("/db/live/s2"))
        .unwrap();
    fs.sync_dir(Path::new("/db/incoming")).unwrap();
    fs.sync_dir(Path::new("/db/live")).unwrap();
    fs.crash();
    assert!(!fs.exists(Path::new("/db/incoming/s1")));
    assert_eq!(fs.contents(Path::new("/db/live/s2")).unwrap(), b"rows");
}

#[test]
fn directory_rename_moves_its_contents() {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db/ks/t1")).unwrap();
    synced_file(&fs, Path::new("/db/ks/t1/data"), b"d");
    fs.sync_dir(Path::new("/db/ks/t1")).unwrap();
    fs.rename(Path::new("/db/ks/t1"), Path::new("/db/ks/t2"))
        .unwrap();
    assert_eq!(fs.contents(Path::new("/db/ks/t2/data")).unwrap(), b"d");
    fs.sync_dir(Path::new("/db/ks")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/ks/t2/data")).unwrap(), b"d");
    assert!(!fs.exists(Path::new("/db/ks/t1")));
}
