//! Cassandra's Murmur3 partitioner: tokens and decorated partition keys.
//!
//! (The hash itself is being written; see `murmur3_token`.)

use std::cmp::Ordering;

use bytes::Bytes;

/// A position on the token ring: Murmur3Partitioner's signed 64-bit token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub i64);

impl Token {
    /// The minimum token, which no key hashes to (the empty key's token).
    pub const MIN: Token = Token(i64::MIN);
    pub const MAX: Token = Token(i64::MAX);

    /// The token of a serialized partition key.
    pub fn of(key: &[u8]) -> Token {
        Token(murmur3_token(key))
    }
}

/// Cassandra's token for a serialized partition key.
pub fn murmur3_token(key: &[u8]) -> i64 {
    // Placeholder until the real hash lands: a stable FNV so that the engine can be built
    // against the interface. Replaced by the exact Murmur3 of Cassandra.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in key {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h as i64
}

/// A partition key with its token: the order partitions are stored in (token, then key bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecoratedKey {
    pub token: Token,
    /// The partition key serialized as Cassandra does (single column: its bytes; composite:
    /// `u16 length, bytes, 0x00` per component).
    pub key: Bytes,
}

impl DecoratedKey {
    pub fn new(key: impl Into<Bytes>) -> Self {
        let key = key.into();
        DecoratedKey { token: Token::of(&key), key }
    }
}

impl PartialOrd for DecoratedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DecoratedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.token.cmp(&other.token).then_with(|| self.key.cmp(&other.key))
    }
}
