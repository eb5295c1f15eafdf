//! The in-memory inode tree behind [`super::FaultFs`]: what the process sees and what the disk
//! holds, kept side by side.
//!
//! Every inode carries two states. A file has `current` bytes (what reads see: the page cache)
//! and `durable` bytes (what is on the platter). A directory has `entries` (the names the
//! process sees) and `durable` entries (the names a crash would leave). File `sync` copies a
//! file's current bytes to its durable bytes; `sync_dir` copies a directory's entries to its
//! durable entries. A crash copies every durable state back over the current state and drops
//! the inodes nothing reaches any more.
//!
//! Paths resolve only through current entries, from one root. The tree knows nothing about
//! fault injection or handles' lifetimes beyond a per-inode open count used to keep unlinked
//! but open files alive.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::rng::SplitMix64;
use super::{FsSnapshot, SnapshotEntry, TornWrites};

/// An inode number. Never reused within one [`Tree`].
pub(super) type Ino = u64;

/// A regular file's bytes.
#[derive(Debug, Default)]
pub(super) struct FileData {
    /// What survives a power cut.
    pub(super) durable: Vec<u8>,
    /// What reads see.
    pub(super) current: Vec<u8>,
    /// Invariant: when true, `current` starts with `durable` (only appends happened since the
    /// last sync), so a sync copies just the tail and a torn write keeps a prefix of the tail.
    /// False after a volatile truncation (`create` over an existing file).
    ///
    /// In-place writes ([`FileData::write_at`], a preallocated file) may change bytes that are
    /// durable; those lie in `overwritten`, and the invariant holds outside it.
    pub(super) durable_is_prefix: bool,
    /// The span of durable bytes overwritten in place since the last sync (when
    /// `durable_is_prefix`): their durable content is still the old one.
    pub(super) overwritten: Option<std::ops::Range<usize>>,
}

impl FileData {
    fn new() -> Self {
        FileData {
            durable: Vec::new(),
            current: Vec::new(),
            durable_is_prefix: true,
            overwritten: None,
        }
    }

    /// Write `buf` at `offset` in place; `false` (nothing written) if it runs past the end.
    pub(super) fn write_at(&mut self, offset: usize, buf: &[u8]) -> bool {
        let Some(end) = offset
            .checked_add(buf.len())
            .filter(|&end| end <= self.current.len())
        else {
            return false;
        };
        self.current[offset..end].copy_from_slice(buf);
        let durable = self.durable.len();
        if self.durable_is_prefix && offset < durable && !buf.is_empty() {
            let hit = offset..end.min(durable);
            self.overwritten = Some(match self.overwritten.take() {
                Some(r) => r.start.min(hit.start)..r.end.max(hit.end),
                None => hit,
            });
        }
        true
    }

    /// A preallocated file's bytes: `len` zeros, none durable yet (as `create` + `fallocate`).
    pub(super) fn preallocate(&mut self, len: usize) {
        self.truncate_volatile();
        self.current.resize(len, 0);
    }

    pub(super) fn append(&mut self, buf: &[u8]) {
        self.current.extend_from_slice(buf);
    }

    /// Make the current bytes durable.
    pub(super) fn sync(&mut self) {
        if self.durable_is_prefix {
            if let Some(r) = self.overwritten.take() {
                self.durable[r.clone()].copy_from_slice(&self.current[r]);
            }
            assert!(
                self.durable.len() <= self.current.len(),
                "durable prefix longer than file"
            );
            debug_assert!(self.current.starts_with(&self.durable));
            let from = self.durable.len();
            self.durable.extend_from_slice(&self.current[from..]);
        } else {
            self.durable.clone_from(&self.current);
            self.durable_is_prefix = true;
        }
    }

    /// `O_TRUNC`: the file is empty now, but the old durable bytes stay until the next sync.
    fn truncate_volatile(&mut self) {
        self.current.clear();
        self.durable_is_prefix = self.durable.is_empty();
        self.overwritten = None;
    }

    /// `ftruncate` + `fsync`: resize (zero-filling when growing) and make it durable.
    pub(super) fn set_len_durably(&mut self, len: usize) {
        self.current.resize(len, 0);
        self.durable.clone_from(&self.current);
        self.durable_is_prefix = true;
        self.overwritten = None;
    }

