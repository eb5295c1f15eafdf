//! File handles of [`super::FaultFs`].
//!
//! A handle remembers the inode it opened and the crash epoch it was opened in. After a crash
//! the process that held it is dead, so every call on it fails; dropping it is still fine.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::inject::FaultOp;
use super::tree::{FileData, Ino};
use super::{Inner, State};
use crate::fs::{PreallocatedFile, ReadableFile, WritableFile};

fn stale(path: &std::path::Path) -> io::Error {
    io::Error::other(format!(
        "FaultFs: handle for {} was opened before a simulated crash",
        path.display()
    ))
}

/// What a handle holds on to; shared by both kinds.
#[derive(Debug)]
pub(super) struct HandleRef {
    pub(super) inner: Arc<Inner>,
    pub(super) ino: Ino,
    pub(super) epoch: u64,
    /// The path the file was opened by: what fault rules match and errors name.
    pub(super) path: PathBuf,
}

impl HandleRef {
    /// Lock the file system, refuse if a crash happened since open, and check `op`'s rules.
    fn with_file<T>(
        &self,
        op: FaultOp,
        f: impl FnOnce(&mut FileData) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut guard = self.inner.state.lock();
        let state: &mut State = &mut guard;
        if state.epoch != self.epoch {
            return Err(stale(&self.path));
        }
        state.rules.check(op, &[&self.path])?;
        // An open handle keeps its inode alive, so it is always there in its own epoch.
        let file = state
            .tree
            .file_mut(self.ino)
            .expect("open handle keeps its inode alive");
        f(file)
    }
}

impl Drop for HandleRef {
    fn drop(&mut self) {
        let mut state = self.inner.state.lock();
        if state.epoch != self.epoch {
            return;
        }
        let inode = state
            .tree
            .inode_mut(self.ino)
            .expect("open handle keeps its inode alive");
        inode.open_handles -= 1;
        if inode.open_handles == 0 {
            state.tree.collect_garbage();
        }
    }
}

/// [`WritableFile`] over a [`super::FaultFs`] inode.
#[derive(Debug)]
pub(super) struct FaultWritable {
    pub(super) handle: HandleRef,
    pub(super) len: AtomicU64,
}

impl WritableFile for FaultWritable {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        self.handle.with_file(FaultOp::Append, |file| {
            file.append(buf);
            Ok(())
        })?;
        self.len.fetch_add(buf.len() as u64, Ordering::AcqRel);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.handle.with_file(FaultOp::Sync, |file| {
            file.sync();
            Ok(())
        })
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::Acquire)
    }
}

/// [`ReadableFile`] over a [`super::FaultFs`] inode. Reads see the current (page-cache)
/// bytes; the length is fixed at open, as with the real file system.
#[derive(Debug)]
pub(super) struct FaultReadable {
    pub(super) handle: HandleRef,
    pub(super) len: u64,
}

impl ReadableFile for FaultReadable {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.handle.with_file(FaultOp::Read, |file| {
            let end = offset
                .checked_add(buf.len() as u64)
                .filter(|&end| end <= file.current.len() as u64);
            let Some(end) = end else {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "FaultFs: read past end of file",
                ));
            };
            buf.copy_from_slice(&file.current[offset as usize..end as usize]);
            Ok(())
        })
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// [`PreallocatedFile`] over a [`super::FaultFs`] inode.
#[derive(Debug)]
pub(super) struct FaultPreallocated {
    pub(super) handle: HandleRef,
    pub(super) len: u64,
}

impl PreallocatedFile for FaultPreallocated {
    fn len(&self) -> u64 {
        self.len
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let path = self.handle.path.clone();
        self.handle.with_file(FaultOp::Append, |file| {
            let written = offset
                .checked_add(buf.len() as u64)
                .filter(|&end| end <= self.len)
                .is_some_and(|_| file.write_at(offset as usize, buf));
            if written {
                Ok(())
            } else {
                Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "FaultFs: write of {} bytes at {offset} runs past the end of {}",
                        buf.len(),
                        path.display()
                    ),
                ))
            }
        })
    }

    fn sync(&self, end: u64) -> io::Result<()> {
        if end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "FaultFs: sync past the end of a preallocated file",
            ));
        }
        self.handle.with_file(FaultOp::Sync, |file| {
            file.sync();
            Ok(())
        })
    }

    fn prepare(&self, _from: u64, _to: u64) {}
}
