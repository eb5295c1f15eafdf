//! The order-preserving encoding of one CQL-serialized value (the body of a clustering
//! component after its header), type by type, and its inverse.
//!
//! Every encoding here is prefix-free and orders like Cassandra's comparator for the type (see
//! the table in the parent module). Frozen collections, tuples and UDTs encode each element as
//! a marker byte and, for a value, the element type's encoding; the sequence ends with
//! [`NESTED_END`]. The markers order as end < null < empty < value, which gives Cassandra's
//! element-wise comparison with shorter sequences first and nulls (tuple and UDT fields only)
//! before any value. A tuple or UDT leaves out its trailing null fields, so that a missing field
//! compares as a null one (Cassandra's `TupleType.compareCustom`), and decodes with all its
//! type's fields.

use std::cmp::Ordering;

use super::{Fault, KeyReader, MAX_DECIMAL_UNSCALED_SIZE_BYTES, number};
use crate::schema::CqlType;

/// Ends a collection, tuple or UDT.
const NESTED_END: u8 = 0x00;
/// A null tuple or UDT field.
const NESTED_NULL: u8 = 0x01;
/// An empty element of a type whose domain does not contain the empty string.
const NESTED_EMPTY: u8 = 0x02;
/// An element with a value; its encoding follows.
const NESTED_VALUE: u8 = 0x03;

/// The largest `time`: the last nanosecond of a day.
const MAX_TIME_NANOS: i64 = 86_400_000_000_000 - 1;

/// Whether the empty byte string is an ordinary value of `ty` (ordered with the others) rather
/// than CQL's "empty value" of a type that has no empty value.
pub(super) fn empty_is_a_value(ty: &CqlType) -> bool {
    matches!(ty, CqlType::Ascii | CqlType::Text | CqlType::Blob)
}

