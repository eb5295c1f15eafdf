//! One behaviour suite for the `FileSystem` trait, run on both implementations (STYLE.md rule
//! 11): `RealFs` in a temporary directory and `FaultFs` under `/khata`. Whatever the engine
//! may rely on while no crash happens must hold on both; what differs (crashes, faults) is
//! tested in the `fault_fs_*` files.

use std::io::ErrorKind;
use std::path::Path;

use khata_env::FileSystem;

mod cases {
    use super::*;
    use khata_env::{create_dir_all_durably, write_file_durably};

    fn read_all(fs: &dyn FileSystem, path: &Path) -> Vec<u8> {
        let f = fs.open_read(path).unwrap();
        f.read_vec(0, f.len() as usize).unwrap()
    }

    pub fn append_then_read_back(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a");
        let w = fs.create(&path).unwrap();
        assert!(w.is_empty());
        w.append(b"hello ").unwrap();
        w.append(b"world").unwrap();
        assert_eq!(w.len(), 11);
        w.sync().unwrap();
        assert_eq!(read_all(fs, &path), b"hello world");
        let r = fs.open_read(&path).unwrap();
        assert_eq!(r.read_vec(6, 5).unwrap(), b"world");
    }

    pub fn reads_see_unsynced_appends(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a");
        let w = fs.create(&path).unwrap();
        w.append(b"not yet synced").unwrap();
        assert_eq!(read_all(fs, &path), b"not yet synced");
    }

    pub fn read_past_end_is_unexpected_eof(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a");
        fs.create(&path).unwrap().append(b"abc").unwrap();
        let r = fs.open_read(&path).unwrap();
        assert_eq!(r.len(), 3);
        let err = r.read_vec(1, 3).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    }

    pub fn open_append_continues_at_end(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a");
        let w = fs.create(&path).unwrap();
        w.append(b"abc").unwrap();
        w.sync().unwrap();
        drop(w);
        let w = fs.open_append(&path).unwrap();
        assert_eq!(w.len(), 3);
        w.append(b"def").unwrap();
        assert_eq!(w.len(), 6);
        assert_eq!(read_all(fs, &path), b"abcdef");
    }

    pub fn create_truncates_existing_file(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a");
        fs.create(&path).unwrap().append(b"old content").unwrap();
        let w = fs.create(&path).unwrap();
        assert_eq!(w.len(), 0);
        w.append(b"new").unwrap();
        assert_eq!(read_all(fs, &path), b"new");
    }

