//! The native protocol v4 serialization of values (`native_protocol_v4.spec` §6; vectors as
//! Cassandra 5 writes them).
//!
//! Natives are big-endian (`int`, `bigint`, IEEE `float`/`double`, `date` as an unsigned day
//! count, `time` and `timestamp` as 64-bit integers), strings are their bytes, `varint` is a
//! two's complement integer of any length, `decimal` an `int` scale then a varint, `inet` the 4
//! or 16 address bytes, `duration` three zig-zag variable-length integers (months, days,
//! nanoseconds; Cassandra's `VIntCoding`). Collections are an `int` count then each element
//! (each key and value of a map) as `[bytes]`: an `int` length then the bytes. Tuples and UDTs
//! are their fields as `[bytes]`, a null field with length -1, trailing fields possibly absent.
//! A vector of a fixed-size type is its elements' bytes back to back; of any other type each
//! element is preceded by its length as an unsigned variable-length integer.
//!
//! Deserializing never panics and never allocates more than the input can fill: counts read
//! from the bytes bound loops only through the bytes each element consumes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use khata_types::schema::CqlType;
use num_bigint::BigInt;
use uuid::Uuid;

use super::nested::{
    element_type, field_types, normalize_map, normalize_set, pairs, put_count, put_element,
    read_collection, read_fields, read_vector,
};
use super::vint::{get_vint, put_unsigned_vint, put_vint};
use super::{CqlValue, Decimal, Duration, NANOS_PER_DAY, ValueError, type_name};

/// The size of each element of a vector of `element`, if fixed (then elements are not
/// length-prefixed): the types Cassandra's `valueLengthIfFixed` gives a size, and vectors of
/// them.
pub(super) fn fixed_vector_element_size(element: &CqlType) -> Option<usize> {
    Some(match element {
        CqlType::Boolean => 1,
        CqlType::Int | CqlType::Float => 4,
        CqlType::Bigint | CqlType::Double | CqlType::Timestamp => 8,
        CqlType::Uuid | CqlType::Timeuuid => 16,
        CqlType::Vector { element, dimension } => {
            fixed_vector_element_size(element)?.checked_mul(usize::try_from(*dimension).ok()?)?
        }
        _ => return None,
    })
}

impl CqlValue {
    /// Append the value's serialization (without a length prefix) to `out`.
    ///
    /// # Panics
    ///
    /// If the value does not conform to `ty` ([`CqlValue::conforms_to`]): writing it would store
    /// bytes that are not a value of the column's type.
    pub fn serialize(&self, ty: &CqlType, out: &mut Vec<u8>) {
        assert!(
            self.conforms_to(ty),
            "serializing a value that is not a {}: {self:?}",
            type_name(ty)
        );
        write(self, ty, out);
    }

    /// The value's serialization.
    pub fn to_bytes(&self, ty: &CqlType) -> Vec<u8> {
        let mut out = Vec::new();
        self.serialize(ty, &mut out);
        out
    }

    /// Read a value of `ty` from its serialization (a bound value, a cell), validating it as
    /// Cassandra does and normalising sets and maps.
    pub fn deserialize(ty: &CqlType, bytes: &[u8]) -> Result<CqlValue, ValueError> {
        read(ty, bytes)
    }
}

pub(super) fn write(value: &CqlValue, ty: &CqlType, out: &mut Vec<u8>) {
    use CqlValue as V;
    match value {
        V::Empty => {}
        V::Ascii(s) | V::Text(s) => out.extend_from_slice(s.as_bytes()),
        V::Blob(b) => out.extend_from_slice(b),
        V::Boolean(b) => out.push(u8::from(*b)),
        V::Bigint(n) | V::Counter(n) | V::Time(n) | V::Timestamp(n) => {
            out.extend_from_slice(&n.to_be_bytes())
        }
        V::Int(n) => out.extend_from_slice(&n.to_be_bytes()),
        V::Smallint(n) => out.extend_from_slice(&n.to_be_bytes()),
        V::Tinyint(n) => out.extend_from_slice(&n.to_be_bytes()),
        V::Date(d) => out.extend_from_slice(&d.to_be_bytes()),
        V::Float(f) => out.extend_from_slice(&f.to_bits().to_be_bytes()),
        V::Double(f) => out.extend_from_slice(&f.to_bits().to_be_bytes()),
        V::Decimal(d) => {
            out.extend_from_slice(&d.scale.to_be_bytes());
            out.extend_from_slice(&d.unscaled.to_signed_bytes_be());
        }
        V::Varint(n) => out.extend_from_slice(&n.to_signed_bytes_be()),
        V::Duration(d) => {
            put_vint(i64::from(d.months), out);
            put_vint(i64::from(d.days), out);
            put_vint(d.nanos, out);
        }
        V::Inet(IpAddr::V4(a)) => out.extend_from_slice(&a.octets()),
        V::Inet(IpAddr::V6(a)) => out.extend_from_slice(&a.octets()),
        V::Uuid(u) | V::Timeuuid(u) => out.extend_from_slice(u.as_bytes()),
        V::List(items) | V::Set(items) => {
            let element = element_type(ty);
            put_count(items.len(), out);
            for item in items {
                put_element(Some(item), element, out);
            }
        }
        V::Map(entries) => {
            let (key_type, value_type) = match ty {
                CqlType::Map { key, value, .. } => (&**key, &**value),
                _ => (ty, ty),
            };
            put_count(entries.len(), out);
            for (k, v) in entries {
                put_element(Some(k), key_type, out);
                put_element(Some(v), value_type, out);
            }
        }
        V::Tuple(fields) => {
            let types = field_types(ty);
            for (i, field) in fields.iter().enumerate() {
                put_element(field.as_ref(), types.get(i).copied().unwrap_or(ty), out);
            }
        }
        V::Udt(fields) => {
            let types = field_types(ty);
            for (i, (_, field)) in fields.iter().enumerate() {
                put_element(field.as_ref(), types.get(i).copied().unwrap_or(ty), out);
            }
        }
        V::Vector(items) => {
            let element = element_type(ty);
            let fixed = fixed_vector_element_size(element).is_some();
            for item in items {
                if fixed {
                    write(item, element, out);
                } else {
                    let mut bytes = Vec::new();
                    write(item, element, &mut bytes);
                    put_unsigned_vint(bytes.len() as u64, out);
                    out.extend_from_slice(&bytes);
                }
            }
        }
    }
}

