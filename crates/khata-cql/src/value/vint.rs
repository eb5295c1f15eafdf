//! Cassandra's variable-length integers (`utils.vint.VIntCoding`), used by `duration` values
//! and by the element lengths of vectors of variable-size types.
//!
//! An unsigned integer is written in 1 to 9 bytes: the number of leading one bits of the first
//! byte is the number of bytes that follow, and the value is the first byte's remaining bits
//! then the following bytes, big-endian. A signed integer is zig-zag encoded first (0, -1, 1,
//! -2, ... become 0, 1, 2, 3, ...).

/// Append `v` as an unsigned variable-length integer.
pub(super) fn put_unsigned_vint(v: u64, out: &mut Vec<u8>) {
    let size = ((639 - 9 * (v | 1).leading_zeros()) >> 6) as usize;
    let be = v.to_be_bytes();
    if size == 9 {
        out.push(0xFF);
        out.extend_from_slice(&be);
        return;
    }
    let start = out.len();
    out.extend_from_slice(&be[8 - size..]);
    out[start] |= !(0xFFu8 >> (size - 1));
}

/// Append `v` zig-zag encoded as a variable-length integer.
pub(super) fn put_vint(v: i64, out: &mut Vec<u8>) {
    put_unsigned_vint(((v << 1) ^ (v >> 63)) as u64, out);
}

/// Read an unsigned variable-length integer from the front of `bytes`.
pub(super) fn get_unsigned_vint(bytes: &mut &[u8]) -> Option<u64> {
    let (&first, rest) = bytes.split_first()?;
    let extra = first.leading_ones() as usize;
    let following = rest.get(..extra)?;
    let mut v = u64::from(first.checked_shl(extra as u32).map_or(0, |b| b >> extra));
    for &b in following {
        v = (v << 8) | u64::from(b);
    }
    *bytes = &rest[extra..];
    Some(v)
}

/// Read a zig-zag encoded variable-length integer from the front of `bytes`.
pub(super) fn get_vint(bytes: &mut &[u8]) -> Option<i64> {
    get_unsigned_vint(bytes).map(|v| ((v >> 1) as i64) ^ -((v & 1) as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vints_round_trip_at_every_size() {
        let mut samples = vec![0u64, 1, 127, 128, u64::MAX, u64::MAX >> 1];
        samples.extend((0..64).map(|s| 1u64 << s));
        samples.extend((1..64).map(|s| (1u64 << s) - 1));
        for v in samples {
            let mut out = Vec::new();
            put_unsigned_vint(v, &mut out);
            let mut slice = &out[..];
            assert_eq!(get_unsigned_vint(&mut slice), Some(v), "{v}");
            assert!(slice.is_empty());
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -300, 300] {
            let mut out = Vec::new();
            put_vint(v, &mut out);
            assert_eq!(get_vint(&mut &out[..]), Some(v));
        }
    }

    #[test]
    fn vint_layout_matches_cassandra() {
        let encode = |v: u64| {
            let mut out = Vec::new();
            put_unsigned_vint(v, &mut out);
            out
        };
        assert_eq!(encode(0), [0x00]);
        assert_eq!(encode(127), [0x7F]);
        assert_eq!(encode(128), [0x80, 0x80]);
        assert_eq!(encode(0x3FFF), [0xBF, 0xFF]);
        assert_eq!(encode(0x4000), [0xC0, 0x40, 0x00]);
        assert_eq!(encode(u64::MAX)[0], 0xFF);
        assert_eq!(encode(u64::MAX).len(), 9);
    }

    #[test]
    fn truncated_vints_are_none() {
        assert_eq!(get_unsigned_vint(&mut &[][..]), None);
        assert_eq!(get_unsigned_vint(&mut &[0x80][..]), None);
        assert_eq!(get_unsigned_vint(&mut &[0xFF, 0, 0, 0][..]), None);
    }
}
