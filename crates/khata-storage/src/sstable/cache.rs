//! The block cache: decompressed Data chunks and verified Index pages, shared by every SSTable.
//!
//! Bounded by a capacity in bytes (each entry is charged its length plus a fixed overhead).
//! The cache is split into shards, each an exact LRU behind its own mutex, so it is
//! approximately LRU overall and threads rarely contend. Entries are keyed by a process-unique
//! SSTable id (never the generation, which repeats across tables), so an entry can never be
//! served for another file; the entries of a deleted SSTable simply age out.
//!
//! Only checksum-verified bytes enter the cache.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

/// Number of independently locked shards.
const SHARDS: usize = 16;
/// Bytes charged per entry on top of its length (map and list bookkeeping).
const ENTRY_OVERHEAD_BYTES: usize = 96;

/// What a cache entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BlockKind {
    /// A decompressed Data chunk, by chunk number.
    DataChunk,
    /// A verified Index page, by its offset in the Index file.
    IndexPage,
}

/// The key of a cached block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct BlockKey {
    pub sstable: u64,
    pub kind: BlockKind,
    pub position: u64,
}

/// Counters of a [`BlockCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCacheStats {
    pub capacity_bytes: u64,
    /// Bytes charged by the entries now in the cache.
    pub size_bytes: u64,
    pub entries: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

#[derive(Debug, Default)]
struct Shard {
    map: HashMap<BlockKey, (Bytes, u64)>,
    /// Last-use tick -> key; the first entry is the least recently used.
    by_use: BTreeMap<u64, BlockKey>,
    tick: u64,
    size_bytes: usize,
}

/// A shared, thread-safe, approximately-LRU cache of blocks, bounded in bytes.
#[derive(Debug)]
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    shard_capacity_bytes: usize,
    capacity_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

impl BlockCache {
    /// A cache holding at most about `capacity_bytes`. Zero disables caching.
    pub fn new(capacity_bytes: u64) -> Self {
        let per_shard = usize::try_from(capacity_bytes / SHARDS as u64).unwrap_or(usize::MAX);
        BlockCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            shard_capacity_bytes: per_shard,
            capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The configured capacity.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes charged by the entries now cached (at most about the capacity).
    pub fn size_bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.lock().size_bytes as u64).sum()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> BlockCacheStats {
        let (mut size, mut entries) = (0u64, 0u64);
        for shard in &self.shards {
            let s = shard.lock();
            size += s.size_bytes as u64;
            entries += s.map.len() as u64;
        }
        BlockCacheStats {
            capacity_bytes: self.capacity_bytes,
            size_bytes: size,
            entries,
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    fn shard(&self, key: &BlockKey) -> &Mutex<Shard> {
        let mix = key
            .sstable
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(key.position.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .wrapping_add(key.kind as u64);
        let index = ((mix >> 32) as usize) % SHARDS;
        &self.shards[index]
    }

    pub(crate) fn get(&self, key: &BlockKey) -> Option<Bytes> {
        let mut guard = self.shard(key).lock();
        let shard = &mut *guard;
        shard.tick += 1;
        let tick = shard.tick;
        let Some((bytes, last_use)) = shard.map.get_mut(key) else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        shard.by_use.remove(last_use);
        *last_use = tick;
        shard.by_use.insert(tick, *key);
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(bytes.clone())
    }

    pub(crate) fn insert(&self, key: BlockKey, bytes: Bytes) {
        let charge = bytes.len() + ENTRY_OVERHEAD_BYTES;
        if charge > self.shard_capacity_bytes {
            return;
        }
        let mut guard = self.shard(&key).lock();
        let shard = &mut *guard;
        shard.tick += 1;
        let tick = shard.tick;
        if let Some((old, last_use)) = shard.map.insert(key, (bytes, tick)) {
            shard.by_use.remove(&last_use);
            shard.size_bytes -= old.len() + ENTRY_OVERHEAD_BYTES;
        }
        shard.by_use.insert(tick, key);
        shard.size_bytes += charge;
        while shard.size_bytes > self.shard_capacity_bytes {
            let Some((_, victim)) = shard.by_use.pop_first() else {
                break;
            };
            if let Some((old, _)) = shard.map.remove(&victim) {
                shard.size_bytes -= old.len() + ENTRY_OVERHEAD_BYTES;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(position: u64) -> BlockKey {
        BlockKey {
            sstable: 1,
            kind: BlockKind::DataChunk,
            position,
        }
    }

    #[test]
    fn stays_within_capacity_and_keeps_recent_entries() {
        let cache = BlockCache::new(16 * 4 * (1024 + ENTRY_OVERHEAD_BYTES as u64));
        for i in 0..1000 {
            cache.insert(key(i), Bytes::from(vec![0u8; 1024]));
            assert!(cache.size_bytes() <= cache.capacity_bytes());
        }
        assert!(cache.get(&key(999)).is_some());
        assert!(cache.get(&key(0)).is_none());
        assert!(cache.stats().evictions > 0);
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let cache = BlockCache::new(0);
        cache.insert(key(1), Bytes::from_static(b"x"));
        assert!(cache.get(&key(1)).is_none());
        assert_eq!(cache.size_bytes(), 0);
    }
}
