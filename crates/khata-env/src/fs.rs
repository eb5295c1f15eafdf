//! The file-system seam.
//!
//! A small trait, in the spirit of redb's `StorageBackend`: append-only writable files with an
//! explicit `sync`, positional reads, and the directory operations that atomic file appearance
//! needs (rename, sync of a directory). The storage engine does all its file access through it,
//! so [`crate::fault::FaultFs`] can simulate power cuts (unsynced data lost), torn writes and
//! I/O errors.
//!
//! Durability rule (STYLE.md rule 6): a file becomes visible under its final name only by
//! [`durable_rename`]: write under a temporary name, sync the file, rename, sync the directory.

use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A file open for appending.
///
/// Methods take `&self` so that one thread may `sync` while another appends (group commit).
pub trait WritableFile: Send + Sync + Debug {
    /// Append all of `buf` (hand it to the OS; not durable until [`WritableFile::sync`]).
    fn append(&self, buf: &[u8]) -> io::Result<()>;
    /// Make everything appended so far durable (`fdatasync`).
    fn sync(&self) -> io::Result<()>;
    /// Bytes appended so far (including the length the file had when opened).
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file open for positional reads.
pub trait ReadableFile: Send + Sync + Debug {
    /// Fill `buf` from `offset`; a short file is an `UnexpectedEof` error.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Read `len` bytes at `offset` into a new vector.
    fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; len];
        self.read_exact_at(offset, &mut v)?;
        Ok(v)
    }
}

/// A file whose whole length is allocated on disk when it is created, then written in place.
///
/// The commit log writes its segments this way: on the real file system the file is
/// preallocated (`posix_fallocate`, so a full disk is an error at creation, not a SIGBUS at
/// some later store) and written through a shared memory map, so a write is a copy into the
/// page cache, with no system call and no journal handle per record (an appending `write(2)`
/// dirties the inode on every call and waits whenever ext4's journal commits,
/// docs/benchmarks.md). Bytes written are the OS's as soon as `write_at` returns: a killed
/// process loses none of them; a power cut may lose any not yet covered by a `sync`.
///
/// The parts never written read as zeros.
pub trait PreallocatedFile: Send + Sync + Debug {
    /// The file's length, fixed at creation.
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copy `buf` to `offset..offset + buf.len()`, which must lie within the file (else an
    /// `InvalidInput` error and nothing written).
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Make the bytes `0..end` durable (`msync`).
    fn sync(&self, end: u64) -> io::Result<()>;
    /// A hint that `from..to` is about to be written: on the real file system its pages are
    /// mapped writable ahead (`MADV_POPULATE_WRITE`), so the writes that follow do not stop
    /// for page faults. Changes no byte; failures are ignored.
    fn prepare(&self, from: u64, to: u64);
}

/// The operations the storage engine needs from a file system.
pub trait FileSystem: Send + Sync + Debug + 'static {
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Entries of a directory (full paths), in no particular order.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>>;
    /// Create (or truncate) a file for appending.
    fn create(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>>;
    /// Create (or truncate) a file of `len` zero bytes, allocated on disk, for writing in
    /// place. Like `create`, the file's name and length are durable only after a sync of the
    /// file (its length) and of its directory (its name).
    fn create_preallocated(&self, path: &Path, len: u64) -> io::Result<Arc<dyn PreallocatedFile>>;
    /// Open an existing file for appending at its end.
    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>>;
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadableFile>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    fn remove_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Make the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn exists(&self, path: &Path) -> bool;
    /// Truncate a file to `len` bytes and sync it (used to cut a torn commit-log tail).
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
}

/// Write `data` to `path` durably: temporary file, sync, rename, sync the directory.
pub fn write_file_durably(fs: &dyn FileSystem, path: &Path, data: &[u8]) -> io::Result<()> {
    let tmp = tmp_path(path);
    let f = fs.create(&tmp)?;
    f.append(data)?;
    f.sync()?;
    drop(f);
    durable_rename(fs, &tmp, path)
}

/// Rename a file that is already synced and make the rename durable. The order matters: the
/// data must be durable before the name points at it, and the directory must be synced before
/// anyone relies on the new name.
pub fn durable_rename(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    fs.rename(from, to)?;
    let dir = to.parent().unwrap_or(Path::new("."));
    fs.sync_dir(dir)
}

/// Create `path` and any missing ancestors, and make each new directory's name durable by
/// syncing the directory that holds it. Without this a directory created just before a power
/// cut may vanish with everything inside it, however carefully its files were synced.
/// Directories that already existed are not re-synced.
pub fn create_dir_all_durably(fs: &dyn FileSystem, path: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut next = Some(path);
    while let Some(dir) = next {
        if dir.as_os_str().is_empty() || fs.exists(dir) {
            break;
        }
        missing.push(dir);
        next = dir.parent();
    }
    fs.create_dir_all(path)?;
    // Outermost first; the order does not matter for correctness since every directory
    // already exists, but it mirrors how the names were created.
    for dir in missing.iter().rev() {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs.sync_dir(parent)?;
    }
    Ok(())
}

/// The temporary name a file is written under before [`durable_rename`].
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

#[derive(Debug)]
struct RealWritable {
    file: File,
    len: AtomicU64,
}

impl WritableFile for RealWritable {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        (&self.file).write_all(buf)?;
        self.len.fetch_add(buf.len() as u64, Ordering::AcqRel);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::Acquire)
    }
}

#[derive(Debug)]
struct RealReadable {
    file: File,
    len: u64,
}

impl ReadableFile for RealReadable {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn len(&self) -> u64 {
        self.len
    }
}

impl FileSystem for RealFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect()
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        Ok(Arc::new(RealWritable {
            file,
            len: AtomicU64::new(0),
        }))
    }

    fn create_preallocated(&self, path: &Path, len: u64) -> io::Result<Arc<dyn PreallocatedFile>> {
        Ok(Arc::new(crate::mapped::MappedFile::create(path, len)?))
    }

    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        let file = OpenOptions::new().append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(RealWritable {
            file,
            len: AtomicU64::new(len),
        }))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadableFile>> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(RealReadable { file, len }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_dir_all(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let f = OpenOptions::new().write(true).open(path)?;
        f.set_len(len)?;
        f.sync_all()
    }
}
