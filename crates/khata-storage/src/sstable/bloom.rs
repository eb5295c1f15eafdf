//! The Bloom filter on partition keys (the Filter component).
//!
//! A read asks every SSTable whether it may hold a partition; the filter answers "no" for
//! about 99 % of absent keys without touching the index. It is sized when the writer is
//! created, from the expected number of partitions and the wanted false-positive chance:
//! `bits = -n ln p / (ln 2)^2`, rounded up to whole 64-bit words, and `k = round(bits/n ln 2)`
//! probes. More keys than expected raise the false-positive rate; they never cause a false
//! negative.
//!
//! Probes use double hashing (Kirsch and Mitzenmacher): `h1 = xxh64(key, 0)`,
//! `h2 = xxh64(key, H2_SEED) | 1`, probe `i` sets bit `(h1 + i * h2) mod bits` (wrapping u64
//! arithmetic), bit `b` being bit `b % 64` of little-endian word `b / 64`. The hash scheme has an
//! id in the file; a new scheme gets a new id, so the format never changes silently.

use bytes::{BufMut, Bytes};
use khata_types::codec::{CodecError, Reader};

use super::format::{FormatError, get_u8, get_u64};
use super::hash::xxh64;

/// Id of the hash scheme described in the module documentation.
const SCHEME_XXH64_DOUBLE: u8 = 1;
/// Seed of the second hash.
const H2_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
/// The smallest and largest false-positive chances a filter is built for.
const MIN_FP_CHANCE: f64 = 1e-6;
const MAX_FP_CHANCE: f64 = 0.5;
/// A limit on the filter's size: 2^33 bits (1 GiB).
const MAX_BITS: u64 = 1 << 33;
/// A limit on probes per key.
const MAX_HASHES: u8 = 30;

/// A Bloom filter over byte strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    words: Vec<u64>,
    num_hashes: u8,
}

impl BloomFilter {
    /// A filter for about `expected_keys` keys with false-positive chance `fp_chance`.
    pub fn new(expected_keys: u64, fp_chance: f64) -> Self {
        let n = expected_keys.max(1) as f64;
        let p = if fp_chance.is_nan() {
            0.01
        } else {
            fp_chance.clamp(MIN_FP_CHANCE, MAX_FP_CHANCE)
        };
        let ln2 = std::f64::consts::LN_2;
        let bits = (-n * p.ln() / (ln2 * ln2))
            .ceil()
            .clamp(64.0, MAX_BITS as f64) as u64;
        let words = bits.div_ceil(64);
        let k = ((words * 64) as f64 / n * ln2)
            .round()
            .clamp(1.0, f64::from(MAX_HASHES)) as u8;
        BloomFilter {
            words: vec![0; words as usize],
            num_hashes: k,
        }
    }

    fn num_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    fn probes(&self, key: &[u8]) -> impl Iterator<Item = u64> + use<> {
        let h1 = xxh64(key, 0);
        let h2 = xxh64(key, H2_SEED) | 1;
        let bits = self.num_bits();
        (0..u64::from(self.num_hashes)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
    }

    /// Add `key`.
    pub fn insert(&mut self, key: &[u8]) {
        for bit in self.probes(key) {
            if let Some(word) = self.words.get_mut((bit / 64) as usize) {
                *word |= 1 << (bit % 64);
            }
        }
    }

    /// False if `key` was certainly never inserted.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.probes(key).all(|bit| {
            self.words
                .get((bit / 64) as usize)
                .is_some_and(|w| w & (1 << (bit % 64)) != 0)
        })
    }

    /// Bytes the filter occupies in memory.
    pub fn size_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The Filter component: `scheme:u8 num_hashes:u8 num_words:u64 words:u64*`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(10 + self.words.len() * 8);
        out.put_u8(SCHEME_XXH64_DOUBLE);
        out.put_u8(self.num_hashes);
        out.put_u64_le(self.words.len() as u64);
        for w in &self.words {
            out.put_u64_le(*w);
        }
    }

    /// Decode the Filter component.
    pub fn decode(bytes: Bytes) -> Result<Self, FormatError> {
        let mut r = Reader::new(bytes);
        let inner = |r: &mut Reader| -> Result<Self, CodecError> {
            if get_u8(r)? != SCHEME_XXH64_DOUBLE {
                return Err(CodecError::Invalid("unknown Bloom filter hash scheme"));
            }
            let num_hashes = get_u8(r)?;
            if num_hashes == 0 || num_hashes > MAX_HASHES {
                return Err(CodecError::Invalid("Bloom filter probe count out of range"));
            }
            let num_words = get_u64(r)?;
            if num_words == 0 || num_words > MAX_BITS / 64 || num_words * 8 != r.remaining() as u64
            {
                return Err(CodecError::Invalid(
                    "Bloom filter size does not match the file",
                ));
            }
            let mut words = Vec::with_capacity(num_words as usize);
            for _ in 0..num_words {
                words.push(get_u64(r)?);
            }
            Ok(BloomFilter { words, num_hashes })
        };
        inner(&mut r).map_err(|e| FormatError::codec(0, &r, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_round_trip() {
        let mut f = BloomFilter::new(1000, 0.01);
        for i in 0..1000u32 {
            f.insert(&i.to_be_bytes());
        }
        assert!((0..1000u32).all(|i| f.may_contain(&i.to_be_bytes())));
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(BloomFilter::decode(Bytes::from(buf)).unwrap(), f);
    }

    /// The probe positions are part of the format: this pins them.
    #[test]
    fn probe_positions_are_stable() {
        let f = BloomFilter::new(100, 0.01);
        assert_eq!(f.num_hashes, 7);
        assert_eq!(f.num_bits(), 960);
        let probes: Vec<u64> = f.probes(b"khata").collect();
        assert_eq!(probes, vec![474, 535, 596, 657, 718, 779, 136]);
        let h1 = xxh64(b"khata", 0);
        let h2 = xxh64(b"khata", H2_SEED) | 1;
        let expected: Vec<u64> = (0..7u64)
            .map(|i| h1.wrapping_add(i.wrapping_mul(h2)) % 960)
            .collect();
        assert_eq!(probes, expected);
    }
}
