//! Proptest strategies for CQL types and values, shared by the `value_*` tests (each includes
//! this file with `#[path]`; on its own it has no tests).

#![allow(dead_code)]

use std::cmp::Ordering;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use khata_cql::value::{CqlValue, Decimal, Duration, NANOS_PER_DAY, accepts_empty, compare};
use khata_types::schema::CqlType;
use num_bigint::BigInt;
use proptest::prelude::*;
use uuid::Uuid;

/// What values a strategy may produce.
#[derive(Clone, Copy, Debug)]
pub struct Gen {
    /// The empty value, for types that have one.
    pub empty: bool,
    /// Tuples and UDTs without their trailing fields.
    pub partial: bool,
    /// Values that have no CQL literal (NaN payloads, a decimal of scale `i32::MIN`, durations
    /// with `i32::MIN` months or days or `i64::MIN` nanoseconds).
    pub unliteral: bool,
}

impl Gen {
    /// Every value a client could bind.
    pub const WIRE: Gen = Gen {
        empty: true,
        partial: true,
        unliteral: true,
    };
    /// Values whose `Display` converts back to themselves.
    pub const LITERAL: Gen = Gen {
        empty: false,
        partial: false,
        unliteral: false,
    };
    /// Values the scylla driver serializes as we do (UDTs always complete).
    pub const SCYLLA: Gen = Gen {
        empty: true,
        partial: false,
        unliteral: true,
    };
}

pub const NATIVE_TYPES: [CqlType; 20] = [
    CqlType::Ascii,
    CqlType::Bigint,
    CqlType::Blob,
    CqlType::Boolean,
    CqlType::Counter,
    CqlType::Date,
    CqlType::Decimal,
    CqlType::Double,
    CqlType::Duration,
    CqlType::Float,
    CqlType::Inet,
    CqlType::Int,
    CqlType::Smallint,
    CqlType::Text,
    CqlType::Time,
    CqlType::Timestamp,
    CqlType::Timeuuid,
    CqlType::Tinyint,
    CqlType::Uuid,
    CqlType::Varint,
];

/// A native type other than `counter` (which may not be nested).
pub fn nestable_native() -> impl Strategy<Value = CqlType> {
    proptest::sample::select(
        NATIVE_TYPES
            .iter()
            .filter(|t| **t != CqlType::Counter)
            .cloned()
            .collect::<Vec<_>>(),
    )
}

/// A type that may be an element of a collection, tuple, UDT or vector: nested collections
/// and UDTs are frozen, as CQL requires.
pub fn nested_type() -> BoxedStrategy<CqlType> {
    nestable_native()
        .prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| CqlType::List {
                    element: Box::new(e),
                    frozen: true,
                }),
                inner.clone().prop_map(|e| CqlType::Set {
                    element: Box::new(e),
                    frozen: true,
                }),
                (inner.clone(), inner.clone()).prop_map(|(k, v)| CqlType::Map {
                    key: Box::new(k),
                    value: Box::new(v),
                    frozen: true,
                }),
                proptest::collection::vec(inner.clone(), 1..4).prop_map(CqlType::Tuple),
                proptest::collection::vec(inner.clone(), 1..4).prop_map(|types| udt(types, true)),
                (inner, 1u32..4).prop_map(|(e, dimension)| CqlType::Vector {
                    element: Box::new(e),
                    dimension,
                }),
            ]
        })
        .boxed()
}

/// A UDT `ks.u` with fields `f0`, `f1`, ...
pub fn udt(types: Vec<CqlType>, frozen: bool) -> CqlType {
    CqlType::Udt {
        keyspace: "ks".to_string(),
        name: "u".to_string(),
        fields: types
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("f{i}"), t))
            .collect(),
        frozen,
    }
}

