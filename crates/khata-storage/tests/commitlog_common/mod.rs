//! Helpers shared by the commit-log integration tests (each test file uses some of them).
#![allow(dead_code)] // Each test crate compiles this module and uses only part of it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use khata_env::{FileSystem, PreallocatedFile, ReadableFile, RealFs, WritableFile};
use khata_storage::commitlog::{CommitLog, CommitLogConfig, ReplayedRecord, SyncMode};

/// A small-segment configuration, so a few hundred records span several segments.
pub fn config(sync: SyncMode, segment_size_bytes: u64) -> CommitLogConfig {
    CommitLogConfig {
        sync,
        segment_size_bytes,
        max_record_size_bytes: (segment_size_bytes / 2) as u32,
    }
}

pub const MODES: [SyncMode; 3] = [
    SyncMode::Periodic {
        period: Duration::from_millis(20),
    },
    SyncMode::Group {
        window: Duration::from_millis(1),
    },
    SyncMode::Batch,
];

pub fn open(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    cfg: CommitLogConfig,
) -> (Arc<CommitLog>, Vec<ReplayedRecord>) {
    CommitLog::open(fs.clone(), dir, cfg).expect("open commit log")
}

pub fn real_fs() -> Arc<dyn FileSystem> {
    Arc::new(RealFs)
}

/// A payload that says which record it is: `id` little-endian, then `pad` filler bytes.
pub fn payload(id: u64, pad: usize) -> Vec<u8> {
    let mut p = id.to_le_bytes().to_vec();
    p.extend(std::iter::repeat_n((id % 251) as u8, pad));
    p
}

pub fn payload_id(p: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&p[..8]);
    u64::from_le_bytes(a)
}

/// The segment files in `dir`, sorted by name (= by id).
pub fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    files
}

/// A file system (the real one by default), counting fsyncs, failing them on demand, and
/// holding back segment fsyncs behind a [`Gate`].
#[derive(Debug)]
pub struct SyncProbeFs {
    pub inner: Arc<dyn FileSystem>,
    pub syncs: Arc<AtomicU64>,
    pub fail_syncs: Arc<AtomicBool>,
    pub gate: Arc<Gate>,
}

impl Default for SyncProbeFs {
    fn default() -> Self {
        SyncProbeFs::over(Arc::new(RealFs))
    }
}

impl SyncProbeFs {
    /// A probe over `inner`.
    pub fn over(inner: Arc<dyn FileSystem>) -> Self {
        SyncProbeFs {
            inner,
            syncs: Arc::default(),
            fail_syncs: Arc::default(),
            gate: Arc::default(),
        }
    }
}

/// Closed on a needle: fsyncs of segment files, and creations of files, whose path contains
/// it wait until it opens.
#[derive(Debug, Default)]
pub struct Gate {
    closed: Mutex<Option<String>>,
    opened: Condvar,
}

impl Gate {
    pub fn close(&self, needle: &str) {
        *self.closed.lock().unwrap() = Some(needle.to_string());
    }

    pub fn open(&self) {
        *self.closed.lock().unwrap() = None;
        self.opened.notify_all();
    }

    fn pass(&self, path: &Path) {
        let mut closed = self.closed.lock().unwrap();
        while closed
            .as_deref()
            .is_some_and(|needle| path.to_string_lossy().contains(needle))
        {
            closed = self.opened.wait(closed).unwrap();
        }
    }
}

#[derive(Debug)]
struct ProbeFile {
    inner: Arc<dyn WritableFile>,
    syncs: Arc<AtomicU64>,
    fail_syncs: Arc<AtomicBool>,
}

impl WritableFile for ProbeFile {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        self.inner.append(buf)
    }
    fn sync(&self) -> io::Result<()> {
        if self.fail_syncs.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected fsync failure"));
        }
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

#[derive(Debug)]
struct ProbeSegment {
    path: PathBuf,
    gate: Arc<Gate>,
    inner: Arc<dyn PreallocatedFile>,
    syncs: Arc<AtomicU64>,
    fail_syncs: Arc<AtomicBool>,
}

impl PreallocatedFile for ProbeSegment {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, buf)
    }
    fn sync(&self, end: u64) -> io::Result<()> {
        self.gate.pass(&self.path);
        if self.fail_syncs.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected fsync failure"));
        }
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync(end)
    }
    fn prepare(&self, from: u64, to: u64) {
        self.inner.prepare(from, to)
    }
}

impl SyncProbeFs {
    fn wrap(&self, inner: Arc<dyn WritableFile>) -> Arc<dyn WritableFile> {
        Arc::new(ProbeFile {
            inner,
            syncs: self.syncs.clone(),
            fail_syncs: self.fail_syncs.clone(),
        })
    }
}

impl FileSystem for SyncProbeFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.list_dir(path)
    }
    fn create(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        self.gate.pass(path);
        Ok(self.wrap(self.inner.create(path)?))
    }
    fn create_preallocated(&self, path: &Path, len: u64) -> io::Result<Arc<dyn PreallocatedFile>> {
        Ok(Arc::new(ProbeSegment {
            path: path.to_path_buf(),
            gate: self.gate.clone(),
            inner: self.inner.create_preallocated(path, len)?,
            syncs: self.syncs.clone(),
            fail_syncs: self.fail_syncs.clone(),
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        Ok(self.wrap(self.inner.open_append(path)?))
    }
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadableFile>> {
        self.inner.open_read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_dir_all(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.hard_link(from, to)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.inner.truncate(path, len)
    }
}

/// A segment of format `version` built by hand (header, then `payloads` as records, no sync
/// markers), for the tests of how older versions are read.
pub fn hand_built_segment(id: u64, version: u32, payloads: &[&[u8]]) -> Vec<u8> {
    let mut seg = b"KHATA-CL".to_vec();
    seg.extend_from_slice(&version.to_le_bytes());
    seg.extend_from_slice(&id.to_le_bytes());
    let crc = crc32c::crc32c(&seg);
    seg.extend_from_slice(&crc.to_le_bytes());
    let seed = crc32c::crc32c(&id.to_le_bytes());
    for p in payloads {
        let len = (p.len() as u32).to_le_bytes();
        let crc = crc32c::crc32c_append(crc32c::crc32c_append(seed, &len), p);
        seg.extend_from_slice(&len);
        seg.extend_from_slice(&crc.to_le_bytes());
        seg.extend_from_slice(p);
    }
    seg
}