    /// Bytes appended or overwritten in place since the last sync, if the file has not been
    /// truncated since.
    pub(super) fn unsynced_len(&self) -> u64 {
        if self.durable_is_prefix {
            let overwritten = self.overwritten.as_ref().map_or(0, |r| r.len());
            (self.current.len() - self.durable.len() + overwritten) as u64
        } else {
            0
        }
    }

    /// The power cut: keep the durable bytes, plus (when tearing) a random prefix of the
    /// unsynced tail, possibly followed by garbage where the rest of the tail should be, or
    /// (with [`TornWrites::Pages`]) a random subset of its pages.
    ///
    /// Bytes overwritten in place are torn the same way: a random prefix of the overwritten
    /// span takes its new bytes (pages written back in order), possibly followed by garbage,
    /// or a random subset of its pages does.
    fn crash(&mut self, torn: TornWrites, rng: &mut SplitMix64) {
        let tail_len = if self.durable_is_prefix {
            self.current.len() - self.durable.len()
        } else {
            0
        };
        let mut survivor = std::mem::take(&mut self.durable);
        if let Some(r) = self.overwritten.take() {
            match torn {
                TornWrites::Off => {}
                TornWrites::Pages => {
                    for page in pages(r) {
                        if rng.coin() {
                            survivor[page.clone()].copy_from_slice(&self.current[page]);
                        }
                    }
                }
                TornWrites::Prefix | TornWrites::PrefixThenGarbage => {
                    let keep = rng.up_to(r.len() as u64) as usize;
                    let kept_end = r.start + keep;
                    survivor[r.start..kept_end].copy_from_slice(&self.current[r.start..kept_end]);
                    if torn == TornWrites::PrefixThenGarbage && kept_end < r.end && rng.coin() {
                        let garbage_len = 1 + rng.up_to((r.end - kept_end) as u64 - 1) as usize;
                        rng.fill(&mut survivor[kept_end..kept_end + garbage_len]);
                    }
                }
            }
        }
        if tail_len > 0 {
            let from = survivor.len();
            match torn {
                TornWrites::Off => {}
                TornWrites::Pages => {
                    let kept: Vec<_> = pages(from..from + tail_len)
                        .filter(|_| rng.coin())
                        .collect();
                    if let Some(last) = kept.last() {
                        survivor.resize(last.end, 0);
                    }
                    for page in kept {
                        survivor[page.clone()].copy_from_slice(&self.current[page]);
                    }
                }
                TornWrites::Prefix | TornWrites::PrefixThenGarbage => {
                    let keep = rng.up_to(tail_len as u64) as usize;
                    survivor.extend_from_slice(&self.current[from..from + keep]);
                    let room = tail_len - keep;
                    if torn == TornWrites::PrefixThenGarbage && room > 0 && rng.coin() {
                        let garbage_len = 1 + rng.up_to(room as u64 - 1) as usize;
                        let start = survivor.len();
                        survivor.resize(start + garbage_len, 0);
                        rng.fill(&mut survivor[start..]);
                    }
                }
            }
        }
        // After the crash the disk holds exactly what the process will read.
        self.current.clone_from(&survivor);
        self.durable = survivor;
        self.durable_is_prefix = true;
    }
}

/// The page size of [`TornWrites::Pages`].
const PAGE: usize = 4096;

/// `range` cut at the file's page boundaries.
fn pages(range: std::ops::Range<usize>) -> impl Iterator<Item = std::ops::Range<usize>> {
    let end = range.end;
    std::iter::successors(Some(range.start).filter(|&s| s < end), move |&s| {
        let next = (s / PAGE + 1) * PAGE;
        (next < end).then_some(next)
    })
    .map(move |s| s..((s / PAGE + 1) * PAGE).min(end))
}

/// A directory's names.
#[derive(Debug, Default)]
pub(super) struct DirData {
    pub(super) entries: BTreeMap<OsString, Ino>,
    pub(super) durable: BTreeMap<OsString, Ino>,
}

#[derive(Debug)]
pub(super) enum Node {
    File(FileData),
    Dir(DirData),
}

#[derive(Debug)]
pub(super) struct Inode {
    pub(super) node: Node,
    /// Handles open in the current epoch; an unlinked file stays alive while this is non-zero.
    pub(super) open_handles: u32,
}

