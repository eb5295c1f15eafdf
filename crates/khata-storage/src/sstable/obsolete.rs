//! Obsolescence logs: the SSTables a compaction replaced (or a truncate removed) are named in a
//! small durable file before any of their files is deleted, and the file goes once all of them
//! are gone.
//!
//! Without it a crash in the middle of the deletions could leave some inputs of a compaction
//! and not others: if the one left holds data that a tombstone in a deleted one shadowed, and
//! the compaction purged that tombstone (past `gc_grace_seconds`), the data comes back. With
//! it, start-up deletes whatever the logs still name before the directory's SSTables are
//! opened ([`finish_pending`]): a set of inputs goes whole or not at all. The outputs of the
//! compaction are durable before its log is written, so nothing the log names is needed.
//!
//! A log is `obsolete-<least generation>.log`: the line `khata-obsolete 1`, one generation per
//! line, and `crc32c <hex>` of what precedes. It is written to a `.tmp` file, synced and
//! renamed (a `.tmp` log is one that was never in force and is removed at start-up). A log
//! that fails its checksum is refused: the node does not start rather than guess.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use khata_env::{FileSystem, write_file_durably};

use super::format::{Component, component_path};
use crate::error::{Result, StorageError};

const HEADER: &str = "khata-obsolete 1";
const PREFIX: &str = "obsolete-";
const SUFFIX: &str = ".log";

/// A log in force: dropped (once every SSTable it names has deleted its files), it removes
/// its file, unless a deletion failed ([`ObsoleteLog::keep`]): start-up then retries them.
#[derive(Debug)]
pub struct ObsoleteLog {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    keep: AtomicBool,
}

impl ObsoleteLog {
    /// Write, durably, the log naming `generations` of `dir`.
    pub fn write(fs: Arc<dyn FileSystem>, dir: &Path, generations: &[u64]) -> Result<Arc<Self>> {
        let least = generations.iter().min().copied().unwrap_or_default();
        let path = dir.join(format!("{PREFIX}{least}{SUFFIX}"));
        write_file_durably(fs.as_ref(), &path, encode(generations).as_bytes())
            .map_err(|e| StorageError::io(&path, e))?;
        Ok(Arc::new(ObsoleteLog {
            fs,
            path,
            keep: AtomicBool::new(false),
        }))
    }

    /// A file the log names could not be deleted: keep the log for the next start.
    pub fn keep(&self) {
        self.keep.store(true, Ordering::Release);
    }
}

impl Drop for ObsoleteLog {
    fn drop(&mut self) {
        if self.keep.load(Ordering::Acquire) {
            return;
        }
        // Best effort: a log left behind names files that no longer exist, which start-up
        // finds and removes.
        if let Err(e) = self.fs.remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), error = %e, "could not remove an obsolescence log");
        }
    }
}

fn encode(generations: &[u64]) -> String {
    let mut body = format!("{HEADER}\n");
    for g in generations {
        body.push_str(&format!("{g}\n"));
    }
    let crc = crc32c::crc32c(body.as_bytes());
    format!("{body}crc32c {crc:08x}\n")
}

/// The generations a log names, or `None` if it is damaged.
fn decode(text: &str) -> Option<Vec<u64>> {
    let body_end = text.trim_end_matches('\n').rfind('\n')? + 1;
    let (body, trailer) = text.split_at(body_end);
    let crc = u32::from_str_radix(trailer.trim().strip_prefix("crc32c ")?, 16).ok()?;
    if crc32c::crc32c(body.as_bytes()) != crc {
        return None;
    }
    let mut lines = body.lines();
    if lines.next()? != HEADER {
        return None;
    }
    lines.map(|l| l.parse().ok()).collect()
}

/// Delete the TOC of every SSTable the logs in `dir` name, then the logs. Call it at start-up
/// before [`super::SsTable::remove_incomplete`], which removes the rest of their files as it
/// removes any SSTable without a TOC. Returns the generations whose TOC was there.
pub fn finish_pending(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    let mut deleted = Vec::new();
    let mut changed = false;
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.starts_with(PREFIX) {
            continue;
        }
        if name.ends_with(".tmp") {
            fs.remove_file(&path)
                .map_err(|e| StorageError::io(&path, e))?;
            changed = true;
            continue;
        }
        if !name.ends_with(SUFFIX) {
            continue;
        }
        let bytes = crate::engine::read_all(fs, &path)?;
        let generations = std::str::from_utf8(&bytes)
            .ok()
            .and_then(decode)
            .ok_or_else(|| StorageError::corrupt(&path, 0, "damaged obsolescence log"))?;
        for g in generations {
            let toc = component_path(dir, g, Component::Toc);
            match fs.remove_file(&toc) {
                Ok(()) => deleted.push(g),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io(&toc, e)),
            }
        }
        // The deletions are durable before the log that asked for them goes.
        fs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
        fs.remove_file(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        changed = true;
    }
    if changed {
        fs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_round_trip_and_refuse_damage() {
        let text = encode(&[7, 3, 12]);
        assert_eq!(decode(&text), Some(vec![7, 3, 12]));
        assert_eq!(decode(&text.replace('7', "8")), None);
        assert_eq!(decode(&text[..text.len() - 3]), None);
        assert_eq!(decode(""), None);
        assert_eq!(decode(&encode(&[])), Some(vec![]));
    }
}
