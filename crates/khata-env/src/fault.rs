//! `FaultFs`: an in-memory [`FileSystem`] for crash and fault tests.
//!
//! It behaves like a disk behind a page cache, and lets a test pull the plug. The point is to
//! prove that the storage engine's durability protocol (write, sync, rename, sync the directory:
//! [`crate::fs::durable_rename`]) is followed everywhere, and that corruption and I/O errors are
//! reported rather than silently carried on from.
//!
//! # Crash model
//!
//! Every file and directory is an inode with a *current* state (what the running process sees)
//! and a *durable* state (what the disk holds). Operations change the current state only, and
//! reads see it. The durable state changes only as follows:
//!
//! - **File data.** [`WritableFile::sync`] makes the file's current bytes durable (all of them,
//!   including bytes appended through other handles). [`FileSystem::create_preallocated`]
//!   makes a file of zeros whose length is volatile like a `create`'s; its in-place writes
//!   ([`PreallocatedFile::write_at`]) are volatile until a sync of the file (its `sync` makes
//!   all of the file's bytes durable, not only those before the end it names: stricter than
//!   `msync` would need, never weaker than what the engine may rely on). [`FileSystem::truncate`] resizes and
//!   syncs. `create` of an existing file truncates that inode (hard links see it too), but the
//!   truncation is volatile: a crash before the next sync brings the old durable bytes back.
//! - **Names.** Creating a file or directory, renaming, removing and hard-linking change only
//!   the current entries of the directories involved. [`FileSystem::sync_dir`] makes one
//!   directory's entries durable: exactly that directory, not its parent and not its children.
//!   So a new directory survives a crash only once its *parent* is synced
//!   ([`crate::fs::create_dir_all_durably`] does that), and a rename across directories needs
//!   both directories synced; syncing only one of them can leave the file under both names or
//!   under neither after a crash. That is weaker than ext4 or XFS, whose journal commits a
//!   rename as a whole, and deliberately so: POSIX promises no more, and code that is correct
//!   here is correct there.
//! - **Crash** ([`FaultFs::crash`]). Every inode falls back to its durable state: each
//!   directory's entries become its durable entries, and each file keeps its durable bytes.
//!   What the durable names no longer reach (files created since the last sync of their
//!   directory) is gone. With [`TornWrites::Prefix`] each file whose unsynced part consists of
//!   appends keeps a random prefix (from none to all) of those appended bytes, as a disk that
//!   wrote some sectors of a write does; with [`TornWrites::PrefixThenGarbage`], half of the
//!   time the rest of the unsynced length (or a random part of it) is filled with random bytes
//!   instead, as when the file size reached the disk but the data did not. With
//!   [`TornWrites::Pages`] each 4 KiB page (aligned in the file) of the unsynced bytes survives
//!   or not on its own, so a later page can survive an earlier one, as when the kernel writes
//!   dirty pages back in any order: holes of old bytes (zeros past the durable end) between
//!   new ones. Whatever survives
//!   is durable from then on. Bytes overwritten in place tear the same way: a random prefix
//!   of the overwritten span takes the new bytes, possibly followed by garbage. The random choices come from the seed given to
//!   [`FaultFs::with_seed`], so a failing test replays exactly.
//! - **Handles.** A crash kills the process: every handle opened before it fails every call
//!   afterwards with an error. The file system itself stays usable, as the restarted process
//!   would find it. Fault rules and the torn-write setting survive crashes.
//!
//! # Error injection
//!
//! [`FaultFs::inject`] adds a rule: a set of [`FaultOp`]s, a [`PathFilter`], and how many times
//! (or forever). A matching operation fails with an `io::Error` wrapping [`InjectedFault`]
//! (check with [`is_injected`]) and changes nothing: a failed append appends nothing, a failed
//! sync leaves the data volatile. (A real kernel may instead drop the dirty pages after a failed
//! `fsync`, so that a later `fsync` succeeds without writing them; that is why the engine must
//! treat a failed sync as fatal rather than retry it, and why this model does not need to
//! simulate the difference.) Convenience wrappers cover the common cases:
//! [`FaultFs::fail_next_syncs`], [`FaultFs::fail_all_syncs`], [`FaultFs::fail_writes_containing`],
//! [`FaultFs::fail_reads_containing`] and friends.
//!
//! # Paths
//!
//! One namespace from one root: relative paths are resolved from the root, so `data/x` and
//! `/data/x` name the same file; `.` and `..` are resolved lexically. There are no symlinks,
//! permissions or timestamps. Inspection helpers ([`FaultFs::snapshot_state`],
//! [`FaultFs::list_files`]) report absolute paths.
//!
//! Everything sits behind one `parking_lot::Mutex`, which is plenty for tests and makes every
//! operation atomic with respect to a crash.

