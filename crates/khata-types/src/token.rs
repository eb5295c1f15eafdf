//! Cassandra's Murmur3 partitioner: partition key serialization, tokens and decorated keys.
//!
//! A partition's place on the ring is its *token*, which must be bit for bit the one Cassandra's
//! `Murmur3Partitioner` computes: drivers compute it on their own for token-aware routing, and
//! `SELECT token(pk)` must agree with them (DESIGN.md §3). The token is computed in two steps:
//!
//! 1. [`serialize_partition_key`] turns the partition key's CQL-serialized column values into
//!    one byte string, as Cassandra's `CompositeType` does: a single-column key is its value's
//!    bytes unchanged; a composite key is, for each component, a big-endian `u16` length, the
//!    bytes, and an end-of-component byte `0x00`.
//! 2. [`murmur3_token`] hashes those bytes with MurmurHash3 x64_128 (seed 0) and takes the
//!    first 64-bit half as a signed integer.
//!
//! Cassandra's hash is not quite the reference MurmurHash3. Its tail loop reads the last
//! `len % 16` bytes as Java `byte`s, which are *signed*: each is sign-extended to 64 bits before
//! it is shifted into place, so a tail byte >= 0x80 also flips every higher bit of its half of
//! the tail word. The 16-byte body blocks are read little-endian as unsigned bytes, as in the
//! reference. We reproduce the quirk; `tests/token_murmur3_oracle.rs` checks the result
//! against the ScyllaDB driver, which reproduces it too.
//!
//! Two values are special. `i64::MIN` is reserved as the minimum token, which no key hashes
//! to: a hash of `i64::MIN` becomes `i64::MAX` (Cassandra's `normalize`). The empty key, which
//! Cassandra allows for some internal tables and treats as "before every key", has the minimum
//! token [`Token::MIN`] without being hashed.
//!
//! We write the hash ourselves rather than take a crate: the published MurmurHash3 crates
//! implement the reference algorithm (unsigned tail bytes), which disagrees with Cassandra on
//! every key whose tail holds a byte >= 0x80.

use std::cmp::Ordering;

use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

/// A position on the token ring: Murmur3Partitioner's signed 64-bit token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub i64);

impl Token {
    /// The minimum token, which no key hashes to (the empty key's token).
    pub const MIN: Token = Token(i64::MIN);
    /// The maximum token (also the token of keys whose hash is `i64::MIN`).
    pub const MAX: Token = Token(i64::MAX);

    /// The token of a serialized partition key (see [`serialize_partition_key`]).
    pub fn of(key: &[u8]) -> Token {
        Token(murmur3_token(key))
    }
}

/// The largest partition key Cassandra accepts, in bytes, serialized (and so the largest
/// component of a composite key): keys are written with an unsigned 16-bit length.
pub const MAX_PARTITION_KEY_SIZE_BYTES: usize = u16::MAX as usize;

/// Why a partition key cannot be serialized.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PartitionKeyError {
    /// A partition key has at least one column.
    #[error("a partition key needs at least one component")]
    NoComponents,
    /// A component of a composite key does not fit its 16-bit length.
    #[error("partition key component {index} is {len} bytes, more than the maximum of {max}")]
    ComponentTooLong {
        index: usize,
        len: usize,
        max: usize,
    },
    /// The serialized key is longer than Cassandra allows.
    #[error("partition key is {len} bytes serialized, more than the maximum of {max}")]
    KeyTooLong { len: usize, max: usize },
}

/// Serialize a partition key from its columns' CQL-serialized values, in key order, as
/// Cassandra does before hashing and storing it.
///
/// One component: its bytes unchanged. Several: for each, a big-endian `u16` length, the
/// bytes, and `0x00`. Errors if there are no components, if a component of a composite key is
/// longer than 65535 bytes, or if the serialized key is longer than
/// [`MAX_PARTITION_KEY_SIZE_BYTES`] (Cassandra rejects such keys too).
pub fn serialize_partition_key(components: &[&[u8]]) -> Result<Bytes, PartitionKeyError> {
    let max = MAX_PARTITION_KEY_SIZE_BYTES;
    let key = match components {
        [] => return Err(PartitionKeyError::NoComponents),
        [single] => Bytes::copy_from_slice(single),
        _ => {
            let len: usize = components.iter().map(|c| c.len() + 3).sum();
            let mut out = BytesMut::with_capacity(len);
            for (index, component) in components.iter().enumerate() {
                let component_len = u16::try_from(component.len()).map_err(|_| {
                    PartitionKeyError::ComponentTooLong {
                        index,
                        len: component.len(),
                        max,
                    }
                })?;
                out.put_u16(component_len);
                out.put_slice(component);
                out.put_u8(0x00);
            }
            out.freeze()
        }
    };
    if key.len() > max {
        return Err(PartitionKeyError::KeyTooLong {
            len: key.len(),
            max,
        });
    }
    Ok(key)
}

