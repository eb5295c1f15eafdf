//! Differential test against `scylla-cql` (the Rust driver's protocol crate): the same values
//! of the same types serialize to the same bytes, and each side deserializes the other's bytes
//! to the same value.

#[path = "value_strategies.rs"]
mod strategies;

use std::borrow::Cow;
use std::sync::Arc;

use khata_cql::value::CqlValue;
use khata_types::schema::CqlType;
use proptest::prelude::*;
use scylla_cql::frame::response::result::{
    CollectionType, ColumnType, NativeType, UserDefinedType,
};
use scylla_cql::serialize::value::SerializeValue;
use scylla_cql::serialize::writers::CellWriter;
use scylla_cql::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid,
    CqlValue as SValue, CqlVarint, deser_cql_value,
};
use strategies::{Gen, typed_value};

fn scylla_type(ty: &CqlType) -> ColumnType<'static> {
    let native = |n| ColumnType::Native(n);
    let boxed = |t: &CqlType| Box::new(scylla_type(t));
    match ty {
        CqlType::Ascii => native(NativeType::Ascii),
        CqlType::Bigint => native(NativeType::BigInt),
        CqlType::Blob => native(NativeType::Blob),
        CqlType::Boolean => native(NativeType::Boolean),
        CqlType::Counter => native(NativeType::Counter),
        CqlType::Date => native(NativeType::Date),
        CqlType::Decimal => native(NativeType::Decimal),
        CqlType::Double => native(NativeType::Double),
        CqlType::Duration => native(NativeType::Duration),
        CqlType::Float => native(NativeType::Float),
        CqlType::Inet => native(NativeType::Inet),
        CqlType::Int => native(NativeType::Int),
        CqlType::Smallint => native(NativeType::SmallInt),
        CqlType::Text => native(NativeType::Text),
        CqlType::Time => native(NativeType::Time),
        CqlType::Timestamp => native(NativeType::Timestamp),
        CqlType::Timeuuid => native(NativeType::Timeuuid),
        CqlType::Tinyint => native(NativeType::TinyInt),
        CqlType::Uuid => native(NativeType::Uuid),
        CqlType::Varint => native(NativeType::Varint),
        CqlType::List { element, frozen } => ColumnType::Collection {
            frozen: *frozen,
            typ: CollectionType::List(boxed(element)),
        },
        CqlType::Set { element, frozen } => ColumnType::Collection {
            frozen: *frozen,
            typ: CollectionType::Set(boxed(element)),
        },
        CqlType::Map { key, value, frozen } => ColumnType::Collection {
            frozen: *frozen,
            typ: CollectionType::Map(boxed(key), boxed(value)),
        },
        CqlType::Tuple(types) => ColumnType::Tuple(types.iter().map(scylla_type).collect()),
        CqlType::Udt {
            keyspace,
            name,
            fields,
            frozen,
        } => ColumnType::UserDefinedType {
            frozen: *frozen,
            definition: Arc::new(UserDefinedType {
                name: Cow::Owned(name.clone()),
                keyspace: Cow::Owned(keyspace.clone()),
                field_types: fields
                    .iter()
                    .map(|(n, t)| (Cow::Owned(n.clone()), scylla_type(t)))
                    .collect(),
            }),
        },
        CqlType::Vector { element, dimension } => ColumnType::Vector {
            typ: boxed(element),
            dimensions: u16::try_from(*dimension).expect("small test dimensions"),
        },
    }
}

