//! Order-preserving byte encoding of clustering keys.
//!
//! A clustering key (a full key or a prefix of one) encodes to a byte string such that `memcmp`
//! order of encodings equals CQL order of keys, with DESC components inverted, so the storage
//! engine sorts rows, slices and range tombstones without knowing any CQL type.
//!
//! # Layout
//!
//! A key is the concatenation of its components. Each component is a header byte, not
//! inverted, then (for [`VALUE`]) the component's self-delimiting encoding, every byte of which
//! is inverted (`!b`) for a DESC column:
//!
//! - [`EMPTY_VALUE`]: the empty byte string, for types whose domain does not contain it (CQL
//!   lets a client bind an empty `int`, `uuid`, ...; it sorts before every value, in ASC and
//!   DESC columns alike). For `text`, `ascii` and `blob` the empty string is an ordinary value
//!   and is encoded as a [`VALUE`] that sorts first in ASC and last in DESC, as in Cassandra.
//! - [`VALUE`]: the value's encoding, which is prefix-free (no encoding of a value is a prefix of
//!   another's), so the inverted encoding orders in reverse and concatenation compares
//!   component by component.
//!
//! Value encodings, per type (the input is the CQL native-protocol serialization):
//!
//! | type | encoding | order (Cassandra's `AbstractType`) |
//! |---|---|---|
//! | ascii, text, blob | bytes, `00` escaped as `00 FF`, terminated by `00 01` | bytewise |
//! | boolean | the byte (0 or 1 only) | false < true |
//! | tinyint..bigint, counter, timestamp | big-endian, sign bit flipped | signed |
//! | date | the 4 bytes | unsigned (2^31 is the epoch) |
//! | time | the 8 bytes (0..86399999999999 only) | signed = unsigned in range |
//! | float, double | `01` + IEEE bits made monotone, or `02` + the raw bits of a NaN | Java `Float.compare`: -0.0 < 0.0, NaN last |
//! | varint, decimal | see `clustering/number.rs` (canonical: equal numbers, one encoding) | numeric value |
//! | uuid | version nibble, then the v1 timestamp (v1) or the other high bits, then the low 8 bytes | Cassandra's `UUIDType` |
//! | timeuuid | reordered timestamp, low 8 bytes with each sign bit flipped | `TimeUUIDType` |
//! | inet | first 4 bytes, then `00` (IPv4) or `01` + the other 12 bytes (IPv6) | bytewise |
//! | frozen list, set, map | elements, each with a marker (see `clustering/value.rs`), then `00` | element-wise, shorter first |
//! | frozen tuple, UDT | fields up to the last that is not null, each with a marker, then `00` | field-wise, null first, missing = null |
//! | vector of a fixed-size type | the elements' encodings | element-wise |
//!
//! `duration` cannot be a clustering column (CQL forbids it: it has no order), nor can
//! non-frozen collections or UDTs.
//!
//! # Where the order is finer than Cassandra's
//!
//! Numbers are encoded canonically: a `varint` with redundant sign bytes and a `decimal` of any
//! scale encode as the number does (`1.5` and `1.50` are one key, as in Cassandra, whose
//! `DecimalType` compares with `BigDecimal.compareTo`), and decode to the number's canonical
//! form (minimal varint bytes; a decimal without trailing fraction zeros and with scale 0 for
//! an integer: `1.50` reads back as `1.5`, `1.23E+3` as `1230`; see `clustering/number.rs`).
//! Cassandra keeps the bytes the first write gave; khata keeps the canonical ones. Keys written
//! before this (when the scale and the padding were kept as a tie-break) still decode to the
//! form they were written in and sort next to the canonical key of their value; the layout did
//! not change, so neither did any format version.
//!
//! Tuples and UDTs are encoded canonically too: their trailing null fields are left out, so a
//! value with trailing nulls and one without them are one key, as in Cassandra, whose
//! `TupleType.compareCustom` compares a missing trailing field as a null one. This is what
//! makes a frozen UDT clustering key written before `ALTER TYPE ... ADD` (serialized with the
//! fields the type had then) the same row as the same value written after it (with the new
//! fields null), and what lets either form find it. They decode with every field of the type
//! given (the types the key is read with), the missing ones null: the value as Cassandra 4.1
//! serializes a tuple or UDT literal of that type (all its fields), while Cassandra 5's
//! byte-comparable form, like this one, drops the trailing nulls. Keys written before this,
//! which kept a marker for each trailing null, still decode (to the same value) and sort
//! next to the canonical key of their value; the layout did not change, so neither did any
//! format version. The same holds for tuples and UDTs inside collections, at any depth.
//!
//! Everything else round-trips exactly, so values that Cassandra compares as equal but that
//! differ in bytes get distinct, adjacent encodings, ordered by a deterministic tie-break:
//! NaNs with different payloads (by bits), and a tuple or UDT whose trailing fields are empty
//! values (zero bytes, as an empty `text`) and the same value without those fields (a UDT
//! value written before `ALTER TYPE ... ADD`), which Cassandra compares as equal (its
//! trailing-field loop, meant to skip nulls, skips fields of size 0 too) but this encoding puts
//! the missing field first, as it puts a null field before an empty one. Cassandra's
//! comparison is not transitive there (`(1)` equals `(1, null)` and `(1, '')`, but `(1, null)`
//! is before `(1, '')`), so no order can follow it; this one follows its intent, as Cassandra
//! 5's byte-comparable form does. Set elements and map keys must be in ascending order and
//! distinct (the order Cassandra serializes frozen sets and maps in); anything else is an
//! error, so one set cannot have two encodings.
//!
//! # Bounds
//!
//! Slices and range tombstones are half-open byte intervals `[start, end)`: every full key that
//! extends a prefix `P` sorts after `P` and before `P ++ [AFTER_PREFIX]` (a component starts
//! with a header below `0xFF`), so
//!
//! | CQL bound            | byte bound            |
//! |----------------------|-----------------------|
//! | start `>= P`         | `P`                   |
//! | start `> P`          | `P ++ [0xFF]`         |
//! | end `<= P`           | `P ++ [0xFF]`         |
//! | end `< P`            | `P`                   |
//!
//! and the empty prefix gives the whole partition: `["", [0xFF])`.