/// Any column type: a counter, or a nested type whose outermost collection or UDT may be
/// frozen or not.
pub fn column_type() -> BoxedStrategy<CqlType> {
    prop_oneof![
        1 => Just(CqlType::Counter),
        12 => (nested_type(), any::<bool>()).prop_map(|(ty, frozen)| match ty {
            CqlType::List { element, .. } => CqlType::List { element, frozen },
            CqlType::Set { element, .. } => CqlType::Set { element, frozen },
            CqlType::Map { key, value, .. } => CqlType::Map { key, value, frozen },
            CqlType::Udt { keyspace, name, fields, .. } => CqlType::Udt { keyspace, name, fields, frozen },
            other => other,
        }),
    ]
    .boxed()
}

/// A type and a value of it.
pub fn typed_value(g: Gen) -> BoxedStrategy<(CqlType, CqlValue)> {
    column_type()
        .prop_flat_map(move |ty| value_for(&ty, g).prop_map(move |v| (ty.clone(), v)))
        .boxed()
}

fn duration(g: Gen) -> BoxedStrategy<Duration> {
    let (months, days, nanos) = if g.unliteral {
        (i32::MIN..=0, i32::MIN..=0, i64::MIN..=0)
    } else {
        (-i32::MAX..=0, -i32::MAX..=0, -i64::MAX..=0)
    };
    (months, days, nanos, any::<bool>())
        .prop_map(|(m, d, n, positive)| {
            if positive {
                Duration {
                    months: m.saturating_neg(),
                    days: d.saturating_neg(),
                    nanos: n.saturating_neg(),
                }
            } else {
                Duration {
                    months: m,
                    days: d,
                    nanos: n,
                }
            }
        })
        .boxed()
}

fn big(bytes: Vec<u8>) -> BigInt {
    BigInt::from_signed_bytes_be(&bytes)
}

/// A value of `ty`.
pub fn value_for(ty: &CqlType, g: Gen) -> BoxedStrategy<CqlValue> {
    let value = plain_value_for(ty, g);
    if g.empty && accepts_empty(ty) {
        prop_oneof![9 => value, 1 => Just(CqlValue::Empty)].boxed()
    } else {
        value
    }
}

