//! Error injection rules for [`super::FaultFs`]: which operation, on which paths, how many
//! times.
//!
//! A rule names a set of [`FaultOp`]s, a [`PathFilter`] and an optional count. Each operation
//! asks the rules in the order they were added; the first rule that matches and still has
//! uses left fails the operation with an [`InjectedFault`] error and uses one up. A failed
//! operation changes nothing (a failed append appends nothing, a failed sync makes nothing
//! durable).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An operation that can be made to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// [`crate::FileSystem::create`] and [`crate::FileSystem::create_preallocated`].
    Create,
    /// [`crate::FileSystem::open_append`].
    OpenAppend,
    /// [`crate::WritableFile::append`] and [`crate::PreallocatedFile::write_at`] (matched
    /// against the path the file was opened by).
    Append,
    /// [`crate::WritableFile::sync`] and [`crate::PreallocatedFile::sync`].
    Sync,
    /// [`crate::FileSystem::sync_dir`].
    SyncDir,
    /// [`crate::FileSystem::truncate`] (which also syncs).
    Truncate,
    /// [`crate::FileSystem::open_read`].
    OpenRead,
    /// [`crate::ReadableFile::read_exact_at`] (matched against the path the file was opened by).
    Read,
    /// [`crate::FileSystem::rename`] (matched against both paths).
    Rename,
    /// [`crate::FileSystem::remove_file`].
    RemoveFile,
    /// [`crate::FileSystem::remove_dir_all`].
    RemoveDir,
    /// [`crate::FileSystem::hard_link`] (matched against both paths).
    HardLink,
    /// [`crate::FileSystem::create_dir_all`].
    CreateDir,
    /// [`crate::FileSystem::list_dir`].
    ListDir,
}

impl FaultOp {
    /// Every operation that asks the device to persist something.
    /// Every operation: inject these for a path filter of `Any` to model a dead process, whose
    /// file operations can no longer happen (do it *before* `crash()`, so that nothing the
    /// dying process still runs lands on the disk after the power cut).
    pub const ALL: &'static [FaultOp] = &[
        FaultOp::Create,
        FaultOp::OpenAppend,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::SyncDir,
        FaultOp::Truncate,
        FaultOp::OpenRead,
        FaultOp::Read,
        FaultOp::Rename,
        FaultOp::RemoveFile,
        FaultOp::RemoveDir,
        FaultOp::HardLink,
        FaultOp::CreateDir,
        FaultOp::ListDir,
    ];
    pub const SYNCS: &'static [FaultOp] = &[FaultOp::Sync, FaultOp::SyncDir, FaultOp::Truncate];
    /// Every operation that writes file data or creates a file.
    pub const WRITES: &'static [FaultOp] = &[FaultOp::Create, FaultOp::OpenAppend, FaultOp::Append];
}

/// Which paths a rule applies to.
#[derive(Clone)]
pub enum PathFilter {
    /// Every path.
    Any,
    /// Paths whose display form contains this substring.
    Contains(String),
    /// Paths the predicate accepts. It runs under the file system's lock, so it must not call
    /// back into the same `FaultFs`.
    Matching(Arc<dyn Fn(&Path) -> bool + Send + Sync>),
}

impl PathFilter {
    /// Paths containing `s`.
    pub fn contains(s: impl Into<String>) -> Self {
        PathFilter::Contains(s.into())
    }

    /// Paths accepted by `predicate`.
    pub fn matching(predicate: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        PathFilter::Matching(Arc::new(predicate))
    }

    fn accepts(&self, path: &Path) -> bool {
        match self {
            PathFilter::Any => true,
            PathFilter::Contains(s) => path.to_string_lossy().contains(s.as_str()),
            PathFilter::Matching(p) => p(path),
        }
    }
}

impl fmt::Debug for PathFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathFilter::Any => f.write_str("Any"),
            PathFilter::Contains(s) => f.debug_tuple("Contains").field(s).finish(),
            PathFilter::Matching(_) => f.write_str("Matching(..)"),
        }
    }
}

/// Names a rule so a test can remove it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FaultId(u64);

/// The error an injected failure returns, wrapped in an [`io::Error`] of kind `Other`.
/// Recognise it with [`is_injected`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("FaultFs: injected {op:?} failure on {}", path.display())]
pub struct InjectedFault {
    /// The operation that failed.
    pub op: FaultOp,
    /// The path it was matched against.
    pub path: PathBuf,
}

/// Whether `err` came from an injected fault (as opposed to a genuine error such as
/// `NotFound`).
pub fn is_injected(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<InjectedFault>())
}

#[derive(Debug)]
struct Rule {
    id: FaultId,
    ops: Vec<FaultOp>,
    filter: PathFilter,
    /// Uses left; `None` means forever.
    remaining: Option<u64>,
}

/// The active rules and a count of failures injected so far.
#[derive(Debug, Default)]
pub(super) struct Rules {
    rules: Vec<Rule>,
    next_id: u64,
    injected: u64,
}

impl Rules {
    pub(super) fn add(
        &mut self,
        ops: &[FaultOp],
        filter: PathFilter,
        times: Option<u64>,
    ) -> FaultId {
        let id = FaultId(self.next_id);
        self.next_id += 1;
        if times != Some(0) {
            self.rules.push(Rule {
                id,
                ops: ops.to_vec(),
                filter,
                remaining: times,
            });
        }
        id
    }

    pub(super) fn remove(&mut self, id: FaultId) -> bool {
        let before = self.rules.len();
        self.rules.retain(|r| r.id != id);
        self.rules.len() != before
    }

    pub(super) fn clear(&mut self) {
        self.rules.clear();
    }

    pub(super) fn injected(&self) -> u64 {
        self.injected
    }

    /// Fail `op` on `paths` if a rule says so.
    pub(super) fn check(&mut self, op: FaultOp, paths: &[&Path]) -> io::Result<()> {
        let hit = self
            .rules
            .iter()
            .position(|r| r.ops.contains(&op) && paths.iter().any(|p| r.filter.accepts(p)));
        let Some(index) = hit else { return Ok(()) };
        let rule = &mut self.rules[index];
        let path = paths
            .iter()
            .copied()
            .find(|p| rule.filter.accepts(p))
            .unwrap_or(Path::new(""))
            .to_path_buf();
        if let Some(left) = &mut rule.remaining {
            *left -= 1;
            if *left == 0 {
                self.rules.remove(index);
            }
        }
        self.injected += 1;
        Err(io::Error::other(InjectedFault { op, path }))
    }
}