fn exact<const N: usize>(
    bytes: &[u8],
    expected: &'static str,
    empty_ok: bool,
) -> Result<Option<[u8; N]>, ValueError> {
    if bytes.is_empty() && empty_ok {
        return Ok(None);
    }
    let array = <[u8; N]>::try_from(bytes).map_err(|_| ValueError::Length {
        expected,
        len: bytes.len(),
    })?;
    Ok(Some(array))
}

/// `bytes` as a value made by `make`, or [`CqlValue::Empty`] when empty and allowed.
fn fixed<const N: usize>(
    bytes: &[u8],
    expected: &'static str,
    empty_ok: bool,
    make: impl FnOnce([u8; N]) -> CqlValue,
) -> Result<CqlValue, ValueError> {
    Ok(exact::<N>(bytes, expected, empty_ok)?.map_or(CqlValue::Empty, make))
}

/// Whether `bytes` are certainly a valid value of `ty` that is stored as it came, told
/// without decoding it: the flat types whose check is a length or an encoding. `false` means
/// "decode to find out" ([`CqlValue::deserialize`] gives the value or the error).
pub fn valid_as_is(ty: &CqlType, bytes: &[u8]) -> bool {
    let n = bytes.len();
    match ty {
        CqlType::Blob => true,
        CqlType::Text => std::str::from_utf8(bytes).is_ok(),
        CqlType::Ascii => bytes.is_ascii(),
        CqlType::Boolean => n <= 1,
        CqlType::Int | CqlType::Float => n == 4 || n == 0,
        CqlType::Bigint | CqlType::Counter | CqlType::Double | CqlType::Timestamp => {
            n == 8 || n == 0
        }
        _ => false,
    }
}

