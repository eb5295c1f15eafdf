//! The iteration order of a small `java.util.HashMap`, where Cassandra's `DESCRIBE` output
//! inherits it.
//!
//! Cassandra keeps a keyspace's replication options (`ReplicationParams.options`) and a
//! table's dropped columns (`TableMetadata.droppedColumns`) in `HashMap`s and prints them in
//! iteration order, which is why `DESCRIBE` shows `{'class': 'NetworkTopologyStrategy', 'dc2':
//! '1', 'dc1': '1'}`. To print the same text, khata computes that order: a `HashMap` of a few
//! entries iterates its buckets in index order and each bucket in insertion order, and the
//! bucket of a key with `hashCode` `h` is `(h ^ (h >>> 16)) & (capacity - 1)`.
//!
//! What it does not model: buckets turned into trees (eight or more keys in one bucket of a
//! table of 64 or more), which maps of a handful of entries never reach.

/// `java.lang.String.hashCode`: `31 * h + c` over the UTF-16 code units.
pub(super) fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// `java.nio.ByteBuffer.hashCode`: `31 * h + b` over the signed bytes, last byte first,
/// starting from 1.
pub(super) fn byte_buffer_hash(bytes: &[u8]) -> i32 {
    bytes.iter().rev().fold(1i32, |h, &b| {
        h.wrapping_mul(31).wrapping_add(i32::from(b as i8))
    })
}

/// The table size of a `HashMap` filled by `new HashMap<>(m)` or by `putAll(m)` into an empty
/// `new HashMap<>()`, for `m.size() == size` (`HashMap.putMapEntries` on Java 8 and 11, which
/// Cassandra 4.1 runs on: `tableSizeFor((int) (size / 0.75f + 1.0f))`).
pub(super) fn copied_capacity(size: usize) -> usize {
    let wanted = (size as f32 / 0.75f32 + 1.0f32) as usize;
    wanted.max(1).next_power_of_two()
}

/// The table size of a `new HashMap<>()` after `size` single `put`s: 16, doubled each time
/// the size passes three quarters of it.
pub(super) fn grown_capacity(size: usize) -> usize {
    let mut capacity = 16;
    while size > capacity / 4 * 3 {
        capacity *= 2;
    }
    capacity
}

/// The bucket of a key with hash code `hash` in a table of `capacity` (a power of two).
pub(super) fn bucket(hash: i32, capacity: usize) -> usize {
    debug_assert!(capacity.is_power_of_two());
    let h = hash as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_codes_match_java() {
        // Values from Java: "dc1".hashCode(), "".hashCode(), "datacenter1".hashCode().
        assert_eq!(string_hash("dc1"), 99218);
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("datacenter1"), 1_814_346_642);
        // ByteBuffer.wrap(new byte[]{}).hashCode() == 1; {1, 2} -> 31 * (31 + 2) + 1.
        assert_eq!(byte_buffer_hash(b""), 1);
        assert_eq!(byte_buffer_hash(&[1, 2]), 31 * (31 + 2) + 1);
        assert_eq!(byte_buffer_hash(&[0xff]), 31 - 1);
    }

    #[test]
    fn capacities_match_java() {
        assert_eq!(copied_capacity(1), 2);
        assert_eq!(copied_capacity(2), 4);
        assert_eq!(copied_capacity(3), 8);
        assert_eq!(copied_capacity(6), 16);
        assert_eq!(grown_capacity(0), 16);
        assert_eq!(grown_capacity(12), 16);
        assert_eq!(grown_capacity(13), 32);
    }

    #[test]
    fn two_datacenters_iterate_as_cassandra_prints_them() {
        // Cassandra 4/5 print {'class': 'NetworkTopologyStrategy', 'dc2': '1', 'dc1': '1'}.
        let capacity = copied_capacity(3);
        assert!(bucket(string_hash("dc2"), capacity) < bucket(string_hash("dc1"), capacity));
    }
}
