//! A directory over the logical offsets of a Data file's chunks, so that finding the chunk of
//! an offset touches two or three cache lines instead of binary-searching every chunk.
//!
//! A point read looks up the chunk holding its row block. W2's SSTable (300 MB of rows) has
//! about 80,000 chunks of about 4 KiB, so the chunk table's logical offsets are 650 KB; a
//! binary search over them takes 17 probes, the last several of them cache misses, and it was
//! 9 % of W2's read phase (`read_in_one_chunk` in `docs/benchmarks.md`). The directory
//! cuts the logical stream into buckets of `2^shift` bytes, at least twice the average chunk
//! length, and records for each bucket the chunk holding its first byte. The chunk of an
//! offset lies between the entries of its bucket and of the next one (chunks ascend), usually
//! two or three chunks apart, so a lookup reads one directory entry and a few neighbouring
//! logical offsets.
//!
//! The directory is built at open from the chunk table (which `parse_info` has checked: it
//! starts at 0 and ascends strictly) and costs at most 4 bytes per chunk (a bucket is at least
//! two average chunks, and each entry is a `u64`). It is not part of the file format.

/// Smallest bucket: 512 bytes (a chunk holds at least one byte, most hold about 4 KiB).
const MIN_SHIFT: u32 = 9;

/// The chunk holding the first byte of each bucket of the logical stream.
#[derive(Debug)]
pub struct ChunkDirectory {
    shift: u32,
    /// `first[b]`: the chunk holding logical offset `b << shift`.
    first: Vec<u64>,
}

impl ChunkDirectory {
    /// The directory over `starts` (the logical offset of every chunk, ascending from 0, then
    /// the logical length).
    pub fn new(starts: &[u64]) -> ChunkDirectory {
        let Some((&logical_length, chunk_starts)) = starts.split_last() else {
            return ChunkDirectory {
                shift: MIN_SHIFT,
                first: Vec::new(),
            };
        };
        let chunks = chunk_starts.len() as u64;
        // Buckets of at least twice the average chunk: at most chunks / 2 + 1 of them.
        let mut shift = MIN_SHIFT;
        while shift < 63 && (logical_length >> shift) > chunks / 2 {
            shift += 1;
        }
        let buckets = (logical_length >> shift) + 1;
        let mut first = Vec::with_capacity(usize::try_from(buckets).unwrap_or(0));
        let mut chunk = 0usize;
        for bucket in 0..buckets {
            let offset = bucket << shift;
            while chunk + 1 < chunk_starts.len() && chunk_starts[chunk + 1] <= offset {
                chunk += 1;
            }
            first.push(chunk as u64);
        }
        ChunkDirectory { shift, first }
    }

    /// The chunk holding `offset`, which is below the logical length: the same answer as a
    /// binary search of `starts` (the slice the directory was built from).
    pub fn chunk_of(&self, starts: &[u64], offset: u64) -> u64 {
        let bucket = usize::try_from(offset >> self.shift).unwrap_or(usize::MAX);
        let chunks = starts.len().saturating_sub(1);
        // The chunk lies in `lo..=hi`: at or after the one holding the bucket's first byte,
        // at or before the one holding the next bucket's.
        let lo = self
            .first
            .get(bucket)
            .map_or(0, |&c| usize::try_from(c).unwrap_or(0));
        let hi = self
            .first
            .get(bucket.saturating_add(1))
            .map_or(chunks.saturating_sub(1), |&c| {
                usize::try_from(c).unwrap_or(usize::MAX)
            })
            .min(chunks.saturating_sub(1));
        let candidates = starts.get(lo..=hi.max(lo)).unwrap_or(&[]);
        let within = candidates
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        (lo + within) as u64
    }

    /// Bytes the directory holds.
    pub fn size_bytes(&self) -> usize {
        self.first.len() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn searched(starts: &[u64], offset: u64) -> u64 {
        (starts.partition_point(|&s| s <= offset) as u64).saturating_sub(1)
    }

    proptest! {
        #[test]
        fn finds_what_a_binary_search_finds(
            lengths in prop::collection::vec(1u64..20_000, 1..400),
            probes in prop::collection::vec(any::<u64>(), 32),
        ) {
            let mut starts = vec![0u64];
            for length in &lengths {
                starts.push(starts.last().unwrap() + length);
            }
            let logical_length = *starts.last().unwrap();
            let directory = ChunkDirectory::new(&starts);
            prop_assert!(directory.size_bytes() <= 8 * (lengths.len() / 2 + 1));
            for probe in probes {
                let offset = probe % logical_length;
                prop_assert_eq!(directory.chunk_of(&starts, offset), searched(&starts, offset));
            }
            for (i, &start) in starts[..lengths.len()].iter().enumerate() {
                prop_assert_eq!(directory.chunk_of(&starts, start), i as u64);
                let last = starts[i + 1] - 1;
                prop_assert_eq!(directory.chunk_of(&starts, last), i as u64);
            }
        }
    }

    #[test]
    fn one_chunk_and_none() {
        let directory = ChunkDirectory::new(&[0, 100]);
        assert_eq!(directory.chunk_of(&[0, 100], 0), 0);
        assert_eq!(directory.chunk_of(&[0, 100], 99), 0);
        let empty = ChunkDirectory::new(&[0]);
        assert_eq!(empty.chunk_of(&[0], 0), 0);
    }
}