mod number;
mod value;

use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

use crate::schema::{ClusteringOrder, CqlType};

/// Header of a component whose value is the empty byte string (CQL allows empty values of
/// most types in clustering keys; they sort first). Not used for `text`, `ascii` and `blob`,
/// whose empty string is an ordinary [`VALUE`].
pub const EMPTY_VALUE: u8 = 0x01;
/// Header of a component with a value.
pub const VALUE: u8 = 0x02;
/// Appended to a prefix to make a bound that sorts after every key extending the prefix.
pub const AFTER_PREFIX: u8 = 0xFF;

/// The largest serialized value of one clustering column, in bytes (Cassandra's limit too:
/// clustering values are written with a 16-bit length).
pub const MAX_CLUSTERING_VALUE_SIZE_BYTES: usize = u16::MAX as usize;

/// The largest unscaled part of a `decimal` in a clustering key, in bytes (about 9,800 decimal
/// digits). Encoding a decimal converts it to base 10 in quadratic time, so it is bounded more
/// tightly than other values.
pub const MAX_DECIMAL_UNSCALED_SIZE_BYTES: usize = 4096;

/// Why a clustering key cannot be encoded or decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// More values were given than the table has clustering columns.
    #[error("{values} values for {columns} clustering columns")]
    TooManyValues { values: usize, columns: usize },
    /// The column's type cannot be part of a clustering key (`duration`, a non-frozen
    /// collection or UDT, a vector of variable-size elements).
    #[error("clustering column {column}: type {ty} cannot be part of a clustering key")]
    UnsupportedType { column: usize, ty: String },
    /// A value is not a valid CQL serialization of its column's type (wrong length, bad UTF-8,
    /// unsorted set, too large, ...).
    #[error("clustering column {column}: invalid {ty} value: {reason}")]
    InvalidValue {
        column: usize,
        ty: String,
        reason: String,
    },
    /// An encoded key is not one that [`encode_key`] produces for these types.
    #[error("malformed clustering key at byte {position}: {reason}")]
    Malformed {
        position: usize,
        reason: &'static str,
    },
}

