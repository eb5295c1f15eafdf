//! Cassandra's order of the values of a type, and the conversion of clustering values to the
//! storage engine's order-preserving key encoding.
//!
//! [`compare`] follows the `compareCustom` of each `AbstractType` in `db.marshal`: the empty
//! value before every other; integers, `timestamp` and `counter` signed; `date` unsigned (its
//! epoch is 2^31); `float` and `double` as Java's `Float.compare` (-0.0 before 0.0, every NaN
//! equal and after +infinity); `varint` and `decimal` by numeric value (`1.0` equals `1.00`);
//! `text`, `ascii`, `blob`, `inet` and `duration` by their bytes; `uuid` by version, then by
//! timestamp (version 1) or high half, then low half unsigned; `timeuuid` by timestamp, then
//! the low half as signed bytes; lists, sets and vectors element by element, then shorter
//! first; maps entry by entry (key, then value); tuples and UDTs field by field with null
//! before any value and trailing nulls ignored.
//!
//! The clustering encoding (`khata_types::clustering`) orders exactly as [`compare`]: numbers
//! `compare` finds equal (`1.0` and `1.00`, a `varint` with a redundant sign byte) share one
//! encoding, which decodes to their canonical form, and so do tuples and UDTs with and without
//! trailing nulls (decoded with all their fields); other values `compare` finds equal (NaNs
//! with different payloads, a tuple with trailing empty fields and one without those fields)
//! keep distinct encodings: there its order is finer, never different. `tests/value_order.rs`
//! checks this.
//!
//! [`equal_serialized`] is Cassandra's equality of values in filters and conditions
//! (`Operator.EQ` and `IN` are `compareForCQL(a, b) == 0`): by [`compare`], not by bytes.
//!
//! One gap: Cassandra length-prefixes the elements of vectors of `tinyint`, `smallint`, `date`
//! and `time` on the wire (its `valueLengthIfFixed` gives those types no fixed length), while
//! `khata_types::clustering` reads them as fixed-size, so [`clustering_key`] refuses such
//! vector columns until that module follows the wire format.

use std::cmp::Ordering;
use std::net::IpAddr;

use bytes::Bytes;
use khata_types::clustering::{self, KeyError};
use khata_types::schema::{ClusteringOrder, CqlType};
use uuid::Uuid;

use super::{CqlValue, numeric, type_name};