mod handles;
mod inject;
mod rng;
mod tree;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;

use self::handles::{FaultPreallocated, FaultReadable, FaultWritable, HandleRef};
use self::inject::Rules;
pub use self::inject::{FaultId, FaultOp, InjectedFault, PathFilter, is_injected};
use self::rng::SplitMix64;
use self::tree::{Ino, Tree};
use crate::fs::{FileSystem, PreallocatedFile, ReadableFile, WritableFile};

/// What a crash does to bytes appended but not yet synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TornWrites {
    /// All unsynced bytes are lost.
    #[default]
    Off,
    /// A random prefix of each file's unsynced bytes survives.
    Prefix,
    /// As `Prefix`, and half of the time random garbage follows the prefix, never making the
    /// file longer than it was before the crash.
    PrefixThenGarbage,
    /// Each 4 KiB page of the unsynced bytes survives with even odds, independently of the
    /// others (dirty pages written back in any order); a lost page keeps its old bytes, or
    /// zeros past the durable end when a later page survived.
    Pages,
}

/// A node in a [`FsSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotEntry {
    /// A directory (its entries are listed under their own paths).
    Dir,
    /// A regular file and its bytes in that view.
    File(Vec<u8>),
}

/// Both views of the whole file system, keyed by absolute path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsSnapshot {
    /// What the running process sees now.
    pub visible: BTreeMap<PathBuf, SnapshotEntry>,
    /// What a crash without torn writes would leave.
    pub durable: BTreeMap<PathBuf, SnapshotEntry>,
}

impl FsSnapshot {
    /// The visible content of the file at the absolute `path`.
    pub fn visible_file(&self, path: impl AsRef<Path>) -> Option<&[u8]> {
        match self.visible.get(path.as_ref())? {
            SnapshotEntry::File(bytes) => Some(bytes),
            SnapshotEntry::Dir => None,
        }
    }

    /// The durable content of the file at the absolute `path`.
    pub fn durable_file(&self, path: impl AsRef<Path>) -> Option<&[u8]> {
        match self.durable.get(path.as_ref())? {
            SnapshotEntry::File(bytes) => Some(bytes),
            SnapshotEntry::Dir => None,
        }
    }
}

#[derive(Debug)]
struct State {
    tree: Tree,
    /// Incremented by every crash; handles from an older epoch are dead.
    epoch: u64,
    rules: Rules,
    rng: SplitMix64,
    torn: TornWrites,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
}

/// The fault-injecting in-memory file system. Cloning gives another handle to the same file
/// system, so a test can keep one to pull the plug while the engine uses another.
#[derive(Clone)]
pub struct FaultFs {
    inner: Arc<Inner>,
}

impl Default for FaultFs {
    fn default() -> Self {
        FaultFs::new()
    }
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never block inside Debug: it may run while a test holds the lock in a panic message.
        match self.inner.state.try_lock() {
            Some(s) => f
                .debug_struct("FaultFs")
                .field("crashes", &s.epoch)
                .field("torn", &s.torn)
                .finish_non_exhaustive(),
            None => f.debug_struct("FaultFs").finish_non_exhaustive(),
        }
    }
}

impl FaultFs {
    /// An empty file system with seed 0.
    pub fn new() -> Self {
        FaultFs::with_seed(0)
    }