/// The components of a partition key serialized by [`serialize_partition_key`] with `n`
/// components (slices of `key`, no copies). `None` when the bytes are not such a key.
pub fn split_partition_key(key: &Bytes, n: usize) -> Option<Vec<Bytes>> {
    if n == 1 {
        return Some(vec![key.clone()]);
    }
    let mut out = Vec::with_capacity(n);
    let mut rest = &key[..];
    while !rest.is_empty() {
        let len = usize::from(u16::from_be_bytes([*rest.first()?, *rest.get(1)?]));
        if rest.len() < 2 + len + 1 {
            return None;
        }
        out.push(key.slice_ref(&rest[2..2 + len]));
        rest = &rest[2 + len + 1..];
    }
    (out.len() == n).then_some(out)
}

/// Cassandra's token for a serialized partition key: the first half of MurmurHash3 x64_128
/// (seed 0, Cassandra's signed tail bytes), with `i64::MIN` mapped to `i64::MAX`; the empty
/// key has the minimum token `i64::MIN`.
pub fn murmur3_token(key: &[u8]) -> i64 {
    if key.is_empty() {
        return Token::MIN.0;
    }
    let hash = murmur3_x64_128_first_half(key) as i64;
    if hash == i64::MIN { i64::MAX } else { hash }
}

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

/// The first 64 bits of MurmurHash3 x64_128 with seed 0, as Cassandra's
/// `MurmurHash.hash3_x64_128` computes them (tail bytes sign-extended).
fn murmur3_x64_128_first_half(key: &[u8]) -> u64 {
    let mut h1: u64 = 0;
    let mut h2: u64 = 0;

    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let (lo, hi) = block.split_at(8);
        let k1 = u64::from_le_bytes(lo.try_into().expect("chunks_exact(16) halves are 8 bytes"));
        let k2 = u64::from_le_bytes(hi.try_into().expect("chunks_exact(16) halves are 8 bytes"));

        h1 ^= mix_k1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);

        h2 ^= mix_k2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }

    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(tail_word(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(tail_word(&tail[..tail.len().min(8)]));
    }

    // Java's `long` length: a slice never exceeds isize::MAX bytes, so this is lossless.
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1.wrapping_add(h2)
}

/// Up to eight tail bytes combined as Cassandra does: byte `i` is read as a *signed* Java byte,
/// sign-extended to 64 bits, shifted left by `8 * i`, and XORed in.
fn tail_word(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0u64, |k, (i, &b)| {
        k ^ ((i64::from(b as i8) as u64) << (8 * i))
    })
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// A partition key with its token: the order partitions are stored in (token, then key bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecoratedKey {
    /// The key's token, [`Token::of`] the key.
    pub token: Token,
    /// The partition key serialized as Cassandra does (single column: its bytes; composite:
    /// `u16 length, bytes, 0x00` per component).
    pub key: Bytes,
}

impl DecoratedKey {
    /// Decorate a serialized partition key with its token.
    pub fn new(key: impl Into<Bytes>) -> Self {
        let key = key.into();
        DecoratedKey {
            token: Token::of(&key),
            key,
        }
    }
}

