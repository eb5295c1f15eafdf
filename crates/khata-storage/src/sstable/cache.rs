//! The block cache: decompressed Data chunks, shared by every SSTable (index pages are held by
//! their SSTable; see `reader.rs`).
//!
//! Bounded by a capacity in bytes (each entry is charged its length plus a fixed overhead).
//! The cache is split into shards, each behind its own mutex, so threads rarely contend. Each
//! shard evicts with CLOCK (second chance), an approximation of LRU whose hit path only sets a
//! bit: a hit is one lock, one hash probe and one reference-count increment, with no
//! allocation and no reordering of a recency list. Eviction sweeps a hand over the shard's
//! slots, clearing reference bits, and evicts the first entry not used since the hand last
//! passed it. Entries are keyed by a process-unique SSTable id (never the generation, which
//! repeats across tables), so an entry can never be served for another file; the entries of a
//! deleted SSTable simply age out.
//!
//! Keys are hashed with a multiplicative mix of their three integers instead of SipHash: they
//! are not attacker-controlled (SSTable ids are a process counter, positions come from our own
//! files), so a keyed hash would only cost time.
//!
//! Only checksum-verified bytes enter the cache.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

/// Number of independently locked shards.
const SHARDS: usize = 16;
/// Bytes charged per entry on top of its length (map and slot bookkeeping).
const ENTRY_OVERHEAD_BYTES: usize = 96;

/// What a cache entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BlockKind {
    /// A decompressed Data chunk, by chunk number. (Index pages are held by their SSTable,
    /// not cached here.)
    DataChunk,
}

/// The key of a cached block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct BlockKey {
    pub sstable: u64,
    pub kind: BlockKind,
    pub position: u64,
}

impl BlockKey {
    /// A well-mixed 64-bit hash of the key (used for both the shard and the map).
    fn mix(&self) -> u64 {
        let h = self
            .sstable
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(self.position.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .wrapping_add(self.kind as u64);
        h ^ (h >> 29)
    }
}

/// A hasher that passes [`BlockKey::mix`] through.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only reached if a key type other than `BlockKey` hashes through here.
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01B3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Hashes a `BlockKey` as its premixed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prehashed(BlockKey);

impl std::hash::Hash for Prehashed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.mix());
    }
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

#[derive(Debug)]
struct Slot {
    key: BlockKey,
    bytes: Bytes,
    /// Used since the clock hand last passed.
    referenced: bool,
}

#[derive(Debug, Default)]
struct Shard {
    map: HashMap<Prehashed, usize, BuildHasherDefault<KeyHasher>>,
    /// Entries; `None` is a free slot (listed in `free`).
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    hand: usize,
    size_bytes: usize,
}

impl Shard {
    /// Evict one entry by CLOCK; false if the shard is empty.
    fn evict_one(&mut self) -> bool {
        if self.map.is_empty() {
            return false;
        }
        // Two sweeps at most: the first may only clear reference bits.
        for _ in 0..2 * self.slots.len() {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let index = self.hand;
            self.hand += 1;
            match &mut self.slots[index] {
                Some(slot) if slot.referenced => slot.referenced = false,
                Some(_) => {
                    let slot = self.slots[index].take().expect("checked above");
                    self.map.remove(&Prehashed(slot.key));
                    self.free.push(index);
                    self.size_bytes -= slot.bytes.len() + ENTRY_OVERHEAD_BYTES;
                    return true;
                }
                None => {}
            }
        }
        false
    }
}

/// A shared, thread-safe, approximately-LRU (CLOCK) cache of blocks, bounded in bytes.
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
        let index = ((key.mix() >> 32) as usize) % SHARDS;
        &self.shards[index]
    }

    pub(crate) fn get(&self, key: &BlockKey) -> Option<Bytes> {
        let mut guard = self.shard(key).lock();
        let shard = &mut *guard;
        let found = shard
            .map
            .get(&Prehashed(*key))
            .and_then(|&index| shard.slots[index].as_mut())
            .map(|slot| {
                slot.referenced = true;
                slot.bytes.clone()
            });
        drop(guard);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    pub(crate) fn insert(&self, key: BlockKey, bytes: Bytes) {
        let charge = bytes.len() + ENTRY_OVERHEAD_BYTES;
        if charge > self.shard_capacity_bytes {
            return;
        }
        let mut guard = self.shard(&key).lock();
        let shard = &mut *guard;
        if let Some(&index) = shard.map.get(&Prehashed(key)) {
            let slot = shard.slots[index].as_mut().expect("mapped slots are full");
            shard.size_bytes = shard.size_bytes - slot.bytes.len() + bytes.len();
            slot.bytes = bytes;
            slot.referenced = true;
        } else {
            let slot = Slot {
                key,
                bytes,
                referenced: false,
            };
            let index = match shard.free.pop() {
                Some(index) => {
                    shard.slots[index] = Some(slot);
                    index
                }
                None => {
                    shard.slots.push(Some(slot));
                    shard.slots.len() - 1
                }
            };
            shard.map.insert(Prehashed(key), index);
            shard.size_bytes += charge;
        }
        let mut evicted = 0;
        while shard.size_bytes > self.shard_capacity_bytes && shard.evict_one() {
            evicted += 1;
        }
        if evicted > 0 {
            self.evictions.fetch_add(evicted, Ordering::Relaxed);
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
    fn a_hit_gives_an_entry_a_second_chance() {
        let cache = BlockCache::new(16 * 4 * (1024 + ENTRY_OVERHEAD_BYTES as u64));
        // Keys 0, 16, 32, ... land in one shard only if their mix says so; use one shard's keys.
        let shard_of = |k: &BlockKey| (k.mix() >> 32) as usize % SHARDS;
        let keys: Vec<BlockKey> = (0..10_000)
            .map(key)
            .filter(|k| shard_of(k) == shard_of(&key(0)))
            .take(6)
            .collect();
        for k in &keys[..4] {
            cache.insert(*k, Bytes::from(vec![0u8; 1024]));
        }
        assert!(cache.get(&keys[0]).is_some());
        cache.insert(keys[4], Bytes::from(vec![0u8; 1024]));
        assert!(cache.get(&keys[0]).is_some(), "the used entry survives");
        assert!(cache.get(&keys[1]).is_none(), "an unused one goes first");
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let cache = BlockCache::new(0);
        cache.insert(key(1), Bytes::from_static(b"x"));
        assert!(cache.get(&key(1)).is_none());
        assert_eq!(cache.size_bytes(), 0);
    }
}