/// The whole file system: inodes by number (a `BTreeMap` so a crash visits them in the same
/// order every run and a seed replays exactly).
#[derive(Debug)]
pub(super) struct Tree {
    inodes: BTreeMap<Ino, Inode>,
    next_ino: Ino,
    root: Ino,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("FaultFs: no such file or directory: {}", path.display()),
    )
}

fn error(kind: io::ErrorKind, what: &str, path: &Path) -> io::Error {
    io::Error::new(kind, format!("FaultFs: {what}: {}", path.display()))
}

/// Lexical normalisation: `.` dropped, `..` pops, relative paths start at the root.
fn components(path: &Path) -> Vec<OsString> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push(name.to_os_string()),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

impl Tree {
    pub(super) fn new() -> Self {
        let root = 1;
        let mut inodes = BTreeMap::new();
        inodes.insert(
            root,
            Inode {
                node: Node::Dir(DirData::default()),
                open_handles: 0,
            },
        );
        Tree {
            inodes,
            next_ino: root + 1,
            root,
        }
    }

    fn alloc(&mut self, node: Node) -> Ino {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(
            ino,
            Inode {
                node,
                open_handles: 0,
            },
        );
        ino
    }

    pub(super) fn inode_mut(&mut self, ino: Ino) -> Option<&mut Inode> {
        self.inodes.get_mut(&ino)
    }

    pub(super) fn file_mut(&mut self, ino: Ino) -> Option<&mut FileData> {
        match &mut self.inodes.get_mut(&ino)?.node {
            Node::File(f) => Some(f),
            Node::Dir(_) => None,
        }
    }

    pub(super) fn file(&self, ino: Ino) -> Option<&FileData> {
        match &self.inodes.get(&ino)?.node {
            Node::File(f) => Some(f),
            Node::Dir(_) => None,
        }
    }

    fn dir(&self, ino: Ino) -> Option<&DirData> {
        match &self.inodes.get(&ino)?.node {
            Node::Dir(d) => Some(d),
            Node::File(_) => None,
        }
    }

    fn dir_mut(&mut self, ino: Ino) -> Option<&mut DirData> {
        match &mut self.inodes.get_mut(&ino)?.node {
            Node::Dir(d) => Some(d),
            Node::File(_) => None,
        }
    }

    /// Resolve a path through current entries.
    pub(super) fn lookup(&self, path: &Path) -> Option<Ino> {
        let mut ino = self.root;
        for name in components(path) {
            ino = *self.dir(ino)?.entries.get(&name)?;
        }
        Some(ino)
    }

    /// Resolve through durable entries: the inode this name would lead to after a crash.
    fn lookup_durable(&self, path: &Path) -> Option<Ino> {
        let mut ino = self.root;
        for name in components(path) {
            ino = *self.dir(ino)?.durable.get(&name)?;
        }
        Some(ino)
    }

    /// The directory that holds `path`'s last component, and that component.
    fn parent_of(&self, path: &Path) -> io::Result<(Ino, OsString)> {
        let mut parts = components(path);
        let name = parts
            .pop()
            .ok_or_else(|| error(io::ErrorKind::InvalidInput, "path names the root", path))?;
        let mut ino = self.root;
        for part in parts {
            let dir = self
                .dir(ino)
                .ok_or_else(|| error(io::ErrorKind::NotADirectory, "not a directory", path))?;
            ino = *dir.entries.get(&part).ok_or_else(|| not_found(path))?;
        }
        if self.dir(ino).is_none() {
            return Err(error(io::ErrorKind::NotADirectory, "not a directory", path));
        }
        Ok((ino, name))
    }

    pub(super) fn is_dir(&self, ino: Ino) -> bool {
        self.dir(ino).is_some()
    }

    pub(super) fn create_dir_all(&mut self, path: &Path) -> io::Result<()> {
        let mut ino = self.root;
        for name in components(path) {
            let existing = self
                .dir(ino)
                .ok_or_else(|| error(io::ErrorKind::NotADirectory, "not a directory", path))?
                .entries
                .get(&name)
                .copied();
            ino = match existing {
                Some(child) => child,
                None => {
                    let child = self.alloc(Node::Dir(DirData::default()));
                    self.dir_mut(ino)
                        .expect("checked above")
                        .entries
                        .insert(name, child);
                    child
                }
            };
        }
        if self.is_dir(ino) {
            Ok(())
        } else {
            Err(error(
                io::ErrorKind::AlreadyExists,
                "exists and is a file",
                path,
            ))
        }
    }