/// Cassandra's order of two values of `ty`. Values of different variants (which do not both
/// conform to one type) are ordered by variant, so that the order stays total.
pub fn compare(ty: &CqlType, a: &CqlValue, b: &CqlValue) -> Ordering {
    use CqlValue as V;
    match (a, b) {
        _ if serializes_empty(a) || serializes_empty(b) => {
            serializes_empty(b).cmp(&serializes_empty(a))
        }
        (V::Ascii(x), V::Ascii(y)) | (V::Text(x), V::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (V::Blob(x), V::Blob(y)) => x.cmp(y),
        (V::Boolean(x), V::Boolean(y)) => x.cmp(y),
        (V::Bigint(x), V::Bigint(y))
        | (V::Counter(x), V::Counter(y))
        | (V::Timestamp(x), V::Timestamp(y))
        | (V::Time(x), V::Time(y)) => x.cmp(y),
        (V::Int(x), V::Int(y)) => x.cmp(y),
        (V::Smallint(x), V::Smallint(y)) => x.cmp(y),
        (V::Tinyint(x), V::Tinyint(y)) => x.cmp(y),
        (V::Date(x), V::Date(y)) => x.cmp(y),
        (V::Float(x), V::Float(y)) => java_float_order(x.is_nan(), y.is_nan(), || x.total_cmp(y)),
        (V::Double(x), V::Double(y)) => java_float_order(x.is_nan(), y.is_nan(), || x.total_cmp(y)),
        (V::Varint(x), V::Varint(y)) => x.cmp(y),
        (V::Decimal(x), V::Decimal(y)) => numeric::compare_decimal(x, y),
        (V::Duration(_), V::Duration(_)) => a.to_bytes(ty).cmp(&b.to_bytes(ty)),
        (V::Inet(x), V::Inet(y)) => octets(x).cmp(&octets(y)),
        (V::Uuid(x), V::Uuid(y)) => compare_uuid(x, y),
        (V::Timeuuid(x), V::Timeuuid(y)) => compare_timeuuid(x, y),
        (V::List(x), V::List(y)) | (V::Set(x), V::Set(y)) | (V::Vector(x), V::Vector(y)) => {
            let element = match ty {
                CqlType::List { element, .. }
                | CqlType::Set { element, .. }
                | CqlType::Vector { element, .. } => element,
                _ => ty,
            };
            compare_sequences(x.iter(), y.iter(), |p, q| compare(element, p, q))
        }
        (V::Map(x), V::Map(y)) => {
            let (kt, vt) = match ty {
                CqlType::Map { key, value, .. } => (&**key, &**value),
                _ => (ty, ty),
            };
            compare_sequences(x.iter(), y.iter(), |(k1, v1), (k2, v2)| {
                compare(kt, k1, k2).then_with(|| compare(vt, v1, v2))
            })
        }
        (V::Tuple(x), V::Tuple(y)) => {
            let types: Vec<&CqlType> = match ty {
                CqlType::Tuple(types) => types.iter().collect(),
                _ => Vec::new(),
            };
            compare_fields(&types, x.iter(), y.iter())
        }
        (V::Udt(x), V::Udt(y)) => {
            let types: Vec<&CqlType> = match ty {
                CqlType::Udt { fields, .. } => fields.iter().map(|(_, t)| t).collect(),
                _ => Vec::new(),
            };
            compare_fields(&types, x.iter().map(|(_, f)| f), y.iter().map(|(_, f)| f))
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Whether two serialized values of `ty` are equal as Cassandra's filters and conditions
/// compare them (`compareForCQL(a, b) == 0`): `1230` equals `1.23E+3`, a varint equals itself
/// with a redundant sign byte. Equal bytes are equal values; for the types whose order tells
/// apart every two byte strings the bytes decide alone, and otherwise the values are compared
/// (a value that does not deserialize equals only its own bytes).
pub fn equal_serialized(ty: &CqlType, a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    if bytes_decide_equality(ty) {
        return false;
    }
    match (CqlValue::deserialize(ty, a), CqlValue::deserialize(ty, b)) {
        (Ok(x), Ok(y)) => compare(ty, &x, &y) == Ordering::Equal,
        _ => false,
    }
}

/// Whether [`compare`] finds two values of `ty` equal only when their serializations are:
/// not for numbers of any length or scale, floats (every NaN is equal), booleans (any non-zero
/// byte is true), tuples and UDTs (trailing nulls are ignored), nor collections of those.
fn bytes_decide_equality(ty: &CqlType) -> bool {
    match ty {
        CqlType::Ascii
        | CqlType::Text
        | CqlType::Blob
        | CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp
        | CqlType::Date
        | CqlType::Time
        | CqlType::Uuid
        | CqlType::Timeuuid
        | CqlType::Inet
        | CqlType::Duration => true,
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => bytes_decide_equality(element),
        CqlType::Map { key, value, .. } => {
            bytes_decide_equality(key) && bytes_decide_equality(value)
        }
        _ => false,
    }
}

/// Whether the value serializes to zero bytes (the empty value, an empty string, a tuple or
/// UDT without fields): Cassandra's comparators put those first.
fn serializes_empty(v: &CqlValue) -> bool {
    match v {
        CqlValue::Empty => true,
        CqlValue::Ascii(s) | CqlValue::Text(s) => s.is_empty(),
        CqlValue::Blob(b) => b.is_empty(),
        CqlValue::Tuple(f) => f.is_empty(),
        CqlValue::Udt(f) => f.is_empty(),
        _ => false,
    }
}

/// Java's `Float.compare` / `Double.compare`: NaNs equal and greatest, otherwise the IEEE total
/// order (which puts -0.0 before 0.0).
fn java_float_order(a_nan: bool, b_nan: bool, otherwise: impl FnOnce() -> Ordering) -> Ordering {
    match (a_nan, b_nan) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => otherwise(),
    }
}

fn octets(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// A version 1 UUID's high half rearranged to compare as its timestamp (Cassandra's
/// `reorderTimestampBytes`).
fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

/// `UUIDType`: version, then the timestamp (version 1) or the high half unsigned, then the low
/// half unsigned.
fn compare_uuid(a: &Uuid, b: &Uuid) -> Ordering {
    let ((ma, la), (mb, lb)) = (a.as_u64_pair(), b.as_u64_pair());
    let (va, vb) = ((ma >> 12) & 0xF, (mb >> 12) & 0xF);
    va.cmp(&vb)
        .then_with(|| {
            if va == 1 {
                reorder_timestamp(ma).cmp(&reorder_timestamp(mb))
            } else {
                ma.cmp(&mb)
            }
        })
        .then(la.cmp(&lb))
}

/// `TimeUUIDType`: the timestamp, then the low half compared as signed bytes.
fn compare_timeuuid(a: &Uuid, b: &Uuid) -> Ordering {
    let ((ma, la), (mb, lb)) = (a.as_u64_pair(), b.as_u64_pair());
    const SIGN_BITS: u64 = 0x8080_8080_8080_8080;
    reorder_timestamp(ma)
        .cmp(&reorder_timestamp(mb))
        .then((la ^ SIGN_BITS).cmp(&(lb ^ SIGN_BITS)))
}

/// Element by element, then the shorter first.
fn compare_sequences<T>(
    mut a: impl ExactSizeIterator<Item = T>,
    mut b: impl ExactSizeIterator<Item = T>,
    mut cmp: impl FnMut(T, T) -> Ordering,
) -> Ordering {
    let (len_a, len_b) = (a.len(), b.len());
    while let (Some(x), Some(y)) = (a.next(), b.next()) {
        match cmp(x, y) {
            Ordering::Equal => {}
            other => return other,
        }
    }
    len_a.cmp(&len_b)
}

/// `TupleType.compareCustom`: field by field, null first; then a side with a trailing field
/// that is neither null nor empty is greater.
fn compare_fields<'a>(
    types: &[&CqlType],
    a: impl Iterator<Item = &'a Option<CqlValue>>,
    b: impl Iterator<Item = &'a Option<CqlValue>>,
) -> Ordering {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut i = 0;
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        let ordering = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => {
                let ty = types.get(i).copied().unwrap_or(&CqlType::Blob);
                compare(ty, x, y)
            }
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
        a.next();
        b.next();
        i += 1;
    }
    let has_value = |f: &Option<CqlValue>| f.as_ref().is_some_and(|v| !serializes_empty(v));
    if a.any(has_value) {
        Ordering::Greater
    } else if b.any(has_value) {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// An order between values of different variants: only reached for values that do not conform
/// to one type.
fn rank(v: &CqlValue) -> u8 {
    use CqlValue as V;
    match v {
        V::Empty => 0,
        V::Ascii(_) => 1,
        V::Bigint(_) => 2,
        V::Blob(_) => 3,
        V::Boolean(_) => 4,
        V::Counter(_) => 5,
        V::Date(_) => 6,
        V::Decimal(_) => 7,
        V::Double(_) => 8,
        V::Duration(_) => 9,
        V::Float(_) => 10,
        V::Inet(_) => 11,
        V::Int(_) => 12,
        V::Smallint(_) => 13,
        V::Text(_) => 14,
        V::Time(_) => 15,
        V::Timestamp(_) => 16,
        V::Timeuuid(_) => 17,
        V::Tinyint(_) => 18,
        V::Uuid(_) => 19,
        V::Varint(_) => 20,
        V::List(_) => 21,
        V::Set(_) => 22,
        V::Map(_) => 23,
        V::Tuple(_) => 24,
        V::Udt(_) => 25,
        V::Vector(_) => 26,
    }
}

/// The storage encoding of a clustering key or prefix (`khata_types::clustering::encode_key`)
/// from its values: `columns` are the table's clustering columns in order, `values` the first
/// of them.
pub fn clustering_key(
    columns: &[(CqlType, ClusteringOrder)],
    values: &[CqlValue],
) -> Result<Bytes, KeyError> {
    let mut serialized = Vec::with_capacity(values.len());
    for (column, value) in values.iter().enumerate() {
        let Some((ty, _)) = columns.get(column) else {
            // More values than columns: `encode_key` says so.
            serialized.push(Vec::new());
            continue;
        };
        if !value.conforms_to(ty) {
            return Err(KeyError::InvalidValue {
                column,
                ty: type_name(ty),
                reason: format!("not a value of the type: {value:?}"),
            });
        }
        serialized.push(value.to_bytes(ty));
    }
    let slices: Vec<&[u8]> = serialized.iter().map(Vec::as_slice).collect();
    clustering::encode_key(columns, &slices)
}

/// The values of an encoded clustering key or prefix made by [`clustering_key`].
pub fn clustering_values(
    columns: &[(CqlType, ClusteringOrder)],
    key: &[u8],
) -> Result<Vec<CqlValue>, KeyError> {
    let serialized = clustering::decode_key(columns, key)?;
    serialized
        .iter()
        .zip(columns)
        .enumerate()
        .map(|(column, (bytes, (ty, _)))| {
            CqlValue::deserialize(ty, bytes).map_err(|e| KeyError::InvalidValue {
                column,
                ty: type_name(ty),
                reason: e.to_string(),
            })
        })
        .collect()
}