/// Whether `ty` can be (part of) a clustering column. Nested collections and UDTs are frozen
/// whatever their flag says: inside a frozen value everything is frozen.
pub(super) fn check_type(ty: &CqlType) -> Result<(), Fault> {
    match ty {
        CqlType::Duration => Err(Fault::Unsupported),
        CqlType::List { element, .. } | CqlType::Set { element, .. } => check_type(element),
        CqlType::Map { key, value, .. } => {
            check_type(key)?;
            check_type(value)
        }
        CqlType::Tuple(types) => types.iter().try_for_each(check_type),
        CqlType::Udt { fields, .. } => fields.iter().try_for_each(|(_, t)| check_type(t)),
        CqlType::Vector { element, dimension } => {
            if *dimension == 0 || element.fixed_length().is_none() {
                Err(Fault::Unsupported)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// A CQL-like name of a type, for error messages.
pub(super) fn cql_name(ty: &CqlType) -> String {
    let frozen = |f: bool, s: String| if f { format!("frozen<{s}>") } else { s };
    match ty {
        CqlType::List { element, frozen: f } => frozen(*f, format!("list<{}>", cql_name(element))),
        CqlType::Set { element, frozen: f } => frozen(*f, format!("set<{}>", cql_name(element))),
        CqlType::Map {
            key,
            value,
            frozen: f,
        } => frozen(*f, format!("map<{}, {}>", cql_name(key), cql_name(value))),
        CqlType::Tuple(types) => {
            let names: Vec<String> = types.iter().map(cql_name).collect();
            format!("tuple<{}>", names.join(", "))
        }
        CqlType::Udt {
            keyspace,
            name,
            frozen: f,
            ..
        } => frozen(*f, format!("{keyspace}.{name}")),
        CqlType::Vector { element, dimension } => {
            format!("vector<{}, {dimension}>", cql_name(element))
        }
        other => format!("{other:?}").to_lowercase(),
    }
}

fn exact_len<'v>(v: &'v [u8], ty: &CqlType) -> Result<&'v [u8], Fault> {
    let n = ty.fixed_length().ok_or(Fault::Unsupported)?;
    if v.len() != n {
        return Err(Fault::invalid(format!("{} bytes, expected {n}", v.len())));
    }
    Ok(v)
}

/// Append the encoding of `v`, a non-empty serialized value of `ty` (or any value of a type
/// for which [`empty_is_a_value`]), to `out`.
pub(super) fn encode(ty: &CqlType, v: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    match ty {
        CqlType::Ascii => {
            if !v.is_ascii() {
                return Err(Fault::invalid("non-ASCII byte"));
            }
            put_escaped(v, out);
        }
        CqlType::Text => {
            std::str::from_utf8(v).map_err(|e| Fault::invalid(format!("not UTF-8: {e}")))?;
            put_escaped(v, out);
        }
        CqlType::Blob => put_escaped(v, out),
        CqlType::Boolean => {
            let b = exact_len(v, ty)?[0];
            if b > 1 {
                return Err(Fault::invalid(format!(
                    "boolean byte {b:#04x}, expected 0 or 1"
                )));
            }
            out.push(b);
        }
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            let v = exact_len(v, ty)?;
            out.push(v[0] ^ 0x80);
            out.extend_from_slice(&v[1..]);
        }
        CqlType::Date => out.extend_from_slice(exact_len(v, ty)?),
        CqlType::Time => {
            let v = exact_len(v, ty)?;
            let nanos = i64::from_be_bytes(v.try_into().map_err(|_| Fault::Unsupported)?);
            if !(0..=MAX_TIME_NANOS).contains(&nanos) {
                return Err(Fault::invalid(format!(
                    "time {nanos} outside 0..={MAX_TIME_NANOS}"
                )));
            }
            out.extend_from_slice(v);
        }
        CqlType::Float => {
            let bits = u32::from_be_bytes(
                exact_len(v, ty)?
                    .try_into()
                    .map_err(|_| Fault::Unsupported)?,
            );
            put_float(u64::from(bits), 32, f32::from_bits(bits).is_nan(), out);
        }
        CqlType::Double => {
            let bits = u64::from_be_bytes(
                exact_len(v, ty)?
                    .try_into()
                    .map_err(|_| Fault::Unsupported)?,
            );
            put_float(bits, 64, f64::from_bits(bits).is_nan(), out);
        }
        CqlType::Uuid => {
            let (msb, lsb) = uuid_halves(exact_len(v, ty)?)?;
            out.extend_from_slice(&uuid_order_msb(msb).to_be_bytes());
            out.extend_from_slice(&lsb.to_be_bytes());
        }
        CqlType::Timeuuid => {
            let (msb, lsb) = uuid_halves(exact_len(v, ty)?)?;
            if uuid_version(msb) != 1 {
                let version = uuid_version(msb);
                return Err(Fault::invalid(format!(
                    "UUID version {version}, timeuuid needs 1"
                )));
            }
            out.extend_from_slice(&reorder_timestamp(msb).to_be_bytes());
            out.extend_from_slice(&(lsb ^ 0x8080_8080_8080_8080).to_be_bytes());
        }
        CqlType::Inet => match v.len() {
            4 => {
                out.extend_from_slice(v);
                out.push(0x00);
            }
            16 => {
                out.extend_from_slice(&v[..4]);
                out.push(0x01);
                out.extend_from_slice(&v[4..]);
            }
            n => return Err(Fault::invalid(format!("{n} bytes, expected 4 or 16"))),
        },
        CqlType::Varint => number::encode_varint(v, out),
        CqlType::Decimal => {
            if v.len() > 4 + MAX_DECIMAL_UNSCALED_SIZE_BYTES {
                return Err(Fault::invalid(format!(
                    "unscaled value of {} bytes, more than the maximum of \
                     {MAX_DECIMAL_UNSCALED_SIZE_BYTES}",
                    v.len() - 4
                )));
            }
            number::encode_decimal(v, out)?;
        }
        CqlType::Duration => return Err(Fault::Unsupported),
        CqlType::List { element, .. } => encode_collection(&[element], false, v, out)?,
        CqlType::Set { element, .. } => encode_collection(&[element], true, v, out)?,
        CqlType::Map { key, value, .. } => encode_collection(&[key, value], true, v, out)?,
        CqlType::Tuple(types) => encode_tuple(&types.iter().collect::<Vec<_>>(), v, out)?,
        CqlType::Udt { fields, .. } => {
            encode_tuple(&fields.iter().map(|(_, t)| t).collect::<Vec<_>>(), v, out)?
        }
        CqlType::Vector { element, dimension } => {
            let size = element.fixed_length().ok_or(Fault::Unsupported)?;
            let expected = usize::try_from(*dimension)
                .ok()
                .and_then(|d| d.checked_mul(size))
                .ok_or(Fault::Unsupported)?;
            if v.len() != expected {
                return Err(Fault::invalid(format!(
                    "{} bytes, expected {expected}",
                    v.len()
                )));
            }
            for chunk in v.chunks_exact(size) {
                encode(element, chunk, out)?;
            }
        }
    }
    Ok(())
}

/// Decode one value encoded by [`encode`], appending its CQL serialization to `out`.
pub(super) fn decode(ty: &CqlType, r: &mut KeyReader<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    match ty {
        CqlType::Ascii | CqlType::Text | CqlType::Blob => {
            let start = out.len();
            get_escaped(r, out)?;
            let ok = match ty {
                CqlType::Ascii => out[start..].is_ascii(),
                CqlType::Text => std::str::from_utf8(&out[start..]).is_ok(),
                _ => true,
            };
            if !ok {
                return Err(r.malformed("invalid ascii or text value"));
            }
        }
        CqlType::Boolean => {
            let b = r.u8()?;
            if b > 1 {
                return Err(r.malformed("boolean byte other than 0 or 1"));
            }
            out.push(b);
        }
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            let n = ty.fixed_length().ok_or(Fault::Unsupported)?;
            let start = out.len();
            r.take_into(n, out)?;
            out[start] ^= 0x80;
        }
        CqlType::Date => r.take_into(4, out)?,
        CqlType::Time => {
            let nanos = i64::from_be_bytes(r.array()?);
            if !(0..=MAX_TIME_NANOS).contains(&nanos) {
                return Err(r.malformed("time out of range"));
            }
            out.extend_from_slice(&nanos.to_be_bytes());
        }
        CqlType::Float => {
            let bits = get_float(r, 32, |b| f32::from_bits(b as u32).is_nan())?;
            out.extend_from_slice(&(bits as u32).to_be_bytes());
        }
        CqlType::Double => {
            let bits = get_float(r, 64, |b| f64::from_bits(b).is_nan())?;
            out.extend_from_slice(&bits.to_be_bytes());
        }
        CqlType::Uuid => {
            let msb = uuid_unorder_msb(u64::from_be_bytes(r.array()?));
            out.extend_from_slice(&msb.to_be_bytes());
            r.take_into(8, out)?;
        }
        CqlType::Timeuuid => {
            let msb = reorder_timestamp_back(u64::from_be_bytes(r.array()?));
            if uuid_version(msb) != 1 {
                return Err(r.malformed("timeuuid of a version other than 1"));
            }
            let lsb = u64::from_be_bytes(r.array()?) ^ 0x8080_8080_8080_8080;
            out.extend_from_slice(&msb.to_be_bytes());
            out.extend_from_slice(&lsb.to_be_bytes());
        }
        CqlType::Inet => {
            r.take_into(4, out)?;
            match r.u8()? {
                0x00 => {}
                0x01 => r.take_into(12, out)?,
                _ => return Err(r.malformed("bad inet family")),
            }
        }
        CqlType::Varint => number::decode_varint(r, out)?,
        CqlType::Decimal => number::decode_decimal(r, out)?,
        CqlType::Duration => return Err(Fault::Unsupported),
        CqlType::List { element, .. } => decode_collection(&[element], false, r, out)?,
        CqlType::Set { element, .. } => decode_collection(&[element], true, r, out)?,
        CqlType::Map { key, value, .. } => decode_collection(&[key, value], true, r, out)?,
        CqlType::Tuple(types) => decode_tuple(&types.iter().collect::<Vec<_>>(), r, out)?,
        CqlType::Udt { fields, .. } => {
            decode_tuple(&fields.iter().map(|(_, t)| t).collect::<Vec<_>>(), r, out)?
        }
        CqlType::Vector { element, dimension } => {
            for _ in 0..*dimension {
                decode(element, r, out)?;
            }
        }
    }
    Ok(())
}