impl PartialOrd for DecoratedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DecoratedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.token
            .cmp(&other.token)
            .then_with(|| self.key.cmp(&other.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        assert!(s.len().is_multiple_of(2), "odd-length hex {s}");
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("test vector is hex"))
            .collect()
    }

    /// Tokens computed by Cassandra's Murmur3Partitioner.
    const VECTORS: &[(&str, i64)] = &[
        ("61", -8839064797231613815),
        ("616263", -5434086359492102041),
        ("68656c6c6f", -3758069500696749310),
        ("00000001", -4069959284402364209),
        ("000000000000002a", 8623491988607824794),
        ("808182838485868788898a8b8c8d8e", 63099782945186636),
        ("ffffffffffffffffffffffffffffffffff", -4128212798341382003),
        ("e282ac", 8619152265340498936),
        ("0008000000000000002a000004000799ab00", 3043735101766377467),
    ];

    #[test]
    fn split_inverts_serialize() {
        for parts in [vec![&b"a"[..]], vec![&b"ab"[..], &b""[..], &b"xyz"[..]]] {
            let key = serialize_partition_key(&parts).unwrap();
            let split = split_partition_key(&key, parts.len()).unwrap();
            assert_eq!(split.iter().map(|b| &b[..]).collect::<Vec<_>>(), parts);
        }
        assert!(split_partition_key(&Bytes::from_static(b"\x00\x05ab"), 2).is_none());
    }

    #[test]
    fn tokens_match_cassandra_vectors() {
        for (input, expected) in VECTORS {
            assert_eq!(murmur3_token(&hex(input)), *expected, "token of {input}");
            assert_eq!(
                Token::of(&hex(input)),
                Token(*expected),
                "Token::of {input}"
            );
        }
    }

    #[test]
    fn empty_key_has_the_minimum_token() {
        assert_eq!(Token::of(&[]), Token::MIN);
        assert_eq!(DecoratedKey::new(Bytes::new()).token, Token::MIN);
    }

    #[test]
    fn composite_key_serializes_as_cassandra_does() {
        let bigint = 42i64.to_be_bytes();
        let int = 498091i32.to_be_bytes();
        let key = serialize_partition_key(&[&bigint, &int]).unwrap();
        assert_eq!(
            key.as_ref(),
            hex("0008000000000000002a000004000799ab00").as_slice()
        );
        assert_eq!(Token::of(&key), Token(3043735101766377467));
    }

    #[test]
    fn single_component_key_is_its_bytes() {
        let key = serialize_partition_key(&[b"hello"]).unwrap();
        assert_eq!(key.as_ref(), b"hello");
        assert_eq!(Token::of(&key), Token(-3758069500696749310));
        assert_eq!(serialize_partition_key(&[b""]).unwrap(), Bytes::new());
    }

    #[test]
    fn empty_components_in_a_composite_key_keep_their_framing() {
        let key = serialize_partition_key(&[b"", b"a"]).unwrap();
        assert_eq!(key.as_ref(), &[0, 0, 0, 0, 1, b'a', 0]);
    }

    #[test]
    fn oversized_keys_are_errors() {
        assert_eq!(
            serialize_partition_key(&[]),
            Err(PartitionKeyError::NoComponents)
        );
        let big = vec![7u8; MAX_PARTITION_KEY_SIZE_BYTES + 1];
        assert_eq!(
            serialize_partition_key(&[b"x", &big]),
            Err(PartitionKeyError::ComponentTooLong {
                index: 1,
                len: big.len(),
                max: 65535
            })
        );
        assert_eq!(
            serialize_partition_key(&[&big]),
            Err(PartitionKeyError::KeyTooLong {
                len: big.len(),
                max: 65535
            })
        );
        let half = vec![7u8; 40_000];
        assert!(matches!(
            serialize_partition_key(&[&half, &half]),
            Err(PartitionKeyError::KeyTooLong { len: 80_006, .. })
        ));
        let max = vec![7u8; MAX_PARTITION_KEY_SIZE_BYTES];
        assert_eq!(
            serialize_partition_key(&[&max]).unwrap().len(),
            MAX_PARTITION_KEY_SIZE_BYTES
        );
    }

    #[test]
    fn decorated_keys_order_by_token_then_bytes() {
        let a = DecoratedKey {
            token: Token(1),
            key: Bytes::from_static(b"b"),
        };
        let b = DecoratedKey {
            token: Token(1),
            key: Bytes::from_static(b"c"),
        };
        let c = DecoratedKey {
            token: Token(2),
            key: Bytes::from_static(b"a"),
        };
        assert!(a < b && b < c);
    }
}