    /// An empty file system whose random choices (torn lengths, garbage) follow `seed`.
    pub fn with_seed(seed: u64) -> Self {
        let state = State {
            tree: Tree::new(),
            epoch: 0,
            rules: Rules::default(),
            rng: SplitMix64::new(seed),
            torn: TornWrites::Off,
        };
        FaultFs {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
            }),
        }
    }

    /// Choose what later crashes do to unsynced bytes.
    pub fn set_torn_writes(&self, torn: TornWrites) {
        self.inner.state.lock().torn = torn;
    }

    /// Pull the plug (see the module docs for exactly what survives).
    pub fn crash(&self) {
        let mut guard = self.inner.state.lock();
        let state = &mut *guard;
        state.epoch += 1;
        state.tree.crash(state.torn, &mut state.rng);
    }

    /// How many crashes this file system has been through.
    pub fn crashes(&self) -> u64 {
        self.inner.state.lock().epoch
    }

    /// Fail `ops` on paths `filter` accepts, `times` times (`None`: until removed).
    pub fn inject(&self, ops: &[FaultOp], filter: PathFilter, times: Option<u64>) -> FaultId {
        self.inner.state.lock().rules.add(ops, filter, times)
    }

    /// Remove one rule; false if it was already used up or removed.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.inner.state.lock().rules.remove(id)
    }

    /// Remove every rule.
    pub fn clear_faults(&self) {
        self.inner.state.lock().rules.clear();
    }

    /// How many operations have failed by injection so far.
    pub fn injected_count(&self) -> u64 {
        self.inner.state.lock().rules.injected()
    }

    /// Fail the next `n` syncs of any kind ([`FaultOp::SYNCS`]).
    pub fn fail_next_syncs(&self, n: u64) -> FaultId {
        self.inject(FaultOp::SYNCS, PathFilter::Any, Some(n))
    }

    /// Fail every sync from now on, as a dying disk does.
    pub fn fail_all_syncs(&self) -> FaultId {
        self.inject(FaultOp::SYNCS, PathFilter::Any, None)
    }

    /// Fail creates, opens for append and appends ([`FaultOp::WRITES`]) on paths containing `s`.
    pub fn fail_writes_containing(&self, s: &str) -> FaultId {
        self.inject(FaultOp::WRITES, PathFilter::contains(s), None)
    }

    /// Fail creates, opens for append and appends on paths `predicate` accepts.
    pub fn fail_writes_matching(
        &self,
        predicate: impl Fn(&Path) -> bool + Send + Sync + 'static,
    ) -> FaultId {
        self.inject(FaultOp::WRITES, PathFilter::matching(predicate), None)
    }

    /// Fail reads (not opens) of files whose path contains `s`.
    pub fn fail_reads_containing(&self, s: &str) -> FaultId {
        self.inject(&[FaultOp::Read], PathFilter::contains(s), None)
    }

    /// Fail reads (not opens) of files `predicate` accepts.
    pub fn fail_reads_matching(
        &self,
        predicate: impl Fn(&Path) -> bool + Send + Sync + 'static,
    ) -> FaultId {
        self.inject(&[FaultOp::Read], PathFilter::matching(predicate), None)
    }

    /// Fail the next `n` reads of any file.
    pub fn fail_next_reads(&self, n: u64) -> FaultId {
        self.inject(&[FaultOp::Read], PathFilter::Any, Some(n))
    }

    /// Invert every bit of one durable byte of the file at `path` (as bit rot would).
    pub fn flip_byte(&self, path: &Path, offset: u64) -> io::Result<()> {
        self.damage(path, offset, 1, |byte, _| !byte)
    }

    /// Overwrite `len` durable bytes from `offset` with random bytes, each guaranteed to
    /// differ from the byte it replaces.
    pub fn corrupt(&self, path: &Path, offset: u64, len: u64) -> io::Result<()> {
        self.damage(path, offset, len, |byte, random| byte ^ random.max(1))
    }

    /// Apply `change` to durable bytes `offset..offset + len`. Reads see the damage too when
    /// the bytes are also current (the page cache is assumed dropped); bytes the process has
    /// since overwritten by truncation are not touched in its view.
    fn damage(
        &self,
        path: &Path,
        offset: u64,
        len: u64,
        change: impl Fn(u8, u8) -> u8,
    ) -> io::Result<()> {
        let mut guard = self.inner.state.lock();
        let state = &mut *guard;
        let ino = state.tree.open_file(path)?;
        let file = state.tree.file_mut(ino).expect("open_file returns a file");
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= file.durable.len() as u64)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "FaultFs: damage beyond durable length of {}",
                        path.display()
                    ),
                )
            })?;
        for i in offset as usize..end as usize {
            let new = change(file.durable[i], state.rng.next_u64() as u8);
            file.durable[i] = new;
            let rewritten = file.overwritten.as_ref().is_some_and(|r| r.contains(&i));
            if file.durable_is_prefix && !rewritten {
                file.current[i] = new;
            }
        }
        Ok(())
    }

    /// Both views of the whole file system.
    pub fn snapshot_state(&self) -> FsSnapshot {
        self.inner.state.lock().tree.snapshot()
    }

    /// Every visible file (not directory), as sorted absolute paths.
    pub fn list_files(&self) -> Vec<PathBuf> {
        let snap = self.snapshot_state();
        snap.visible
            .into_iter()
            .filter(|(_, e)| matches!(e, SnapshotEntry::File(_)))
            .map(|(p, _)| p)
            .collect()
    }

    /// The visible bytes of the file at `path`, bypassing fault rules.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.inner.state.lock();
        let ino = state.tree.open_file(path).ok()?;
        Some(state.tree.file(ino)?.current.clone())
    }

    /// The bytes a crash (without torn writes) would leave at `path`: follows durable names
    /// and takes durable content.
    pub fn durable_contents(&self, path: &Path) -> Option<Vec<u8>> {
        Some(
            self.inner
                .state
                .lock()
                .tree
                .durable_file(path)?
                .durable
                .clone(),
        )
    }

    /// How many appended bytes of the file at `path` are not yet synced.
    pub fn unsynced_len(&self, path: &Path) -> Option<u64> {
        let state = self.inner.state.lock();
        let ino = state.tree.open_file(path).ok()?;
        Some(state.tree.file(ino)?.unsynced_len())
    }

    /// Lock, check the rules for `op` on `paths`, then run `f`.
    fn op<T>(
        &self,
        op: FaultOp,
        paths: &[&Path],
        f: impl FnOnce(&mut State) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut state = self.inner.state.lock();
        state.rules.check(op, paths)?;
        f(&mut state)
    }

    /// Register an open handle on `ino` (which keeps an unlinked file alive).
    fn open_handle(&self, state: &mut State, ino: Ino, path: &Path) -> HandleRef {
        state
            .tree
            .inode_mut(ino)
            .expect("just resolved")
            .open_handles += 1;
        HandleRef {
            inner: Arc::clone(&self.inner),
            ino,
            epoch: state.epoch,
            path: path.to_path_buf(),
        }
    }

    fn writable(&self, state: &mut State, ino: Ino, path: &Path) -> Arc<dyn WritableFile> {
        let len = state.tree.file(ino).expect("a file").current.len() as u64;
        Arc::new(FaultWritable {
            handle: self.open_handle(state, ino, path),
            len: AtomicU64::new(len),
        })
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::CreateDir, &[path], |s| s.tree.create_dir_all(path))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.op(FaultOp::ListDir, &[path], |s| s.tree.list_dir(path))
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        self.op(FaultOp::Create, &[path], |s| {
            let ino = s.tree.create_file(path)?;
            Ok(self.writable(s, ino, path))
        })
    }

    fn create_preallocated(&self, path: &Path, len: u64) -> io::Result<Arc<dyn PreallocatedFile>> {
        self.op(FaultOp::Create, &[path], |s| {
            let size = usize::try_from(len)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("FaultFs: cannot preallocate {len} bytes"),
                    )
                })?;
            let ino = s.tree.create_file(path)?;
            s.tree.file_mut(ino).expect("a file").preallocate(size);
            Ok(Arc::new(FaultPreallocated {
                handle: self.open_handle(s, ino, path),
                len,
            }) as Arc<dyn PreallocatedFile>)
        })
    }

    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WritableFile>> {
        self.op(FaultOp::OpenAppend, &[path], |s| {
            let ino = s.tree.open_file(path)?;
            Ok(self.writable(s, ino, path))
        })
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadableFile>> {
        self.op(FaultOp::OpenRead, &[path], |s| {
            let ino = s.tree.open_file(path)?;
            let len = s.tree.file(ino).expect("a file").current.len() as u64;
            Ok(Arc::new(FaultReadable {
                handle: self.open_handle(s, ino, path),
                len,
            }) as Arc<dyn ReadableFile>)
        })
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.op(FaultOp::Rename, &[from, to], |s| s.tree.rename(from, to))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::RemoveFile, &[path], |s| s.tree.remove_file(path))
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::RemoveDir, &[path], |s| s.tree.remove_dir_all(path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::SyncDir, &[path], |s| s.tree.sync_dir(path))
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.op(FaultOp::HardLink, &[from, to], |s| {
            s.tree.hard_link(from, to)
        })
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.state.lock().tree.lookup(path).is_some()
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.op(FaultOp::Truncate, &[path], |s| {
            let ino = s.tree.open_file(path)?;
            let len = usize::try_from(len)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
            s.tree.file_mut(ino).expect("a file").set_len_durably(len);
            Ok(())
        })
    }
}
