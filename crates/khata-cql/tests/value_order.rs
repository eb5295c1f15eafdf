//! `compare` is Cassandra's order of values, and the clustering-key encoding of
//! `khata_types::clustering` agrees with it: its byte order is `compare`'s order, refined only
//! among values `compare` finds equal (and never among numbers, whose equal values share one
//! encoding).

#[path = "value_strategies.rs"]
mod strategies;

use std::cmp::Ordering;
use std::net::IpAddr;

use khata_cql::value::{CqlValue, Decimal, clustering_key, clustering_values, compare};
use khata_types::schema::{ClusteringOrder, CqlType};
use num_bigint::BigInt;
use proptest::prelude::*;
use strategies::{Gen, column_type, value_for};
use uuid::Uuid;

/// Whether `ty` can be a clustering column: no durations or counters, frozen throughout, and
/// vectors only of the fixed-size types (both sides agree those are not length-prefixed).
fn clusterable(ty: &CqlType) -> bool {
    match ty {
        CqlType::Duration | CqlType::Counter => false,
        CqlType::List { element, frozen } | CqlType::Set { element, frozen } => {
            *frozen && clusterable(element)
        }
        CqlType::Map { key, value, frozen } => *frozen && clusterable(key) && clusterable(value),
        CqlType::Tuple(types) => types.iter().all(clusterable),
        CqlType::Udt { fields, frozen, .. } => {
            *frozen && fields.iter().all(|(_, t)| clusterable(t))
        }
        CqlType::Vector { element, .. } => matches!(
            **element,
            CqlType::Boolean
                | CqlType::Int
                | CqlType::Float
                | CqlType::Bigint
                | CqlType::Double
                | CqlType::Timestamp
                | CqlType::Uuid
                | CqlType::Timeuuid
        ),
        _ => true,
    }
}

/// Whether the value is encoded as the empty value (zero bytes of a type whose domain does not
/// have the empty string).
fn empty_key(ty: &CqlType, v: &CqlValue) -> bool {
    v.to_bytes(ty).is_empty() && !matches!(ty, CqlType::Text | CqlType::Ascii | CqlType::Blob)
}

fn clustering_pair() -> impl Strategy<Value = (CqlType, CqlValue, CqlValue)> {
    column_type()
        .prop_filter("not a clustering type", clusterable)
        .prop_flat_map(|ty| {
            // Whole tuples and UDTs only. A partial one is a known divergence: Cassandra's
            // `TupleType` compares `(1, '')` equal to `(1)` (its trailing-field loop skips
            // empty fields as it skips nulls), while the clustering encoding, which drops only
            // trailing nulls, orders the shorter first. Alone that only refines `compare`, but
            // inside a collection it can reverse the order of two collections (found by this
            // property).
            let g = Gen {
                partial: false,
                ..Gen::WIRE
            };
            (Just(ty.clone()), value_for(&ty, g), value_for(&ty, g))
        })
}

/// Whether values of `ty` may hold a `varint` or `decimal`, which clustering keys keep in
/// canonical form.
fn has_number(ty: &CqlType) -> bool {
    match ty {
        CqlType::Varint | CqlType::Decimal => true,
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => has_number(element),
        CqlType::Map { key, value, .. } => has_number(key) || has_number(value),
        CqlType::Tuple(types) => types.iter().any(has_number),
        CqlType::Udt { fields, .. } => fields.iter().any(|(_, t)| has_number(t)),
        _ => false,
    }
}

