//! Differential test of khata's Murmur3 token against the ScyllaDB Rust driver's
//! `Murmur3Partitioner`, which drivers use for token-aware routing: if the two ever disagree,
//! drivers send requests to the wrong replicas.
//!
//! The driver hashes the empty key like any other (giving a real hash); Cassandra gives the
//! empty key the minimum token without hashing it, and so do we, so that one input is checked
//! separately.

use khata_types::token::{Token, murmur3_token, serialize_partition_key};
use proptest::prelude::*;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner, PartitionerHasher};

fn driver_token(key: &[u8]) -> i64 {
    Murmur3Partitioner.hash_one(key).value()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn token_matches_driver(key in proptest::collection::vec(any::<u8>(), 1..100)) {
        prop_assert_eq!(murmur3_token(&key), driver_token(&key));
    }

    /// Keys dense in bytes >= 0x80, where Cassandra's signed tail bytes matter.
    #[test]
    fn token_matches_driver_on_high_bytes(key in proptest::collection::vec(0x70u8..=0xff, 1..40)) {
        prop_assert_eq!(murmur3_token(&key), driver_token(&key));
    }

    /// The driver feeds composite keys to its hasher component by component, with the same
    /// framing as `serialize_partition_key`.
    #[test]
    fn composite_token_matches_driver(
        parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 2..5)
    ) {
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let key = serialize_partition_key(&refs).unwrap();
        let mut hasher = Murmur3Partitioner.build_hasher();
        for part in &parts {
            hasher.write(&(part.len() as u16).to_be_bytes());
            hasher.write(part);
            hasher.write(&[0]);
        }
        prop_assert_eq!(murmur3_token(&key), hasher.finish().value());
    }
}

#[test]
fn empty_key_is_the_minimum_token_not_a_hash() {
    assert_eq!(Token::of(&[]), Token::MIN);
}