/// Bytes with `00` escaped as `00 FF`, then the terminator `00 01`: bytewise order with
/// shorter strings first, and prefix-free.
fn put_escaped(v: &[u8], out: &mut Vec<u8>) {
    for &b in v {
        out.push(b);
        if b == 0x00 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

fn get_escaped(r: &mut KeyReader<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    loop {
        match r.u8()? {
            0x00 => match r.u8()? {
                0xFF => out.push(0x00),
                0x01 => return Ok(()),
                _ => return Err(r.malformed("bad escape in a string")),
            },
            b => out.push(b),
        }
    }
}

/// IEEE bits of `width` made monotone (negative numbers inverted, positive ones with the sign
/// bit set) after the class byte `01`; a NaN is the class byte `02` and its raw bits, so that
/// every NaN sorts after +infinity as in Java's `Float.compare`.
fn put_float(bits: u64, width: u32, is_nan: bool, out: &mut Vec<u8>) {
    let bytes = (width / 8) as usize;
    let sign = 1u64 << (width - 1);
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let key = if is_nan {
        out.push(0x02);
        bits
    } else {
        out.push(0x01);
        if bits & sign != 0 {
            !bits & all
        } else {
            bits | sign
        }
    };
    out.extend_from_slice(&key.to_be_bytes()[8 - bytes..]);
}

fn get_float(
    r: &mut KeyReader<'_>,
    width: u32,
    is_nan: impl Fn(u64) -> bool,
) -> Result<u64, Fault> {
    let bytes = (width / 8) as usize;
    let sign = 1u64 << (width - 1);
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let class = r.u8()?;
    let mut be = [0u8; 8];
    for b in &mut be[8 - bytes..] {
        *b = r.u8()?;
    }
    let key = u64::from_be_bytes(be);
    let bits = match class {
        0x01 => {
            if key & sign != 0 {
                key & !sign
            } else {
                !key & all
            }
        }
        0x02 => key,
        _ => return Err(r.malformed("bad float class")),
    };
    if is_nan(bits) != (class == 0x02) {
        return Err(r.malformed("NaN in the wrong float class"));
    }
    Ok(bits)
}

fn uuid_halves(v: &[u8]) -> Result<(u64, u64), Fault> {
    let msb = v
        .get(..8)
        .and_then(|s| s.try_into().ok())
        .ok_or(Fault::Unsupported)?;
    let lsb = v
        .get(8..16)
        .and_then(|s| s.try_into().ok())
        .ok_or(Fault::Unsupported)?;
    Ok((u64::from_be_bytes(msb), u64::from_be_bytes(lsb)))
}

fn uuid_version(msb: u64) -> u64 {
    (msb >> 12) & 0xF
}

/// A version 1 UUID's high half rearranged so that it compares as its timestamp:
/// `version | time_hi | time_mid | time_low` (Cassandra's `reorderTimestampBytes`).
fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

fn reorder_timestamp_back(key: u64) -> u64 {
    (key << 32) | ((key >> 16) & 0xFFFF_0000) | (key >> 48)
}

/// `UUIDType` compares the version first, then (version 1) the timestamp or (other versions)
/// the high half unsigned, then the low half unsigned. So the high half becomes the version
/// nibble followed by the timestamp, or by the other 60 bits in their order.
fn uuid_order_msb(msb: u64) -> u64 {
    let version = uuid_version(msb);
    if version == 1 {
        reorder_timestamp(msb)
    } else {
        (version << 60) | ((msb >> 4) & 0x0FFF_FFFF_FFFF_F000) | (msb & 0xFFF)
    }
}

fn uuid_unorder_msb(key: u64) -> u64 {
    let version = key >> 60;
    if version == 1 {
        reorder_timestamp_back(key)
    } else {
        ((key << 4) & 0xFFFF_FFFF_FFFF_0000) | (version << 12) | (key & 0xFFF)
    }
}

/// A reader of the CQL serialization of collections and tuples: big-endian `int` counts and
/// `[bytes]` elements (an `int` length, -1 for null, then the bytes).
struct SerializedReader<'v> {
    v: &'v [u8],
}

impl<'v> SerializedReader<'v> {
    fn int(&mut self) -> Result<i32, Fault> {
        let (head, rest) = self
            .v
            .split_first_chunk::<4>()
            .ok_or_else(|| Fault::invalid("truncated"))?;
        self.v = rest;
        Ok(i32::from_be_bytes(*head))
    }

    /// `None` for a null element.
    fn element(&mut self) -> Result<Option<&'v [u8]>, Fault> {
        let len = self.int()?;
        if len < 0 {
            return if len == -1 {
                Ok(None)
            } else {
                Err(Fault::invalid("negative length"))
            };
        }
        let len = len as usize;
        if len > self.v.len() {
            return Err(Fault::invalid("element longer than the value"));
        }
        let (e, rest) = self.v.split_at(len);
        self.v = rest;
        Ok(Some(e))
    }
}

