//! [`PreallocatedFile`] on the real file system: a file allocated whole with
//! `posix_fallocate` and written through a shared memory map.
//!
//! This is the only place khata writes through a memory map, and one of the two places (with
//! [`crate::sched`]) it needs `unsafe`: the copy into the map, the `posix_fallocate` call and
//! the release of synced pages' mappings (`MADV_DONTNEED`).
//! The map's memory is never handed out; the only access to it from Rust is the copy in
//! [`MappedFile::write_at`], under a lock, within the map's bounds.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Advice, MmapRaw, UncheckedAdvice};

use crate::fs::PreallocatedFile;

/// A preallocated file and its shared, writable map (the whole file).
pub(crate) struct MappedFile {
    map: MmapRaw,
    /// Serializes the copies into the map: two overlapping copies at once would be a data
    /// race. Callers write from one thread at a time anyway (the commit log's append lock),
    /// so this lock is never contended.
    writing: Mutex<()>,
    /// The bytes from the start whose pages this process no longer maps (see
    /// [`MappedFile::release_below`]).
    released: AtomicU64,
    len: u64,
    path: PathBuf,
    /// Keeps the descriptor the map was made from (the map itself stays valid without it).
    _file: File,
}

impl MappedFile {
    pub(crate) fn create(path: &Path, len: u64) -> io::Result<MappedFile> {
        if len == 0 || usize::try_from(len).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot preallocate {len} bytes for {}", path.display()),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        allocate(&file, len)?;
        let map = MmapRaw::map_raw(&file)?;
        if map.len() as u64 != len {
            return Err(io::Error::other(format!(
                "{} is {} bytes after preallocating {len}",
                path.display(),
                map.len()
            )));
        }
        Ok(MappedFile {
            map,
            writing: Mutex::new(()),
            released: AtomicU64::new(0),
            len,
            path: path.to_path_buf(),
            _file: file,
        })
    }

    /// `offset..offset + n` as a range of the map, if it lies within it.
    fn range(&self, offset: u64, n: usize) -> io::Result<(usize, usize)> {
        let end = offset.checked_add(n as u64).filter(|&end| end <= self.len);
        match end {
            Some(end) => Ok((offset as usize, end as usize)),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "write of {n} bytes at {offset} runs past the end of {} ({} bytes)",
                    self.path.display(),
                    self.len
                ),
            )),
        }
    }

    /// Drop this process's mapping of the whole [`RELEASE_UNIT`]s below `end` that it still
    /// maps, before they are synced.
    ///
    /// Writing back a page that a process maps writable write-protects the mapping first
    /// (`folio_mkclean`), and that is a TLB shootdown per page: an interrupt to every other
    /// core running one of our threads, for each 4 KiB of log. Unmapped, the same pages are
    /// written back with none, and dropping the mapping costs one shootdown per range. A
    /// commit log only appends, so what lies below the sync point is not written again (a
    /// copy still in flight there maps its page again: the data is the file's, see below).
    /// Best effort: if it fails, the sync still works, at the old cost.
    fn release_below(&self, end: u64) {
        let upto = end & !(RELEASE_UNIT - 1);
        let from = self.released.load(Ordering::Relaxed);
        if upto <= from {
            return;
        }
        // SAFETY: `from..upto` lies within the map (`upto <= end <= len`, checked by the
        // caller through `range`). The map is a shared mapping of a file, on which
        // MADV_DONTNEED only drops page-table entries: dirty state moves to the page cache
        // (nothing written is lost), and a later access, such as a copy in `write_at`, maps
        // the file's page again with the data written so far (madvise(2)). No Rust
        // reference into the map exists, so none is invalidated.
        #[allow(unsafe_code)]
        let released = unsafe {
            self.map.unchecked_advise_range(
                UncheckedAdvice::DontNeed,
                from as usize,
                (upto - from) as usize,
            )
        };
        if released.is_ok() {
            self.released.fetch_max(upto, Ordering::Relaxed);
        }
    }
}

/// The granularity of [`MappedFile::release_below`]: a multiple of every page size Linux
/// uses (4, 16 and 64 KiB), so the offsets given to madvise(2) are page-aligned.
const RELEASE_UNIT: u64 = 64 * 1024;