pub(super) fn read(ty: &CqlType, bytes: &[u8]) -> Result<CqlValue, ValueError> {
    use CqlValue as V;
    Ok(match ty {
        CqlType::Ascii => match bytes.iter().find(|b| !b.is_ascii()) {
            Some(&b) => return Err(ValueError::InvalidAscii(b as i8)),
            None => V::Ascii(ascii_string(bytes)),
        },
        CqlType::Text => match std::str::from_utf8(bytes) {
            Ok(s) => V::Text(s.to_string()),
            Err(_) => return Err(ValueError::InvalidUtf8),
        },
        CqlType::Blob => V::Blob(bytes.to_vec()),
        CqlType::Boolean => {
            fixed::<1>(bytes, "1 or 0 byte value", true, |b| V::Boolean(b[0] != 0))?
        }
        CqlType::Bigint => fixed(bytes, "8 or 0 byte long", true, |b| {
            V::Bigint(i64::from_be_bytes(b))
        })?,
        CqlType::Counter => fixed(bytes, "8 or 0 byte long", true, |b| {
            V::Counter(i64::from_be_bytes(b))
        })?,
        CqlType::Int => fixed(bytes, "4 or 0 byte int", true, |b| {
            V::Int(i32::from_be_bytes(b))
        })?,
        CqlType::Smallint => fixed(bytes, "2 bytes for a smallint", false, |b| {
            V::Smallint(i16::from_be_bytes(b))
        })?,
        CqlType::Tinyint => fixed(bytes, "1 byte for a tinyint", false, |b| {
            V::Tinyint(i8::from_be_bytes(b))
        })?,
        CqlType::Float => fixed(bytes, "4 or 0 byte value for a float", true, |b| {
            V::Float(f32::from_bits(u32::from_be_bytes(b)))
        })?,
        CqlType::Double => fixed(bytes, "8 or 0 byte value for a double", true, |b| {
            V::Double(f64::from_bits(u64::from_be_bytes(b)))
        })?,
        CqlType::Date => fixed(bytes, "4 byte long for date", false, |b| {
            V::Date(u32::from_be_bytes(b))
        })?,
        CqlType::Timestamp => fixed(bytes, "8 or 0 byte long for date", true, |b| {
            V::Timestamp(i64::from_be_bytes(b))
        })?,
        CqlType::Time => {
            let nanos = i64::from_be_bytes(
                exact::<8>(bytes, "8 byte long for time", false)?.unwrap_or_default(),
            );
            if !(0..NANOS_PER_DAY).contains(&nanos) {
                return Err(ValueError::TimeOutOfRange(nanos));
            }
            V::Time(nanos)
        }
        CqlType::Uuid | CqlType::Timeuuid => read_uuid(ty, bytes)?,
        CqlType::Inet => match bytes.len() {
            0 => V::Empty,
            4 => V::Inet(IpAddr::V4(Ipv4Addr::from(
                <[u8; 4]>::try_from(bytes).unwrap_or_default(),
            ))),
            16 => V::Inet(IpAddr::V6(Ipv6Addr::from(
                <[u8; 16]>::try_from(bytes).unwrap_or_default(),
            ))),
            _ => return Err(ValueError::InetLength(hex(bytes))),
        },
        CqlType::Varint if bytes.is_empty() => V::Empty,
        CqlType::Varint => V::Varint(BigInt::from_signed_bytes_be(bytes)),
        CqlType::Decimal => match bytes.len() {
            0 => V::Empty,
            1..=3 => return Err(ValueError::DecimalLength(bytes.len())),
            4 => return Err(ValueError::DecimalWithoutUnscaled),
            _ => {
                let (scale, unscaled) = bytes.split_at(4);
                V::Decimal(Decimal {
                    scale: i32::from_be_bytes(scale.try_into().unwrap_or_default()),
                    unscaled: BigInt::from_signed_bytes_be(unscaled),
                })
            }
        },
        CqlType::Duration => V::Duration(read_duration(bytes)?),
        CqlType::List { element, .. } => V::List(read_collection(bytes, "list", &[element])?),
        CqlType::Set { element, .. } => {
            let items = read_collection(bytes, "set", &[element])?;
            V::Set(normalize_set(element, items))
        }
        CqlType::Map { key, value, .. } => {
            let flat = read_collection(bytes, "map", &[key, value])?;
            V::Map(normalize_map(key, pairs(flat)))
        }
        CqlType::Tuple(types) => {
            let names = vec![None; types.len()];
            let fields = read_fields(bytes, &types.iter().zip(names).collect::<Vec<_>>())?;
            V::Tuple(fields)
        }
        CqlType::Udt { fields, .. } => {
            let typed: Vec<(&CqlType, Option<&str>)> =
                fields.iter().map(|(n, t)| (t, Some(n.as_str()))).collect();
            let values = read_fields(bytes, &typed)?;
            V::Udt(fields.iter().map(|(n, _)| n.clone()).zip(values).collect())
        }
        CqlType::Vector { element, dimension } => read_vector(bytes, element, *dimension)?,
    })
}

fn ascii_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_uuid(ty: &CqlType, bytes: &[u8]) -> Result<CqlValue, ValueError> {
    let array: [u8; 16] = match bytes.len() {
        0 => return Ok(CqlValue::Empty),
        16 => bytes.try_into().unwrap_or_default(),
        n => return Err(ValueError::UuidLength(n)),
    };
    let uuid = Uuid::from_bytes(array);
    if *ty == CqlType::Timeuuid {
        if uuid.get_version_num() != 1 {
            return Err(ValueError::TimeuuidVersion);
        }
        return Ok(CqlValue::Timeuuid(uuid));
    }
    Ok(CqlValue::Uuid(uuid))
}

fn read_duration(bytes: &[u8]) -> Result<Duration, ValueError> {
    if bytes.len() < 3 {
        return Err(ValueError::DurationLength(bytes.len()));
    }
    let mut rest = bytes;
    let mut next = || get_vint(&mut rest).ok_or(ValueError::DurationTruncated);
    let (months, days, nanos) = (next()?, next()?, next()?);
    if !rest.is_empty() {
        return Err(ValueError::DurationExtraneous);
    }
    let part = |part: &'static str, value: i64| {
        i32::try_from(value).map_err(|_| ValueError::DurationOverflow { part, value })
    };
    let duration = Duration {
        months: part("months", months)?,
        days: part("days", days)?,
        nanos,
    };
    if !duration.has_consistent_sign() {
        return Err(ValueError::DurationSigns {
            months,
            days,
            nanos,
        });
    }
    Ok(duration)
}