    pub fn missing_files_are_not_found(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("missing");
        assert!(!fs.exists(&path));
        assert_eq!(fs.open_read(&path).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(
            fs.open_append(&path).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs.remove_file(&path).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs.rename(&path, &root.join("b")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        let in_missing_dir = root.join("no-dir").join("a");
        assert_eq!(
            fs.create(&in_missing_dir).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs.list_dir(&root.join("no-dir")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }

    pub fn rename_moves_and_replaces(fs: &dyn FileSystem, root: &Path) {
        let (a, b) = (root.join("a"), root.join("b"));
        fs.create(&a).unwrap().append(b"A").unwrap();
        fs.create(&b).unwrap().append(b"B").unwrap();
        fs.rename(&a, &b).unwrap();
        assert!(!fs.exists(&a));
        assert_eq!(read_all(fs, &b), b"A");
    }

    pub fn rename_across_directories(fs: &dyn FileSystem, root: &Path) {
        fs.create_dir_all(&root.join("x")).unwrap();
        fs.create_dir_all(&root.join("y")).unwrap();
        fs.create(&root.join("x/f")).unwrap().append(b"f").unwrap();
        fs.rename(&root.join("x/f"), &root.join("y/g")).unwrap();
        assert!(fs.list_dir(&root.join("x")).unwrap().is_empty());
        assert_eq!(
            fs.list_dir(&root.join("y")).unwrap(),
            vec![root.join("y/g")]
        );
    }

    pub fn remove_file_removes(fs: &dyn FileSystem, root: &Path) {
        let a = root.join("a");
        fs.create(&a).unwrap();
        assert!(fs.exists(&a));
        fs.remove_file(&a).unwrap();
        assert!(!fs.exists(&a));
    }

    pub fn open_file_outlives_its_name(fs: &dyn FileSystem, root: &Path) {
        let a = root.join("a");
        let w = fs.create(&a).unwrap();
        w.append(b"still here").unwrap();
        let r = fs.open_read(&a).unwrap();
        fs.remove_file(&a).unwrap();
        assert_eq!(r.read_vec(0, 10).unwrap(), b"still here");
        w.append(b"!").unwrap();
        w.sync().unwrap();
    }

    pub fn list_dir_gives_full_paths(fs: &dyn FileSystem, root: &Path) {
        fs.create_dir_all(&root.join("d/sub")).unwrap();
        fs.create(&root.join("d/one")).unwrap();
        fs.create(&root.join("d/two")).unwrap();
        let mut got = fs.list_dir(&root.join("d")).unwrap();
        got.sort();
        assert_eq!(
            got,
            vec![root.join("d/one"), root.join("d/sub"), root.join("d/two")]
        );
    }

    pub fn create_dir_all_is_idempotent(fs: &dyn FileSystem, root: &Path) {
        let d = root.join("a/b/c");
        fs.create_dir_all(&d).unwrap();
        fs.create_dir_all(&d).unwrap();
        assert!(fs.exists(&d));
        assert!(fs.exists(&root.join("a/b")));
    }

    pub fn remove_dir_all_removes_tree(fs: &dyn FileSystem, root: &Path) {
        fs.create_dir_all(&root.join("d/e")).unwrap();
        fs.create(&root.join("d/e/f"))
            .unwrap()
            .append(b"x")
            .unwrap();
        fs.remove_dir_all(&root.join("d")).unwrap();
        assert!(!fs.exists(&root.join("d")));
        assert!(!fs.exists(&root.join("d/e/f")));
        assert!(fs.list_dir(root).unwrap().is_empty());
    }

    pub fn hard_link_shares_content(fs: &dyn FileSystem, root: &Path) {
        let (a, b) = (root.join("a"), root.join("b"));
        let w = fs.create(&a).unwrap();
        w.append(b"shared").unwrap();
        fs.hard_link(&a, &b).unwrap();
        w.append(b"!").unwrap();
        assert_eq!(read_all(fs, &b), b"shared!");
        fs.remove_file(&a).unwrap();
        assert_eq!(read_all(fs, &b), b"shared!");
    }

    pub fn hard_link_onto_existing_fails(fs: &dyn FileSystem, root: &Path) {
        let (a, b) = (root.join("a"), root.join("b"));
        fs.create(&a).unwrap();
        fs.create(&b).unwrap();
        assert_eq!(
            fs.hard_link(&a, &b).unwrap_err().kind(),
            ErrorKind::AlreadyExists
        );
    }

    pub fn truncate_cuts_the_tail(fs: &dyn FileSystem, root: &Path) {
        let a = root.join("a");
        let w = fs.create(&a).unwrap();
        w.append(b"good|torn").unwrap();
        w.sync().unwrap();
        fs.truncate(&a, 4).unwrap();
        assert_eq!(read_all(fs, &a), b"good");
    }

    pub fn sync_dir_succeeds_on_directories(fs: &dyn FileSystem, root: &Path) {
        fs.create_dir_all(&root.join("d")).unwrap();
        fs.create(&root.join("d/f")).unwrap().sync().unwrap();
        fs.sync_dir(&root.join("d")).unwrap();
        fs.sync_dir(root).unwrap();
    }

    pub fn write_file_durably_replaces_atomically(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("manifest");
        write_file_durably(fs, &path, b"v1").unwrap();
        write_file_durably(fs, &path, b"v2").unwrap();
        assert_eq!(read_all(fs, &path), b"v2");
        assert_eq!(fs.list_dir(root).unwrap(), vec![path]);
    }

    pub fn preallocated_file_is_zeros_written_in_place(fs: &dyn FileSystem, root: &Path) {
        let a = root.join("seg");
        let f = fs.create_preallocated(&a, 4096).unwrap();
        assert_eq!(f.len(), 4096);
        f.prepare(0, 1 << 20);
        f.write_at(10, b"abc").unwrap();
        f.write_at(4093, b"end").unwrap();
        f.write_at(10, b"X").unwrap();
        f.sync(4096).unwrap();
        let bytes = read_all(fs, &a);
        assert_eq!(bytes.len(), 4096);
        assert_eq!(&bytes[10..13], b"Xbc");
        assert_eq!(&bytes[4093..], b"end");
        assert!(bytes[..10].iter().chain(&bytes[13..4093]).all(|&b| b == 0));
        // Reads see a write before any sync (the page cache), and a write past the end is an
        // error that writes nothing.
        f.write_at(0, b"unsynced").unwrap();
        assert_eq!(&read_all(fs, &a)[..8], b"unsynced");
        assert_eq!(
            f.write_at(4090, b"too long").unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(&read_all(fs, &a)[4090..], b"\0\0\0end");
        assert_eq!(
            f.write_at(u64::MAX, b"x").unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert!(f.sync(4097).is_err());
        assert!(fs.create_preallocated(&root.join("empty"), 0).is_err());
    }

    pub fn preallocated_create_truncates_existing_file(fs: &dyn FileSystem, root: &Path) {
        let a = root.join("seg");
        let w = fs.create(&a).unwrap();
        w.append(&[7u8; 300]).unwrap();
        w.sync().unwrap();
        drop(w);
        let f = fs.create_preallocated(&a, 100).unwrap();
        f.write_at(0, b"x").unwrap();
        let bytes = read_all(fs, &a);
        assert_eq!(bytes.len(), 100);
        assert_eq!(bytes[0], b'x');
        assert!(bytes[1..].iter().all(|&b| b == 0));
    }

    pub fn create_dir_all_durably_creates(fs: &dyn FileSystem, root: &Path) {
        let d = root.join("x/y/z");
        create_dir_all_durably(fs, &d).unwrap();
        create_dir_all_durably(fs, &d).unwrap();
        assert!(fs.exists(&d));
    }
}

/// Generates one test per case per implementation: `real_fs::<case>` and `fault_fs::<case>`.
macro_rules! contract_tests {
    ($($case:ident),* $(,)?) => {
        mod real_fs {
            $(
                #[test]
                fn $case() {
                    let dir = tempfile::tempdir().unwrap();
                    super::cases::$case(&khata_env::RealFs, dir.path());
                }
            )*
        }

        mod fault_fs {
            use khata_env::FileSystem;

            $(
                #[test]
                fn $case() {
                    let fs = khata_env::FaultFs::with_seed(11);
                    let root = std::path::Path::new("/khata");
                    fs.create_dir_all(root).unwrap();
                    super::cases::$case(&fs, root);
                }
            )*
        }
    };
}

contract_tests!(
    append_then_read_back,
    reads_see_unsynced_appends,
    read_past_end_is_unexpected_eof,
    open_append_continues_at_end,
    create_truncates_existing_file,
    missing_files_are_not_found,
    rename_moves_and_replaces,
    rename_across_directories,
    remove_file_removes,
    open_file_outlives_its_name,
    list_dir_gives_full_paths,
    create_dir_all_is_idempotent,
    remove_dir_all_removes_tree,
    hard_link_shares_content,
    hard_link_onto_existing_fails,
    truncate_cuts_the_tail,
    sync_dir_succeeds_on_directories,
    write_file_durably_replaces_atomically,
    preallocated_file_is_zeros_written_in_place,
    preallocated_create_truncates_existing_file,
    create_dir_all_durably_creates,
);