fn plain_value_for(ty: &CqlType, g: Gen) -> BoxedStrategy<CqlValue> {
    use CqlValue as V;
    use proptest::collection::vec;
    match ty {
        CqlType::Ascii => "[ -~]{0,10}".prop_map(V::Ascii).boxed(),
        CqlType::Text => ".{0,8}".prop_map(V::Text).boxed(),
        CqlType::Blob => vec(any::<u8>(), 0..10).prop_map(V::Blob).boxed(),
        CqlType::Bigint => any::<i64>().prop_map(V::Bigint).boxed(),
        CqlType::Counter => any::<i64>().prop_map(V::Counter).boxed(),
        CqlType::Boolean => any::<bool>().prop_map(V::Boolean).boxed(),
        CqlType::Date => any::<u32>().prop_map(V::Date).boxed(),
        CqlType::Decimal => {
            let scale = if g.unliteral {
                any::<i32>().boxed()
            } else {
                prop_oneof![-5i32..70, (i32::MIN + 1)..=i32::MAX].boxed()
            };
            (vec(any::<u8>(), 1..12), scale)
                .prop_map(|(b, scale)| {
                    V::Decimal(Decimal {
                        unscaled: big(b),
                        scale,
                    })
                })
                .boxed()
        }
        CqlType::Double => any::<f64>()
            .prop_map(move |x| {
                V::Double(if x.is_nan() && !g.unliteral {
                    f64::NAN
                } else {
                    x
                })
            })
            .boxed(),
        CqlType::Float => any::<f32>()
            .prop_map(move |x| {
                V::Float(if x.is_nan() && !g.unliteral {
                    f32::NAN
                } else {
                    x
                })
            })
            .boxed(),
        CqlType::Duration => duration(g).prop_map(V::Duration).boxed(),
        CqlType::Inet => prop_oneof![
            any::<[u8; 4]>().prop_map(|b| V::Inet(IpAddr::V4(Ipv4Addr::from(b)))),
            any::<[u8; 16]>().prop_map(|b| V::Inet(IpAddr::V6(Ipv6Addr::from(b)))),
        ]
        .boxed(),
        CqlType::Int => any::<i32>().prop_map(V::Int).boxed(),
        CqlType::Smallint => any::<i16>().prop_map(V::Smallint).boxed(),
        CqlType::Tinyint => any::<i8>().prop_map(V::Tinyint).boxed(),
        CqlType::Time => (0..NANOS_PER_DAY).prop_map(V::Time).boxed(),
        CqlType::Timestamp => any::<i64>().prop_map(V::Timestamp).boxed(),
        CqlType::Uuid => any::<[u8; 16]>()
            .prop_map(|b| V::Uuid(Uuid::from_bytes(b)))
            .boxed(),
        CqlType::Timeuuid => any::<[u8; 16]>()
            .prop_map(|mut b| {
                b[6] = (b[6] & 0x0F) | 0x10;
                V::Timeuuid(Uuid::from_bytes(b))
            })
            .boxed(),
        CqlType::Varint => vec(any::<u8>(), 1..12)
            .prop_map(|b| V::Varint(big(b)))
            .boxed(),
        CqlType::List { element, .. } => vec(value_for(element, g), 0..4).prop_map(V::List).boxed(),
        CqlType::Set { element, .. } => {
            let element = (**element).clone();
            vec(value_for(&element, g), 0..4)
                .prop_map(move |items| V::Set(sorted_set(&element, items)))
                .boxed()
        }
        CqlType::Map { key, value, .. } => {
            let key_type = (**key).clone();
            vec((value_for(key, g), value_for(value, g)), 0..4)
                .prop_map(move |entries| V::Map(sorted_map(&key_type, entries)))
                .boxed()
        }
        CqlType::Tuple(types) => {
            let fields: Vec<_> = types
                .iter()
                .map(|t| proptest::option::of(value_for(t, g)))
                .collect();
            let n = types.len();
            (fields, if g.partial { 0..=n } else { n..=n })
                .prop_map(|(mut fields, keep)| {
                    fields.truncate(keep);
                    V::Tuple(fields)
                })
                .boxed()
        }
        CqlType::Udt { fields, .. } => {
            let names: Vec<String> = fields.iter().map(|(n, _)| n.clone()).collect();
            let values: Vec<_> = fields
                .iter()
                .map(|(_, t)| proptest::option::of(value_for(t, g)))
                .collect();
            let n = fields.len();
            (values, if g.partial { 0..=n } else { n..=n })
                .prop_map(move |(values, keep)| {
                    V::Udt(names.iter().cloned().zip(values).take(keep).collect())
                })
                .boxed()
        }
        CqlType::Vector { element, dimension } => {
            // A vector's elements are never empty.
            let inner = Gen { empty: false, ..g };
            vec(value_for(element, inner), *dimension as usize)
                .prop_map(V::Vector)
                .boxed()
        }
    }
}

/// Set elements as Cassandra keeps them: sorted, the first of equal ones.
pub fn sorted_set(element: &CqlType, mut items: Vec<CqlValue>) -> Vec<CqlValue> {
    items.sort_by(|a, b| compare(element, a, b));
    items.dedup_by(|later, first| compare(element, later, first) == Ordering::Equal);
    items
}

/// Map entries as Cassandra keeps them: sorted by key, the first of equal keys (the value
/// does not matter to the strategies).
pub fn sorted_map(
    key: &CqlType,
    mut entries: Vec<(CqlValue, CqlValue)>,
) -> Vec<(CqlValue, CqlValue)> {
    entries.sort_by(|a, b| compare(key, &a.0, &b.0));
    entries.dedup_by(|later, first| compare(key, &later.0, &first.0) == Ordering::Equal);
    entries
}