fn scylla_value(ty: &CqlType, value: &CqlValue) -> SValue {
    use CqlValue as V;
    let element = |ty: &CqlType| match ty {
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => (**element).clone(),
        _ => unreachable!("{ty:?}"),
    };
    match value {
        V::Empty => SValue::Empty,
        V::Ascii(s) => SValue::Ascii(s.clone()),
        V::Text(s) => SValue::Text(s.clone()),
        V::Blob(b) => SValue::Blob(b.clone()),
        V::Boolean(b) => SValue::Boolean(*b),
        V::Bigint(n) => SValue::BigInt(*n),
        V::Counter(n) => SValue::Counter(Counter(*n)),
        V::Int(n) => SValue::Int(*n),
        V::Smallint(n) => SValue::SmallInt(*n),
        V::Tinyint(n) => SValue::TinyInt(*n),
        V::Date(d) => SValue::Date(CqlDate(*d)),
        V::Time(t) => SValue::Time(CqlTime(*t)),
        V::Timestamp(t) => SValue::Timestamp(CqlTimestamp(*t)),
        V::Float(x) => SValue::Float(*x),
        V::Double(x) => SValue::Double(*x),
        V::Decimal(d) => SValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
            d.unscaled.to_signed_bytes_be(),
            d.scale,
        )),
        V::Varint(n) => SValue::Varint(CqlVarint::from_signed_bytes_be(n.to_signed_bytes_be())),
        V::Duration(d) => SValue::Duration(CqlDuration {
            months: d.months,
            days: d.days,
            nanoseconds: d.nanos,
        }),
        V::Inet(ip) => SValue::Inet(*ip),
        V::Uuid(u) => SValue::Uuid(*u),
        V::Timeuuid(u) => SValue::Timeuuid(CqlTimeuuid::from(*u)),
        V::List(items) => SValue::List(
            items
                .iter()
                .map(|v| scylla_value(&element(ty), v))
                .collect(),
        ),
        V::Set(items) => SValue::Set(
            items
                .iter()
                .map(|v| scylla_value(&element(ty), v))
                .collect(),
        ),
        V::Vector(items) => SValue::Vector(
            items
                .iter()
                .map(|v| scylla_value(&element(ty), v))
                .collect(),
        ),
        V::Map(entries) => {
            let CqlType::Map { key, value, .. } = ty else {
                unreachable!()
            };
            SValue::Map(
                entries
                    .iter()
                    .map(|(k, v)| (scylla_value(key, k), scylla_value(value, v)))
                    .collect(),
            )
        }
        V::Tuple(fields) => {
            let CqlType::Tuple(types) = ty else {
                unreachable!()
            };
            SValue::Tuple(
                fields
                    .iter()
                    .zip(types)
                    .map(|(f, t)| f.as_ref().map(|v| scylla_value(t, v)))
                    .collect(),
            )
        }
        V::Udt(fields) => {
            let CqlType::Udt {
                keyspace,
                name,
                fields: types,
                ..
            } = ty
            else {
                unreachable!()
            };
            SValue::UserDefinedType {
                keyspace: keyspace.clone(),
                name: name.clone(),
                fields: fields
                    .iter()
                    .zip(types)
                    .map(|((n, f), (_, t))| (n.clone(), f.as_ref().map(|v| scylla_value(t, v))))
                    .collect(),
            }
        }
    }
}

fn scylla_bytes(ty: &CqlType, value: &CqlValue) -> Vec<u8> {
    let mut out = Vec::new();
    let value = scylla_value(ty, value);
    value
        .serialize(&scylla_type(ty), CellWriter::new(&mut out))
        .unwrap_or_else(|e| panic!("scylla refused {value:?} as {ty:?}: {e}"));
    // The cell writer prefixes the value with its length.
    assert_eq!(out[..4], ((out.len() - 4) as i32).to_be_bytes());
    out.split_off(4)
}

/// Cassandra accepts zero bytes for a counter (its serializer is `bigint`'s); the driver does
/// not write them.
fn counter_empty(ty: &CqlType, value: &CqlValue) -> bool {
    *ty == CqlType::Counter && *value == CqlValue::Empty
}

/// Whether a vector holds an element that serializes to zero bytes (an empty string or blob,
/// a tuple without fields): Cassandra reads those as values, the driver as nulls, which it
/// refuses.
fn empty_in_vector(value: &CqlValue, in_vector: bool) -> bool {
    use CqlValue as V;
    match value {
        V::Ascii(s) | V::Text(s) => in_vector && s.is_empty(),
        V::Blob(b) => in_vector && b.is_empty(),
        V::Tuple(f) if f.is_empty() => in_vector,
        V::Udt(f) if f.is_empty() => in_vector,
        V::Vector(items) => items.iter().any(|v| empty_in_vector(v, true)),
        V::List(items) | V::Set(items) => items.iter().any(|v| empty_in_vector(v, false)),
        V::Map(entries) => entries
            .iter()
            .any(|(k, v)| empty_in_vector(k, false) || empty_in_vector(v, false)),
        V::Tuple(fields) => fields.iter().flatten().any(|v| empty_in_vector(v, false)),
        V::Udt(fields) => fields
            .iter()
            .filter_map(|(_, v)| v.as_ref())
            .any(|v| empty_in_vector(v, false)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn same_bytes_as_scylla((ty, value) in typed_value(Gen::SCYLLA)) {
        prop_assume!(!counter_empty(&ty, &value));
        let ours = value.to_bytes(&ty);
        prop_assert_eq!(&ours, &scylla_bytes(&ty, &value), "{:?}", ty);
    }

    #[test]
    fn scylla_reads_ours_and_we_read_scylla((ty, value) in typed_value(Gen::SCYLLA)) {
        prop_assume!(!counter_empty(&ty, &value));
        prop_assume!(!empty_in_vector(&value, false));
        let ours = value.to_bytes(&ty);
        let theirs = deser_cql_value(&scylla_type(&ty), &mut &ours[..])
            .map_err(|e| TestCaseError::fail(format!("scylla refused our bytes: {e}")))?;
        // Their value serialized by them is our value's bytes again, which we read back.
        let mut again = Vec::new();
        theirs.serialize(&scylla_type(&ty), CellWriter::new(&mut again)).unwrap();
        prop_assert_eq!(&again[4..], &ours[..]);
        let back = CqlValue::deserialize(&ty, &again[4..])
            .map_err(|e| TestCaseError::fail(format!("we refused scylla's bytes: {e}")))?;
        prop_assert_eq!(back.to_bytes(&ty), ours);
    }
}