/// A failure inside a component, before the column is known.
#[derive(Debug)]
enum Fault {
    Unsupported,
    Invalid(String),
    Malformed {
        position: usize,
        reason: &'static str,
    },
}

impl Fault {
    fn invalid(reason: impl Into<String>) -> Fault {
        Fault::Invalid(reason.into())
    }

    fn at(self, column: usize, ty: &CqlType) -> KeyError {
        match self {
            Fault::Unsupported => KeyError::UnsupportedType {
                column,
                ty: value::cql_name(ty),
            },
            Fault::Invalid(reason) => KeyError::InvalidValue {
                column,
                ty: value::cql_name(ty),
                reason,
            },
            Fault::Malformed { position, reason } => KeyError::Malformed { position, reason },
        }
    }
}

/// A cursor over an encoded key that un-inverts DESC bytes as it reads them: every byte read
/// is XORed with `mask` (0x00 for ASC, 0xFF for DESC).
#[derive(Debug)]
struct KeyReader<'a> {
    buf: &'a [u8],
    pos: usize,
    mask: u8,
}

impl<'a> KeyReader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        KeyReader {
            buf,
            pos: 0,
            mask: 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn position(&self) -> usize {
        self.pos
    }

    fn malformed(&self, reason: &'static str) -> Fault {
        Fault::Malformed {
            position: self.pos,
            reason,
        }
    }

    fn u8(&mut self) -> Result<u8, Fault> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.malformed("truncated"))?;
        self.pos += 1;
        Ok(b ^ self.mask)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Fault> {
        let mut a = [0u8; N];
        for b in &mut a {
            *b = self.u8()?;
        }
        Ok(a)
    }

    /// Append `n` un-inverted bytes to `out`, checking the length before allocating.
    fn take_into(&mut self, n: usize, out: &mut Vec<u8>) -> Result<(), Fault> {
        if n > self.buf.len() - self.pos {
            return Err(self.malformed("truncated"));
        }
        out.extend(
            self.buf[self.pos..self.pos + n]
                .iter()
                .map(|b| b ^ self.mask),
        );
        self.pos += n;
        Ok(())
    }

    /// The raw (still inverted) bytes between two positions.
    fn raw(&self, from: usize, to: usize) -> &'a [u8] {
        &self.buf[from..to]
    }
}

/// Encode a clustering key, or a prefix of one, from its columns' CQL-serialized values.
///
/// `types` are the table's clustering columns in key order; `values` may be shorter (a
/// prefix). Errors on more values than columns, on a type that cannot be a clustering column,
/// and on any value that is not a valid serialization of its type.
pub fn encode_key(
    types: &[(CqlType, ClusteringOrder)],
    values: &[&[u8]],
) -> Result<Bytes, KeyError> {
    if values.len() > types.len() {
        return Err(KeyError::TooManyValues {
            values: values.len(),
            columns: types.len(),
        });
    }
    check_types(types)?;
    let mut out = Vec::with_capacity(values.iter().map(|v| v.len() + 4).sum());
    for (column, ((ty, order), v)) in types.iter().zip(values).enumerate() {
        if v.len() > MAX_CLUSTERING_VALUE_SIZE_BYTES {
            let reason = format!(
                "{} bytes, more than the maximum of {MAX_CLUSTERING_VALUE_SIZE_BYTES}",
                v.len()
            );
            return Err(Fault::Invalid(reason).at(column, ty));
        }
        if v.is_empty() && !value::empty_is_a_value(ty) {
            out.push(EMPTY_VALUE);
            continue;
        }
        out.push(VALUE);
        let start = out.len();
        value::encode(ty, v, &mut out).map_err(|f| f.at(column, ty))?;
        if *order == ClusteringOrder::Desc {
            for b in &mut out[start..] {
                *b = !*b;
            }
        }
    }
    Ok(Bytes::from(out))
}