fn key(ty: &CqlType, order: ClusteringOrder, v: &CqlValue) -> Vec<u8> {
    clustering_key(&[(ty.clone(), order)], std::slice::from_ref(v))
        .unwrap_or_else(|e| panic!("{ty:?} {v:?}: {e}"))
        .to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn encoding_refines_compare((ty, a, b) in clustering_pair()) {
        let ordering = compare(&ty, &a, &b);
        prop_assert_eq!(compare(&ty, &b, &a), ordering.reverse());
        let (ka, kb) = (key(&ty, ClusteringOrder::Asc, &a), key(&ty, ClusteringOrder::Asc, &b));
        if ordering != Ordering::Equal {
            prop_assert_eq!(ka.cmp(&kb), ordering, "{:?} {:?}", a, b);
            // DESC reverses the order, except that the empty value stays first (as in
            // Cassandra's `ReversedType`).
            let (da, db) = (key(&ty, ClusteringOrder::Desc, &a), key(&ty, ClusteringOrder::Desc, &b));
            let expected = if empty_key(&ty, &a) || empty_key(&ty, &b) {
                ordering
            } else {
                ordering.reverse()
            };
            prop_assert_eq!(da.cmp(&db), expected);
        }
        if ka == kb {
            prop_assert_eq!(ordering, Ordering::Equal);
        }
        if ordering == Ordering::Equal && matches!(ty, CqlType::Varint | CqlType::Decimal) {
            prop_assert_eq!(ka, kb);
        }
    }

    #[test]
    fn clustering_keys_decode_to_their_values((ty, a, b) in clustering_pair()) {
        let columns = [(ty.clone(), ClusteringOrder::Desc), (ty.clone(), ClusteringOrder::Asc)];
        let encoded = clustering_key(&columns, &[a.clone(), b.clone()]).unwrap();
        let values = clustering_values(&columns, &encoded).unwrap();
        prop_assert_eq!(values.len(), 2);
        if has_number(&ty) {
            // Numbers come back in their canonical form: equal values, the same key.
            prop_assert_eq!(compare(&ty, &values[0], &a), Ordering::Equal);
            prop_assert_eq!(compare(&ty, &values[1], &b), Ordering::Equal);
            prop_assert_eq!(clustering_key(&columns, &values).unwrap(), encoded);
        } else {
            prop_assert_eq!(values[0].to_bytes(&ty), a.to_bytes(&ty));
            prop_assert_eq!(values[1].to_bytes(&ty), b.to_bytes(&ty));
        }
    }
}