/// Allocate `len` bytes of disk for `file` and set its length.
fn allocate(file: &File, len: u64) -> io::Result<()> {
    let len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
    // SAFETY: posix_fallocate(3) takes a descriptor and two integers and touches no memory of
    // ours; `file` keeps the descriptor open for the duration of the call. Where the file
    // system cannot allocate natively, glibc emulates it by writing a byte into each block.
    #[allow(unsafe_code)]
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    if r != 0 {
        // posix_fallocate returns the error number rather than setting errno.
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

impl PreallocatedFile for MappedFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let (start, _) = self.range(offset, buf.len())?;
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `start + buf.len()` lies within the map (checked by `range`), which stays
        // mapped as long as `self` lives. No reference to the map's memory exists anywhere (it
        // is only ever reached through this copy), and copies are serialized by `writing`, so
        // no other access races with this one; `buf` cannot overlap the map because no slice
        // of the map is ever made. The file is ours and preallocated to the map's length: only
        // another process truncating it could make the store fault (SIGBUS), as with any map.
        #[allow(unsafe_code)]
        unsafe {
            std::ptr::copy_nonoverlapping(
                buf.as_ptr(),
                self.map.as_mut_ptr().add(start),
                buf.len(),
            );
        }
        Ok(())
    }

    fn sync(&self, end: u64) -> io::Result<()> {
        let (_, end) = self.range(0, usize::try_from(end).unwrap_or(usize::MAX))?;
        if end == 0 {
            return Ok(());
        }
        self.release_below(end as u64);
        self.map.flush_range(0, end)
    }

    fn prepare(&self, from: u64, to: u64) {
        let to = to.min(self.len);
        if from >= to {
            return;
        }
        // Best effort: MADV_POPULATE_WRITE needs Linux 5.14; without it the writes fault
        // their pages in themselves.
        #[cfg(target_os = "linux")]
        let _ = self
            .map
            .advise_range(Advice::PopulateWrite, from as usize, (to - from) as usize);
        #[cfg(not(target_os = "linux"))]
        let _ = (Advice::Normal, from, to);
    }
}

impl fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, RealFs};

    #[test]
    fn written_bytes_are_the_files_and_the_rest_is_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        let f = RealFs.create_preallocated(&path, 10_000).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 10_000);
        f.prepare(0, 8192);
        f.write_at(0, b"head").unwrap();
        f.write_at(5000, b"middle").unwrap();
        f.write_at(9994, b"tail!!").unwrap();
        // Read through the file descriptor, not the map: the same page cache.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[0..4], b"head");
        assert_eq!(&bytes[5000..5006], b"middle");
        assert_eq!(&bytes[9994..], b"tail!!");
        assert!(bytes[4..5000].iter().all(|&b| b == 0));
        f.sync(10_000).unwrap();
        f.sync(0).unwrap();
    }

    #[test]
    fn synced_pages_stay_the_files_and_can_be_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        let len = 4 * RELEASE_UNIT;
        let f = MappedFile::create(&path, len).unwrap();
        f.prepare(0, len);
        let first = vec![1u8; (RELEASE_UNIT + 100) as usize];
        f.write_at(0, &first).unwrap();
        // The first unit is released, the one being written stays mapped.
        f.sync(RELEASE_UNIT + 100).unwrap();
        assert_eq!(f.released.load(Ordering::Relaxed), RELEASE_UNIT);
        // A write into a released page (a copy that was still in flight) maps it again.
        f.write_at(10, b"late").unwrap();
        f.write_at(RELEASE_UNIT + 100, b"next").unwrap();
        f.write_at(3 * RELEASE_UNIT, b"far").unwrap();
        f.sync(len).unwrap();
        assert_eq!(f.released.load(Ordering::Relaxed), len);
        f.sync(RELEASE_UNIT).unwrap(); // behind what is released: nothing to do
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes[..10].iter().all(|&b| b == 1));
        assert_eq!(&bytes[10..14], b"late");
        assert!(
            bytes[14..(RELEASE_UNIT + 100) as usize]
                .iter()
                .all(|&b| b == 1)
        );
        let at = (RELEASE_UNIT + 100) as usize;
        assert_eq!(&bytes[at..at + 4], b"next");
        let far = (3 * RELEASE_UNIT) as usize;
        assert_eq!(&bytes[far..far + 3], b"far");
        assert!(bytes[at + 4..far].iter().all(|&b| b == 0));
    }

    #[test]
    fn out_of_bounds_is_an_error_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        let f = RealFs.create_preallocated(&path, 100).unwrap();
        let err = f.write_at(98, b"abc").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(f.write_at(u64::MAX, b"a").is_err());
        assert!(f.sync(101).is_err());
        f.prepare(50, 1 << 30); // clamped, harmless
        assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
        assert!(
            RealFs
                .create_preallocated(&dir.path().join("empty"), 0)
                .is_err()
        );
    }

    #[test]
    fn create_truncates_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        std::fs::write(&path, vec![7u8; 300]).unwrap();
        let f = RealFs.create_preallocated(&path, 200).unwrap();
        f.write_at(0, b"x").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 200);
        assert_eq!(bytes[0], b'x');
        assert!(bytes[1..].iter().all(|&b| b == 0));
    }
}