/// Decode a key (or prefix) made by [`encode_key`] with the same `types` back to the
/// CQL-serialized values: as they were given, except that numbers come back in their canonical
/// form and tuples and UDTs with every field of their type, the missing ones null (module
/// docs). Errors on any byte string that [`encode_key`] cannot produce (or, for numbers,
/// tuples and UDTs, did not produce before their encoding became canonical).
pub fn decode_key(
    types: &[(CqlType, ClusteringOrder)],
    key: &[u8],
) -> Result<Vec<Bytes>, KeyError> {
    check_types(types)?;
    let mut r = KeyReader::new(key);
    let mut values = Vec::new();
    for (column, (ty, order)) in types.iter().enumerate() {
        if r.is_empty() {
            break;
        }
        r.mask = 0;
        match r.u8().map_err(|f| f.at(column, ty))? {
            EMPTY_VALUE if !value::empty_is_a_value(ty) => values.push(Bytes::new()),
            VALUE => {
                r.mask = if *order == ClusteringOrder::Desc {
                    0xFF
                } else {
                    0x00
                };
                let mut out = Vec::new();
                value::decode(ty, &mut r, &mut out).map_err(|f| f.at(column, ty))?;
                if out.is_empty() && !value::empty_is_a_value(ty) {
                    return Err(r.malformed("empty value encoded as a value").at(column, ty));
                }
                values.push(Bytes::from(out));
            }
            _ => {
                return Err(KeyError::Malformed {
                    position: r.pos - 1,
                    reason: "bad header",
                });
            }
        }
    }
    if !r.is_empty() {
        return Err(KeyError::Malformed {
            position: r.position(),
            reason: "bytes after the last clustering column",
        });
    }
    Ok(values)
}

/// The form a serialized value of `ty` takes as a clustering key component: the value as
/// [`decode_key`] gives it back, so a number in its canonical form (`1.50` as `1.5`), a tuple or
/// UDT with all its type's fields (the missing ones null), and any other value unchanged. What
/// a lookup of a clustering value by its bytes (a secondary index on a clustering column) must
/// look for.
pub fn canonical_value(ty: &CqlType, value: &[u8]) -> Result<Bytes, KeyError> {
    let types = [(ty.clone(), ClusteringOrder::Asc)];
    let mut values = decode_key(&types, &encode_key(&types, &[value])?)?;
    values.pop().ok_or(KeyError::Malformed {
        position: 0,
        reason: "no value decoded",
    })
}

fn check_types(types: &[(CqlType, ClusteringOrder)]) -> Result<(), KeyError> {
    for (column, (ty, _)) in types.iter().enumerate() {
        if ty.is_multi_cell() {
            return Err(Fault::Unsupported.at(column, ty));
        }
        value::check_type(ty).map_err(|f| f.at(column, ty))?;
    }
    Ok(())
}

/// One end of a CQL clustering slice or range tombstone: an encoded prefix and whether keys
/// equal to it (that is, extending it) are included. See the table in the module documentation
/// for the byte bound each case becomes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    /// An encoded clustering prefix (from [`encode_key`] with a prefix of the values).
    pub prefix: Bytes,
    /// Whether keys extending `prefix` are inside the slice (`>=`, `<=`) or not (`>`, `<`).
    pub inclusive: bool,
}

impl Bound {
    /// The inclusive byte bound when this is the start of a slice.
    pub fn start_bytes(&self) -> Bytes {
        start_bound(&self.prefix, self.inclusive)
    }

    /// The exclusive byte bound when this is the end of a slice.
    pub fn end_bytes(&self) -> Bytes {
        end_bound(&self.prefix, self.inclusive)
    }
}

/// The byte bound for a slice start on `prefix` (an encoded clustering prefix).
pub fn start_bound(prefix: &[u8], inclusive: bool) -> Bytes {
    if inclusive {
        Bytes::copy_from_slice(prefix)
    } else {
        after_prefix(prefix)
    }
}

/// The byte bound for a slice end on `prefix` (exclusive in byte space).
pub fn end_bound(prefix: &[u8], inclusive: bool) -> Bytes {
    if inclusive {
        after_prefix(prefix)
    } else {
        Bytes::copy_from_slice(prefix)
    }
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