/// An element of a collection, tuple or UDT: its marker, then its encoding.
fn encode_nested(ty: &CqlType, e: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    if e.is_empty() && !empty_is_a_value(ty) {
        out.push(NESTED_EMPTY);
        Ok(())
    } else {
        out.push(NESTED_VALUE);
        encode(ty, e, out)
    }
}

/// Decode one element; `Ok(false)` at the end marker.
fn decode_nested(
    ty: &CqlType,
    allow_null: bool,
    r: &mut KeyReader<'_>,
    out: &mut Vec<u8>,
) -> Result<bool, Fault> {
    match r.u8()? {
        NESTED_END => return Ok(false),
        NESTED_NULL if allow_null => out.extend_from_slice(&(-1i32).to_be_bytes()),
        NESTED_EMPTY if !empty_is_a_value(ty) => out.extend_from_slice(&0i32.to_be_bytes()),
        NESTED_VALUE => {
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            decode(ty, r, out)?;
            let len = out.len() - at - 4;
            if len == 0 && !empty_is_a_value(ty) {
                return Err(r.malformed("empty element encoded as a value"));
            }
            let len = i32::try_from(len).map_err(|_| r.malformed("element too long"))?;
            out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        _ => return Err(r.malformed("bad element marker")),
    }
    Ok(true)
}

/// A frozen list or set (`elements` = [element]) or map ([key, value]): `int` count, then
/// each entry's elements. With `sorted`, set elements or map keys must strictly ascend.
fn encode_collection(
    elements: &[&CqlType],
    sorted: bool,
    v: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Fault> {
    let mut c = SerializedReader { v };
    let count = c.int()?;
    if count < 0 {
        return Err(Fault::invalid("negative element count"));
    }
    let mut previous: Option<(usize, usize)> = None;
    for _ in 0..count {
        for (i, ty) in elements.iter().enumerate() {
            let e = c
                .element()?
                .ok_or_else(|| Fault::invalid("null in a collection"))?;
            let start = out.len();
            encode_nested(ty, e, out)?;
            if sorted && i == 0 {
                if let Some((from, to)) = previous
                    && out[from..to] >= out[start..]
                {
                    return Err(Fault::invalid(
                        "set elements or map keys not in ascending order, or repeated",
                    ));
                }
                previous = Some((start, out.len()));
            }
        }
    }
    if !c.v.is_empty() {
        return Err(Fault::invalid("bytes after the last element"));
    }
    out.push(NESTED_END);
    Ok(())
}

fn decode_collection(
    elements: &[&CqlType],
    sorted: bool,
    r: &mut KeyReader<'_>,
    out: &mut Vec<u8>,
) -> Result<(), Fault> {
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut count: i32 = 0;
    let mut previous: Option<(usize, usize)> = None;
    // Under DESC the raw bytes are inverted, so ascending elements are descending raw bytes.
    let ascending = if r.mask == 0 {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    'entries: loop {
        for (i, ty) in elements.iter().enumerate() {
            let start = r.position();
            if !decode_nested(ty, false, r, out)? {
                if i == 0 {
                    break 'entries;
                }
                return Err(r.malformed("map key without a value"));
            }
            if sorted && i == 0 {
                let current = r.raw(start, r.position());
                if let Some((from, to)) = previous
                    && r.raw(from, to).cmp(current) != ascending
                {
                    return Err(r.malformed("set elements or map keys out of order"));
                }
                previous = Some((start, r.position()));
            }
        }
        count = count
            .checked_add(1)
            .ok_or_else(|| r.malformed("too many elements"))?;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_be_bytes());
    Ok(())
}

/// A tuple or UDT: its fields (possibly fewer than the type has), each a `[bytes]` that may be
/// null. Trailing null fields are left out, so a value with them and one without them (a UDT
/// value written before `ALTER TYPE ... ADD`) are one encoding, as Cassandra's
/// `TupleType.compareCustom` finds them equal; the fields before the last value keep their
/// null markers.
fn encode_tuple(types: &[&CqlType], v: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    let mut c = SerializedReader { v };
    let mut i = 0;
    // The end of the encoding up to the last field that is not null.
    let mut end = out.len();
    while !c.v.is_empty() {
        let ty = types
            .get(i)
            .ok_or_else(|| Fault::invalid("more fields than the type has"))?;
        match c.element()? {
            None => out.push(NESTED_NULL),
            Some(e) => {
                encode_nested(ty, e, out)?;
                end = out.len();
            }
        }
        i += 1;
    }
    out.truncate(end);
    out.push(NESTED_END);
    Ok(())
}

/// A tuple or UDT with every field its type has: the fields the encoding ends before (trailing
/// nulls, or fields added to the type after the key was written) come back null, as Cassandra
/// serializes a value of the type. Encodings an older khata wrote with their trailing null
/// markers decode too, to the same value.
fn decode_tuple(types: &[&CqlType], r: &mut KeyReader<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    for (i, ty) in types.iter().enumerate() {
        if !decode_nested(ty, true, r, out)? {
            for _ in i..types.len() {
                out.extend_from_slice(&(-1i32).to_be_bytes());
            }
            return Ok(());
        }
    }
    if r.u8()? != NESTED_END {
        return Err(r.malformed("more fields than the type has"));
    }
    Ok(())
}
