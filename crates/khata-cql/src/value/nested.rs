//! The serialization of collections, tuples, UDTs and vectors: `int` counts and `[bytes]`
//! elements (an `int` length, -1 for null), fields that may be null or missing at the end, and
//! vector elements back to back or prefixed by an unsigned variable-length length.
//!
//! Reading checks every length against the bytes left before slicing or allocating, so that a
//! count or dimension from the network cannot make it allocate more than the input fills.

use std::cmp::Ordering;

use khata_types::schema::CqlType;

use super::compare::compare;
use super::vint::get_unsigned_vint;
use super::wire::{fixed_vector_element_size, read, write};
use super::{CqlValue, ValueError, type_name};

/// The element type of a list, set or vector type (`ty` itself for any other: only reached
/// for values that conform, so never).
pub(super) fn element_type(ty: &CqlType) -> &CqlType {
    match ty {
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => element,
        _ => ty,
    }
}

pub(super) fn field_types(ty: &CqlType) -> Vec<&CqlType> {
    match ty {
        CqlType::Tuple(types) => types.iter().collect(),
        CqlType::Udt { fields, .. } => fields.iter().map(|(_, t)| t).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn put_count(n: usize, out: &mut Vec<u8>) {
    let n = i32::try_from(n).expect("a collection of more than 2^31 elements");
    out.extend_from_slice(&n.to_be_bytes());
}

/// `[bytes]`: an `int` length then the bytes, or -1 for null.
pub(super) fn put_element(value: Option<&CqlValue>, ty: &CqlType, out: &mut Vec<u8>) {
    let Some(value) = value else {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return;
    };
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write(value, ty, out);
    let len = i32::try_from(out.len() - at - 4).expect("an element of more than 2 GiB");
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// A reader of `int` counts and `[bytes]` elements.
struct Elements<'a> {
    rest: &'a [u8],
}

impl<'a> Elements<'a> {
    fn int(&mut self) -> Option<i32> {
        let (head, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(i32::from_be_bytes(*head))
    }

    /// `Some(None)` for a null (negative length); `None` when cut short.
    fn element(&mut self) -> Option<Option<&'a [u8]>> {
        let len = self.int()?;
        let Ok(len) = usize::try_from(len) else {
            return Some(None);
        };
        let element = self.rest.get(..len)?;
        self.rest = &self.rest[len..];
        Some(Some(element))
    }
}

/// The elements of a list or set (`types` = [element]) or the keys and values of a map
/// (`types` = [key, value]), flattened.
pub(super) fn read_collection(
    bytes: &[u8],
    kind: &'static str,
    types: &[&CqlType],
) -> Result<Vec<CqlValue>, ValueError> {
    if bytes.is_empty() {
        return Err(ValueError::EmptyCollection { kind });
    }
    let truncated = ValueError::CollectionTruncated { kind };
    let mut reader = Elements { rest: bytes };
    let count = reader.int().ok_or_else(|| truncated.clone())?;
    if count < 0 {
        return Err(ValueError::NegativeCount { kind });
    }
    let mut items = Vec::new();
    for _ in 0..count {
        for ty in types {
            let element = reader.element().ok_or_else(|| truncated.clone())?;
            let element = element.ok_or(ValueError::NullInCollection)?;
            items.push(read(ty, element)?);
        }
    }
    if !reader.rest.is_empty() {
        return Err(ValueError::CollectionExtraneous { kind });
    }
    Ok(items)
}

pub(super) fn pairs(flat: Vec<CqlValue>) -> Vec<(CqlValue, CqlValue)> {
    let mut out = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    out
}

/// Sort set elements by the element type's order and drop repeats (the first of equal
/// elements stays, as in Cassandra's `TreeSet`).
pub(super) fn normalize_set(element: &CqlType, mut items: Vec<CqlValue>) -> Vec<CqlValue> {
    items.sort_by(|a, b| compare(element, a, b));
    items.dedup_by(|later, first| compare(element, later, first) == Ordering::Equal);
    items
}

/// Sort map entries by key; of entries with equal keys the first key stays with the last value
/// (Cassandra's `TreeMap.put`).
pub(super) fn normalize_map(
    key: &CqlType,
    mut entries: Vec<(CqlValue, CqlValue)>,
) -> Vec<(CqlValue, CqlValue)> {
    entries.sort_by(|a, b| compare(key, &a.0, &b.0));
    let mut out: Vec<(CqlValue, CqlValue)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        match out.last_mut() {
            Some(last) if compare(key, &last.0, &k) == Ordering::Equal => last.1 = v,
            _ => out.push((k, v)),
        }
    }
    out
}

/// The fields of a tuple (names `None`) or UDT: at most one per type, each possibly null.
pub(super) fn read_fields(
    bytes: &[u8],
    types: &[(&CqlType, Option<&str>)],
) -> Result<Vec<Option<CqlValue>>, ValueError> {
    let mut reader = Elements { rest: bytes };
    let mut fields = Vec::new();
    for (index, (ty, name)) in types.iter().enumerate() {
        if reader.rest.is_empty() {
            break;
        }
        let size_error = || match name {
            Some(name) => ValueError::UdtFieldSize {
                index,
                name: name.to_string(),
            },
            None => ValueError::TupleFieldSize { index },
        };
        let field_error = || match name {
            Some(name) => ValueError::UdtField {
                index,
                name: name.to_string(),
            },
            None => ValueError::TupleField { index },
        };
        if reader.rest.len() < 4 {
            return Err(size_error());
        }
        let field = reader.element().ok_or_else(field_error)?;
        fields.push(field.map(|b| read(ty, b)).transpose()?);
    }
    if !reader.rest.is_empty() {
        let is_udt = types.first().is_some_and(|(_, n)| n.is_some());
        return Err(if is_udt {
            ValueError::UdtExtraneous
        } else {
            ValueError::TupleExtraneous
        });
    }
    Ok(fields)
}

pub(super) fn read_vector(
    bytes: &[u8],
    element: &CqlType,
    dimension: u32,
) -> Result<CqlValue, ValueError> {
    if bytes.is_empty() {
        return Ok(CqlValue::Empty);
    }
    let vector_type = || format!("vector<{}, {dimension}>", type_name(element));
    let truncated = || ValueError::VectorTruncated { ty: vector_type() };
    let fixed = fixed_vector_element_size(element);
    let mut rest = bytes;
    // Each element takes at least one byte, so the input bounds the allocation.
    let mut items = Vec::with_capacity((dimension as usize).min(bytes.len()));
    for index in 0..dimension as usize {
        let len = match fixed {
            Some(size) => size,
            None => get_unsigned_vint(&mut rest)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(truncated)?,
        };
        let item = rest.get(..len).ok_or_else(truncated)?;
        rest = &rest[len..];
        let value = read(element, item)?;
        // An empty element is a null to Cassandra's vectors (`VectorType.check`).
        if value == CqlValue::Empty {
            return Err(ValueError::NullInVector {
                index,
                ty: type_name(element),
            });
        }
        items.push(value);
    }
    if !rest.is_empty() {
        return Err(ValueError::VectorExtraneous {
            ty: vector_type(),
            extra: rest.len(),
        });
    }
    Ok(CqlValue::Vector(items))
}