fn assert_ascending(ty: &CqlType, values: &[CqlValue]) {
    for (i, a) in values.iter().enumerate() {
        for (j, b) in values.iter().enumerate() {
            assert_eq!(compare(ty, a, b), i.cmp(&j), "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn numbers() {
    assert_ascending(
        &CqlType::Double,
        &[
            CqlValue::Empty,
            CqlValue::Double(f64::NEG_INFINITY),
            CqlValue::Double(-1.0),
            CqlValue::Double(-0.0),
            CqlValue::Double(0.0),
            CqlValue::Double(f64::MIN_POSITIVE),
            CqlValue::Double(f64::INFINITY),
            CqlValue::Double(f64::NAN),
        ],
    );
    let nan_bits = CqlValue::Float(f32::from_bits(0x7FC0_0001));
    assert_eq!(
        compare(&CqlType::Float, &CqlValue::Float(f32::NAN), &nan_bits),
        Ordering::Equal
    );
    assert_ascending(
        &CqlType::Varint,
        &[-300, -1, 0, 1, 255, 256].map(|n| CqlValue::Varint(BigInt::from(n))),
    );
    let dec = |u: i64, scale: i32| {
        CqlValue::Decimal(Decimal {
            unscaled: BigInt::from(u),
            scale,
        })
    };
    assert_eq!(
        compare(&CqlType::Decimal, &dec(10, 1), &dec(100, 2)),
        Ordering::Equal
    );
    assert_ascending(
        &CqlType::Decimal,
        &[dec(-1, -3), dec(-15, 1), dec(0, 5), dec(1, 3), dec(2, 0)],
    );
    // Dates are unsigned: the epoch is 2^31.
    assert_ascending(
        &CqlType::Date,
        &[
            CqlValue::Date(0),
            CqlValue::Date(1 << 31),
            CqlValue::Date(u32::MAX),
        ],
    );
}

/// Filters and conditions compare by value (`compareForCQL`), not by bytes.
#[test]
fn serialized_values_are_equal_by_value() {
    use khata_cql::value::equal_serialized;
    let dec = |unscaled: &[u8], scale: i32| [&scale.to_be_bytes()[..], unscaled].concat();
    // 1230 (scale 0), 1.23E+3 (123, scale -1) and 12300E-1.
    let forms = [
        dec(&[0x04, 0xCE], 0),
        dec(&[123], -1),
        dec(&[0x30, 0x0C], 1),
    ];
    for a in &forms {
        for b in &forms {
            assert!(equal_serialized(&CqlType::Decimal, a, b));
        }
    }
    assert!(!equal_serialized(
        &CqlType::Decimal,
        &forms[0],
        &dec(&[0x04, 0xCF], 0)
    ));
    assert!(equal_serialized(&CqlType::Varint, &[0x00, 0x01], &[0x01]));
    assert!(!equal_serialized(&CqlType::Varint, &[0x00, 0x01], &[0x02]));
    let set = CqlType::Set {
        element: Box::new(CqlType::Decimal),
        frozen: true,
    };
    let one_element =
        |e: &[u8]| [&1i32.to_be_bytes()[..], &(e.len() as i32).to_be_bytes(), e].concat();
    assert!(equal_serialized(
        &set,
        &one_element(&forms[0]),
        &one_element(&forms[1])
    ));
    assert!(!equal_serialized(
        &CqlType::Int,
        &[0, 0, 0, 1],
        &[0, 0, 0, 2]
    ));
    assert!(!equal_serialized(&CqlType::Decimal, &[0, 0], &forms[0]));
}

#[test]
fn uuids() {
    let v1 = |time_low: u32, time_mid: u16, time_hi: u16, low: u64| {
        let msb =
            (u64::from(time_low) << 32) | (u64::from(time_mid) << 16) | 0x1000 | u64::from(time_hi);
        Uuid::from_u64_pair(msb, low)
    };
    // Timeuuids by timestamp (high bits first), then the low half as signed bytes.
    let ordered = [
        v1(0xFFFF_FFFF, 0, 0, 0),
        v1(0, 1, 0, 0),
        v1(0, 0, 1, 0x80),
        v1(0, 0, 1, 0x00),
        v1(0, 0, 1, 0x7F),
    ];
    assert_ascending(&CqlType::Timeuuid, &ordered.map(CqlValue::Timeuuid));
    // Uuids: version first; version 1 by timestamp; the low half unsigned.
    let v4 = |msb: u64, lsb: u64| Uuid::from_u64_pair((msb & !0xF000) | 0x4000, lsb);
    assert_ascending(
        &CqlType::Uuid,
        &[
            CqlValue::Empty,
            CqlValue::Uuid(v1(0xFFFF_FFFF, 0, 0, 0)),
            CqlValue::Uuid(v1(0, 0, 1, 0)),
            CqlValue::Uuid(v4(0, 0x7F)),
            CqlValue::Uuid(v4(0, 0x80)),
            CqlValue::Uuid(v4(0, u64::MAX)),
            CqlValue::Uuid(v4(1 << 63, 0)),
        ],
    );
}

#[test]
fn bytes_and_addresses() {
    assert_ascending(
        &CqlType::Text,
        ["", "A", "a", "ab", "b", "é"]
            .map(|s| CqlValue::Text(s.into()))
            .as_slice(),
    );
    let ip = |s: &str| CqlValue::Inet(s.parse::<IpAddr>().unwrap());
    assert_ascending(
        &CqlType::Inet,
        &[
            ip("::1"),
            ip("::ffff:1.0.0.0"),
            ip("0.0.0.1"),
            ip("1.0.0.0"),
            ip("255.0.0.0"),
        ],
    );
    assert_ascending(
        &CqlType::Boolean,
        &[CqlValue::Boolean(false), CqlValue::Boolean(true)],
    );
}

#[test]
fn collections_and_tuples() {
    let ints = |v: &[i32]| CqlValue::List(v.iter().map(|n| CqlValue::Int(*n)).collect());
    let list = CqlType::List {
        element: Box::new(CqlType::Int),
        frozen: true,
    };
    assert_ascending(&list, &[ints(&[]), ints(&[1]), ints(&[1, 2]), ints(&[2])]);
    let tuple = CqlType::Tuple(vec![CqlType::Int, CqlType::Int]);
    let t = |fields: &[Option<i32>]| {
        CqlValue::Tuple(fields.iter().map(|f| f.map(CqlValue::Int)).collect())
    };
    assert_ascending(
        &tuple,
        &[
            t(&[]),
            t(&[None]),
            t(&[Some(1)]),
            t(&[Some(1), Some(0)]),
            t(&[Some(2), None]),
        ],
    );
    // Trailing nulls do not count.
    assert_eq!(
        compare(&tuple, &t(&[Some(1)]), &t(&[Some(1), None])),
        Ordering::Equal
    );
    assert_eq!(
        compare(&tuple, &t(&[None]), &t(&[None, None])),
        Ordering::Equal
    );
}
