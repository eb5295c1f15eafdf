//! Values serialize and deserialize back to themselves, for every type; bound values are
//! validated with Cassandra's messages; sets and maps from a client are normalised.

#[path = "value_strategies.rs"]
mod strategies;

use std::net::{IpAddr, Ipv4Addr};

use khata_cql::value::{CqlValue, Decimal, Duration, ValueError};
use khata_types::schema::CqlType;
use num_bigint::BigInt;
use proptest::prelude::*;
use strategies::{Gen, typed_value};
use uuid::Uuid;

fn de(ty: &CqlType, bytes: &[u8]) -> Result<CqlValue, ValueError> {
    CqlValue::deserialize(ty, bytes)
}

fn message(ty: &CqlType, bytes: &[u8]) -> String {
    de(ty, bytes).unwrap_err().to_string()
}

fn list(element: CqlType) -> CqlType {
    CqlType::List {
        element: Box::new(element),
        frozen: false,
    }
}

fn set(element: CqlType) -> CqlType {
    CqlType::Set {
        element: Box::new(element),
        frozen: true,
    }
}

fn map(key: CqlType, value: CqlType) -> CqlType {
    CqlType::Map {
        key: Box::new(key),
        value: Box::new(value),
        frozen: false,
    }
}

/// A collection's serialization from its elements' serializations.
fn collection(elements: &[&[u8]], count: i32) -> Vec<u8> {
    let mut out = count.to_be_bytes().to_vec();
    for e in elements {
        out.extend_from_slice(&(e.len() as i32).to_be_bytes());
        out.extend_from_slice(e);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_value_round_trips((ty, value) in typed_value(Gen::WIRE)) {
        prop_assert!(value.conforms_to(&ty));
        let bytes = value.to_bytes(&ty);
        let back = de(&ty, &bytes).map_err(|e| TestCaseError::fail(format!("{e}: {bytes:02x?}")))?;
        // Bytes, not values: NaN is not equal to itself.
        prop_assert_eq!(back.to_bytes(&ty), bytes);
        prop_assert!(back.conforms_to(&ty));
    }
}

#[test]
fn natives_have_cassandra_layouts() {
    let cases: Vec<(CqlType, CqlValue, Vec<u8>)> = vec![
        (
            CqlType::Int,
            CqlValue::Int(-2),
            vec![0xFF, 0xFF, 0xFF, 0xFE],
        ),
        (
            CqlType::Bigint,
            CqlValue::Bigint(1),
            vec![0, 0, 0, 0, 0, 0, 0, 1],
        ),
        (CqlType::Smallint, CqlValue::Smallint(258), vec![1, 2]),
        (CqlType::Tinyint, CqlValue::Tinyint(-1), vec![0xFF]),
        (CqlType::Boolean, CqlValue::Boolean(true), vec![1]),
        (CqlType::Float, CqlValue::Float(1.0), vec![0x3F, 0x80, 0, 0]),
        (CqlType::Date, CqlValue::Date(1 << 31), vec![0x80, 0, 0, 0]),
        (
            CqlType::Text,
            CqlValue::Text("hé".into()),
            "hé".as_bytes().to_vec(),
        ),
        (
            CqlType::Varint,
            CqlValue::Varint(BigInt::from(128)),
            vec![0x00, 0x80],
        ),
        (
            CqlType::Varint,
            CqlValue::Varint(BigInt::from(-129)),
            vec![0xFF, 0x7F],
        ),
        (
            CqlType::Varint,
            CqlValue::Varint(BigInt::from(0)),
            vec![0x00],
        ),
        (
            CqlType::Decimal,
            CqlValue::Decimal(Decimal {
                unscaled: BigInt::from(-15),
                scale: 1,
            }),
            vec![0, 0, 0, 1, 0xF1],
        ),
        (
            CqlType::Duration,
            CqlValue::Duration(Duration {
                months: 1,
                days: 0,
                nanos: 0,
            }),
            vec![2, 0, 0],
        ),
        (
            CqlType::Duration,
            CqlValue::Duration(Duration {
                months: -1,
                days: -2,
                nanos: -1_000_000_000,
            }),
            vec![1, 3, 0xF0, 0x77, 0x35, 0x93, 0xFF],
        ),
        (
            CqlType::Inet,
            CqlValue::Inet(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            vec![127, 0, 0, 1],
        ),
        (CqlType::Int, CqlValue::Empty, vec![]),
        (
            list(CqlType::Int),
            CqlValue::List(vec![CqlValue::Int(1)]),
            collection(&[&[0, 0, 0, 1]], 1),
        ),
        (
            CqlType::Tuple(vec![CqlType::Int, CqlType::Text]),
            CqlValue::Tuple(vec![None, Some(CqlValue::Text("a".into()))]),
            vec![0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1, b'a'],
        ),
        (
            CqlType::Vector {
                element: Box::new(CqlType::Float),
                dimension: 2,
            },
            CqlValue::Vector(vec![CqlValue::Float(1.0), CqlValue::Float(-2.0)]),
            vec![0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0],
        ),
        (
            CqlType::Vector {
                element: Box::new(CqlType::Smallint),
                dimension: 2,
            },
            CqlValue::Vector(vec![CqlValue::Smallint(1), CqlValue::Smallint(2)]),
            vec![2, 0, 1, 2, 0, 2],
        ),
    ];
    for (ty, value, bytes) in cases {
        assert_eq!(value.to_bytes(&ty), bytes, "{ty:?} {value:?}");
        assert_eq!(de(&ty, &bytes).unwrap(), value, "{ty:?}");
    }
}

#[test]
fn wrong_lengths_are_refused_with_cassandra_messages() {
    let cases: [(CqlType, usize, &str); 14] = [
        (CqlType::Int, 3, "Expected 4 or 0 byte int (3)"),
        (CqlType::Bigint, 4, "Expected 8 or 0 byte long (4)"),
        (CqlType::Counter, 1, "Expected 8 or 0 byte long (1)"),
        (CqlType::Smallint, 0, "Expected 2 bytes for a smallint (0)"),
        (CqlType::Tinyint, 2, "Expected 1 byte for a tinyint (2)"),
        (CqlType::Boolean, 2, "Expected 1 or 0 byte value (2)"),
        (
            CqlType::Float,
            8,
            "Expected 4 or 0 byte value for a float (8)",
        ),
        (
            CqlType::Double,
            4,
            "Expected 8 or 0 byte value for a double (4)",
        ),
        (CqlType::Date, 0, "Expected 4 byte long for date (0)"),
        (CqlType::Time, 4, "Expected 8 byte long for time (4)"),
        (
            CqlType::Timestamp,
            7,
            "Expected 8 or 0 byte long for date (7)",
        ),
        (CqlType::Uuid, 15, "UUID should be 16 or 0 bytes (15)"),
        (CqlType::Decimal, 3, "Expected 0 or at least 4 bytes (3)"),
        (
            CqlType::Duration,
            2,
            "Expected at least 3 bytes for a duration (2)",
        ),
    ];
    for (ty, len, expected) in cases {
        assert_eq!(message(&ty, &vec![0; len]), expected, "{ty:?}");
    }
    assert_eq!(
        message(&CqlType::Inet, &[1, 2, 3]),
        "Expected 4 or 16 byte inetaddress; got 010203"
    );
}

#[test]
fn strings_are_validated() {
    assert_eq!(
        message(&CqlType::Text, &[0x61, 0xFF]),
        "String didn't validate."
    );
    assert_eq!(message(&CqlType::Text, &[0xC3]), "String didn't validate.");
    assert_eq!(
        message(&CqlType::Ascii, &[0x61, 0xC3, 0xA9]),
        "Invalid byte for ascii: -61"
    );
    assert_eq!(
        de(&CqlType::Ascii, b"").unwrap(),
        CqlValue::Ascii(String::new())
    );
    assert_eq!(
        de(&CqlType::Text, b"").unwrap(),
        CqlValue::Text(String::new())
    );
}

#[test]
fn domains_are_checked() {
    let day = 86_400_000_000_000i64;
    assert!(de(&CqlType::Time, &(day - 1).to_be_bytes()).is_ok());
    assert!(matches!(
        de(&CqlType::Time, &day.to_be_bytes()),
        Err(ValueError::TimeOutOfRange(_))
    ));
    assert!(de(&CqlType::Time, &(-1i64).to_be_bytes()).is_err());
    let v4 = Uuid::new_v4();
    assert_eq!(
        message(&CqlType::Timeuuid, v4.as_bytes()),
        "Invalid version for TimeUUID type."
    );
    assert_eq!(
        de(&CqlType::Uuid, v4.as_bytes()).unwrap(),
        CqlValue::Uuid(v4)
    );
    assert_eq!(
        de(&CqlType::Boolean, &[7]).unwrap(),
        CqlValue::Boolean(true)
    );
    // Durations: mixed signs, months beyond 32 bits, bytes after the value.
    assert_eq!(
        message(&CqlType::Duration, &[2, 1, 0]),
        "The duration months, days and nanoseconds must be all of the same sign (1, -1, 0)"
    );
    let mut too_many_months = Vec::new();
    too_many_months.extend_from_slice(&[0xF1, 0x00, 0x00, 0x00, 0x00]); // zig-zag of 2^31
    too_many_months.extend_from_slice(&[0, 0]);
    assert_eq!(
        message(&CqlType::Duration, &too_many_months),
        "The duration months must be a 32 bits integer but was: 2147483648"
    );
    assert_eq!(
        message(&CqlType::Duration, &[0, 0, 0, 0]),
        "Unexpected extraneous bytes after duration value"
    );
    assert_eq!(
        message(&CqlType::Decimal, &[0, 0, 0, 1]),
        "Zero length BigInteger"
    );
}

#[test]
fn collections_are_validated() {
    let ints = list(CqlType::Int);
    assert_eq!(message(&ints, &[]), "Not enough bytes to read a list");
    assert_eq!(message(&ints, &[0, 0]), "Not enough bytes to read a list");
    assert_eq!(
        message(&ints, &(-1i32).to_be_bytes()),
        "The data cannot be deserialized as a list"
    );
    assert_eq!(
        message(&ints, &collection(&[], 1)),
        "Not enough bytes to read a list"
    );
    let mut extra = collection(&[], 0);
    extra.push(0);
    assert_eq!(
        message(&ints, &extra),
        "Unexpected extraneous bytes after list value"
    );
    let mut null = 1i32.to_be_bytes().to_vec();
    null.extend_from_slice(&(-1i32).to_be_bytes());
    assert_eq!(
        message(&ints, &null),
        "null is not supported inside collections"
    );
    assert_eq!(
        message(&set(CqlType::Int), &null),
        "null is not supported inside collections"
    );
    // An element's own validation.
    assert_eq!(
        message(&ints, &collection(&[&[0, 0, 1]], 1)),
        "Expected 4 or 0 byte int (3)"
    );
    // A count far beyond the bytes fails without allocating for it.
    assert_eq!(
        message(&ints, &i32::MAX.to_be_bytes()),
        "Not enough bytes to read a list"
    );
    assert_eq!(
        message(
            &map(CqlType::Int, CqlType::Int),
            &collection(&[&[0, 0, 0, 1]], 1)
        ),
        "Not enough bytes to read a map"
    );
}

#[test]
fn sets_and_maps_from_clients_are_sorted_and_deduplicated() {
    let three = 3i32.to_be_bytes();
    let one = 1i32.to_be_bytes();
    let minus = (-5i32).to_be_bytes();
    let bytes = collection(&[&three, &one, &three, &minus], 4);
    let value = de(&set(CqlType::Int), &bytes).unwrap();
    assert_eq!(
        value,
        CqlValue::Set(vec![CqlValue::Int(-5), CqlValue::Int(1), CqlValue::Int(3)])
    );
    assert_eq!(
        value.to_bytes(&set(CqlType::Int)),
        collection(&[&minus, &one, &three], 3)
    );

    // Map: sorted by key; a repeated key keeps its last value.
    let (a, b, c) = (b"a".as_slice(), b"b".as_slice(), b"c".as_slice());
    let bytes = collection(&[b, &one, a, &three, b, &minus, c, &one], 4);
    let value = de(&map(CqlType::Text, CqlType::Int), &bytes).unwrap();
    assert_eq!(
        value,
        CqlValue::Map(vec![
            (CqlValue::Text("a".into()), CqlValue::Int(3)),
            (CqlValue::Text("b".into()), CqlValue::Int(-5)),
            (CqlValue::Text("c".into()), CqlValue::Int(1)),
        ])
    );

    // Decimals equal in value are one element: the first stays.
    let one_point_zero = [0, 0, 0, 1, 10];
    let one_point_zero_zero = [0, 0, 0, 2, 100];
    let bytes = collection(&[&one_point_zero_zero, &one_point_zero], 2);
    let value = de(&set(CqlType::Decimal), &bytes).unwrap();
    assert_eq!(
        value,
        CqlValue::Set(vec![CqlValue::Decimal(Decimal {
            unscaled: BigInt::from(100),
            scale: 2
        })])
    );
}

#[test]
fn tuples_and_udts_allow_missing_trailing_fields_only() {
    let tuple = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
    assert_eq!(de(&tuple, &[]).unwrap(), CqlValue::Tuple(vec![]));
    assert_eq!(
        de(&tuple, &[0, 0, 0, 4, 0, 0, 0, 7]).unwrap(),
        CqlValue::Tuple(vec![Some(CqlValue::Int(7))])
    );
    assert_eq!(
        message(&tuple, &[0, 0, 0]),
        "Not enough bytes to read size of 0th component"
    );
    assert_eq!(
        message(&tuple, &[0, 0, 0, 4, 0]),
        "Not enough bytes to read 0th component"
    );
    let mut three = vec![0xFF; 4];
    three.extend_from_slice(&[0xFF; 4]);
    three.extend_from_slice(&[0xFF; 4]);
    assert_eq!(
        message(&tuple, &three),
        "Invalid remaining data after end of tuple value"
    );

    let udt = CqlType::Udt {
        keyspace: "ks".into(),
        name: "address".into(),
        fields: vec![
            ("street".into(), CqlType::Text),
            ("zip".into(), CqlType::Int),
        ],
        frozen: true,
    };
    assert_eq!(
        de(&udt, &[0, 0, 0, 1, b'x']).unwrap(),
        CqlValue::Udt(vec![("street".into(), Some(CqlValue::Text("x".into())))])
    );
    assert_eq!(
        message(&udt, &[0, 0, 0, 1, b'x', 0, 0]),
        "Not enough bytes to read size of 1th field zip"
    );
    let mut extra = vec![0xFF; 8];
    extra.extend_from_slice(&[0xFF; 4]);
    assert_eq!(
        message(&udt, &extra),
        "Invalid remaining data after end of UDT value"
    );
}

#[test]
fn vectors_are_validated() {
    let floats = CqlType::Vector {
        element: Box::new(CqlType::Float),
        dimension: 2,
    };
    assert_eq!(de(&floats, &[]).unwrap(), CqlValue::Empty);
    assert_eq!(
        message(&floats, &[0; 7]),
        "Not enough bytes to read a vector<float, 2>"
    );
    assert_eq!(
        message(&floats, &[0; 9]),
        "Unexpected 1 extraneous bytes after vector<float, 2> value"
    );
    let texts = CqlType::Vector {
        element: Box::new(CqlType::Text),
        dimension: 2,
    };
    assert_eq!(
        de(&texts, &[1, b'a', 0]).unwrap(),
        CqlValue::Vector(vec![
            CqlValue::Text("a".into()),
            CqlValue::Text(String::new())
        ])
    );
    assert_eq!(
        message(&texts, &[5, b'a']),
        "Not enough bytes to read a vector<text, 2>"
    );
    // A huge dimension does not allocate for it.
    let huge = CqlType::Vector {
        element: Box::new(CqlType::Text),
        dimension: u32::MAX,
    };
    assert_eq!(
        message(&huge, &[0]),
        format!("Not enough bytes to read a vector<text, {}>", u32::MAX)
    );
}

#[test]
#[should_panic(expected = "serializing a value that is not a int")]
fn serializing_a_value_of_another_type_is_a_bug() {
    CqlValue::Text("x".into()).to_bytes(&CqlType::Int);
}