    /// `open(O_CREAT | O_TRUNC)`: a new inode, or the existing one truncated in place (so hard
    /// links to it see the truncation, as on a real file system).
    pub(super) fn create_file(&mut self, path: &Path) -> io::Result<Ino> {
        let (parent, name) = self.parent_of(path)?;
        let existing = self
            .dir(parent)
            .expect("parent_of returns a directory")
            .entries
            .get(&name)
            .copied();
        match existing {
            Some(ino) => {
                let file = self
                    .file_mut(ino)
                    .ok_or_else(|| error(io::ErrorKind::IsADirectory, "is a directory", path))?;
                file.truncate_volatile();
                Ok(ino)
            }
            None => {
                let ino = self.alloc(Node::File(FileData::new()));
                self.dir_mut(parent)
                    .expect("parent_of returns a directory")
                    .entries
                    .insert(name, ino);
                Ok(ino)
            }
        }
    }

    pub(super) fn open_file(&self, path: &Path) -> io::Result<Ino> {
        let ino = self.lookup(path).ok_or_else(|| not_found(path))?;
        if self.is_dir(ino) {
            return Err(error(io::ErrorKind::IsADirectory, "is a directory", path));
        }
        Ok(ino)
    }

    pub(super) fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let ino = self.lookup(path).ok_or_else(|| not_found(path))?;
        let dir = self
            .dir(ino)
            .ok_or_else(|| error(io::ErrorKind::NotADirectory, "not a directory", path))?;
        Ok(dir.entries.keys().map(|name| path.join(name)).collect())
    }

    pub(super) fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_parent, from_name) = self.parent_of(from)?;
        let src = *self
            .dir(from_parent)
            .expect("directory")
            .entries
            .get(&from_name)
            .ok_or_else(|| not_found(from))?;
        let (to_parent, to_name) = self.parent_of(to)?;
        let (from_parts, to_parts) = (components(from), components(to));
        if from_parts == to_parts {
            return Ok(());
        }
        if self.is_dir(src) && to_parts.starts_with(&from_parts) {
            return Err(error(
                io::ErrorKind::InvalidInput,
                "cannot move a directory into itself",
                to,
            ));
        }
        if let Some(dst) = self
            .dir(to_parent)
            .expect("directory")
            .entries
            .get(&to_name)
            .copied()
        {
            if dst == src {
                // POSIX: renaming one hard link onto another of the same file does nothing.
                return Ok(());
            }
            match (self.is_dir(src), self.dir(dst)) {
                (false, Some(_)) => {
                    return Err(error(io::ErrorKind::IsADirectory, "is a directory", to));
                }
                (true, None) => {
                    return Err(error(io::ErrorKind::NotADirectory, "not a directory", to));
                }
                (true, Some(d)) if !d.entries.is_empty() => {
                    return Err(error(
                        io::ErrorKind::DirectoryNotEmpty,
                        "directory not empty",
                        to,
                    ));
                }
                _ => {}
            }
        }
        self.dir_mut(from_parent)
            .expect("directory")
            .entries
            .remove(&from_name);
        self.dir_mut(to_parent)
            .expect("directory")
            .entries
            .insert(to_name, src);
        self.collect_garbage();
        Ok(())
    }

    pub(super) fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        let ino = *self
            .dir(parent)
            .expect("directory")
            .entries
            .get(&name)
            .ok_or_else(|| not_found(path))?;
        if self.is_dir(ino) {
            return Err(error(io::ErrorKind::IsADirectory, "is a directory", path));
        }
        self.dir_mut(parent)
            .expect("directory")
            .entries
            .remove(&name);
        self.collect_garbage();
        Ok(())
    }

    /// Unlink a directory from its parent. Its own entries are left alone: if the unlink is
    /// lost in a crash, the subtree comes back as its durable entries describe it.
    pub(super) fn remove_dir_all(&mut self, path: &Path) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        let ino = *self
            .dir(parent)
            .expect("directory")
            .entries
            .get(&name)
            .ok_or_else(|| not_found(path))?;
        if !self.is_dir(ino) {
            return Err(error(io::ErrorKind::NotADirectory, "not a directory", path));
        }
        self.dir_mut(parent)
            .expect("directory")
            .entries
            .remove(&name);
        self.collect_garbage();
        Ok(())
    }

    pub(super) fn hard_link(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let src = self.lookup(from).ok_or_else(|| not_found(from))?;
        if self.is_dir(src) {
            return Err(error(
                io::ErrorKind::PermissionDenied,
                "cannot hard-link a directory",
                from,
            ));
        }
        let (to_parent, to_name) = self.parent_of(to)?;
        let dir = self.dir_mut(to_parent).expect("directory");
        if dir.entries.contains_key(&to_name) {
            return Err(error(io::ErrorKind::AlreadyExists, "file exists", to));
        }
        dir.entries.insert(to_name, src);
        Ok(())
    }

    pub(super) fn sync_dir(&mut self, path: &Path) -> io::Result<()> {
        let ino = self.lookup(path).ok_or_else(|| not_found(path))?;
        let dir = self
            .dir_mut(ino)
            .ok_or_else(|| error(io::ErrorKind::NotADirectory, "not a directory", path))?;
        dir.durable.clone_from(&dir.entries);
        // Names dropped from the durable view may have been the last thing keeping an inode.
        self.collect_garbage();
        Ok(())
    }

    /// The power cut. Every inode falls back to its durable state (files possibly torn), no
    /// handle is open any more, and whatever the durable names no longer reach is gone.
    pub(super) fn crash(&mut self, torn: TornWrites, rng: &mut SplitMix64) {
        for inode in self.inodes.values_mut() {
            inode.open_handles = 0;
            match &mut inode.node {
                Node::File(f) => f.crash(torn, rng),
                Node::Dir(d) => d.entries.clone_from(&d.durable),
            }
        }
        self.collect_garbage();
    }

    /// Mark from the root (through current and durable names) and from open handles; sweep
    /// the rest.
    pub(super) fn collect_garbage(&mut self) {
        let mut live = BTreeSet::new();
        let mut stack: Vec<Ino> = std::iter::once(self.root)
            .chain(
                self.inodes
                    .iter()
                    .filter(|(_, i)| i.open_handles > 0)
                    .map(|(ino, _)| *ino),
            )
            .collect();
        while let Some(ino) = stack.pop() {
            if !live.insert(ino) {
                continue;
            }
            if let Some(dir) = self.dir(ino) {
                stack.extend(dir.entries.values().chain(dir.durable.values()).copied());
            }
        }
        self.inodes.retain(|ino, _| live.contains(ino));
    }

    /// The durable bytes of the file a crash would leave at `path`, if any.
    pub(super) fn durable_file(&self, path: &Path) -> Option<&FileData> {
        self.file(self.lookup_durable(path)?)
    }

    /// Both views, as absolute paths.
    pub(super) fn snapshot(&self) -> FsSnapshot {
        let mut snap = FsSnapshot::default();
        let mut on_path = Vec::new();
        self.walk(
            self.root,
            PathBuf::from("/"),
            false,
            &mut on_path,
            &mut snap.visible,
        );
        self.walk(
            self.root,
            PathBuf::from("/"),
            true,
            &mut on_path,
            &mut snap.durable,
        );
        snap
    }

    /// Depth-first listing. `on_path` holds the directories being walked: with per-directory
    /// durability, un-synced cross-directory renames of directories can leave a cycle in the
    /// durable view, which the walk must not follow forever.
    fn walk(
        &self,
        ino: Ino,
        path: PathBuf,
        durable: bool,
        on_path: &mut Vec<Ino>,
        out: &mut BTreeMap<PathBuf, SnapshotEntry>,
    ) {
        let Some(dir) = self.dir(ino) else { return };
        if on_path.contains(&ino) {
            return;
        }
        on_path.push(ino);
        let names = if durable { &dir.durable } else { &dir.entries };
        for (name, child) in names {
            let child_path = path.join(name);
            match &self.inodes[child].node {
                Node::File(f) => {
                    let bytes = if durable {
                        f.durable.clone()
                    } else {
                        f.current.clone()
                    };
                    out.insert(child_path, SnapshotEntry::File(bytes));
                }
                Node::Dir(_) => {
                    out.insert(child_path.clone(), SnapshotEntry::Dir);
                    self.walk(*child, child_path, durable, on_path, out);
                }
            }
        }
        on_path.pop();
    }
}
