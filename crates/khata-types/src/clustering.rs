//! Order-preserving byte encoding of clustering keys.
//!
//! A clustering key (a full key or a prefix of one) encodes to a byte string such that `memcmp`
//! order of encodings equals CQL order of keys, with DESC components inverted. Each component is
//! a header byte ([`EMPTY_VALUE`] or [`VALUE`]) followed by the component's self-delimiting
//! encoding (inverted for DESC), so no encoding of a component is a prefix of another's.
//!
//! Slices and range tombstones are half-open byte intervals `[start, end)`: every full key that
//! extends a prefix `P` sorts after `P` and before `P ++ [AFTER_PREFIX]`, so
//!
//! | CQL bound            | byte bound            |
//! |----------------------|-----------------------|
//! | start `>= P`         | `P`                   |
//! | start `> P`          | `P ++ [0xFF]`         |
//! | end `<= P`           | `P ++ [0xFF]`         |
//! | end `< P`            | `P`                   |
//!
//! and the empty prefix gives the whole partition: `["", [0xFF])`.

use bytes::{BufMut, Bytes, BytesMut};

/// Header of a component whose value is the empty byte string (CQL allows empty values of
/// most types in clustering keys; they sort first).
pub const EMPTY_VALUE: u8 = 0x01;
/// Header of a component with a value.
pub const VALUE: u8 = 0x02;
/// Appended to a prefix to make a bound that sorts after every key extending the prefix.
pub const AFTER_PREFIX: u8 = 0xFF;

/// The byte bound for a slice start on `prefix` (an encoded clustering prefix).
pub fn start_bound(prefix: &[u8], inclusive: bool) -> Bytes {
    if inclusive { Bytes::copy_from_slice(prefix) } else { after_prefix(prefix) }
}

/// The byte bound for a slice end on `prefix` (exclusive in byte space).
pub fn end_bound(prefix: &[u8], inclusive: bool) -> Bytes {
    if inclusive { after_prefix(prefix) } else { Bytes::copy_from_slice(prefix) }
}

/// `prefix ++ [AFTER_PREFIX]`.
pub fn after_prefix(prefix: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(prefix.len() + 1);
    b.put_slice(prefix);
    b.put_u8(AFTER_PREFIX);
    b.freeze()
}

/// The whole partition as a byte interval.
pub fn full_range() -> (Bytes, Bytes) {
    (Bytes::new(), Bytes::from_static(&[AFTER_PREFIX]))
}
