//! Literal terms become values of the receiving column's type as in Cassandra, with its
//! messages when they cannot.

use std::net::IpAddr;

use khata_cql::language::ast::{InsertValues, Statement, Term};
use khata_cql::language::parse_statement;
use khata_cql::value::{CqlValue, Decimal, Duration, LiteralError, from_term, from_term_with};
use khata_types::schema::CqlType;
use num_bigint::BigInt;
use uuid::Uuid;

const NOW: i64 = 1_706_688_774_123;

/// The term of `INSERT INTO t (c) VALUES (<text>)`.
fn term(text: &str) -> Term {
    let parsed = parse_statement(&format!("INSERT INTO t (c) VALUES ({text})"))
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let Statement::Insert(insert) = parsed.statement else {
        panic!("not an insert")
    };
    let InsertValues::Columns { mut values, .. } = insert.values else {
        panic!("not columns")
    };
    values.remove(0)
}

fn convert(text: &str, ty: &CqlType) -> Result<Option<CqlValue>, LiteralError> {
    from_term(&term(text), "c", ty, NOW)
}

fn value(text: &str, ty: &CqlType) -> CqlValue {
    convert(text, ty)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .unwrap_or_else(|| panic!("{text}: null"))
}

fn error(text: &str, ty: &CqlType) -> String {
    match convert(text, ty) {
        Ok(v) => panic!("{text} converted to {v:?}"),
        Err(e) => e.to_string(),
    }
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
        frozen: false,
    }
}

fn map(key: CqlType, value: CqlType) -> CqlType {
    CqlType::Map {
        key: Box::new(key),
        value: Box::new(value),
        frozen: false,
    }
}

fn address() -> CqlType {
    CqlType::Udt {
        keyspace: "ks".into(),
        name: "address".into(),
        fields: vec![
            ("street".into(), CqlType::Text),
            ("zip".into(), CqlType::Int),
        ],
        frozen: true,
    }
}

#[test]
fn integers_fit_their_types() {
    assert_eq!(value("127", &CqlType::Tinyint), CqlValue::Tinyint(127));
    assert_eq!(value("-128", &CqlType::Tinyint), CqlValue::Tinyint(-128));
    assert_eq!(
        value("-32768", &CqlType::Smallint),
        CqlValue::Smallint(-32768)
    );
    assert_eq!(value("2147483647", &CqlType::Int), CqlValue::Int(i32::MAX));
    assert_eq!(
        value("-9223372036854775808", &CqlType::Bigint),
        CqlValue::Bigint(i64::MIN)
    );
    assert_eq!(value("5", &CqlType::Counter), CqlValue::Counter(5));
    assert_eq!(
        value("123456789012345678901234567890", &CqlType::Varint),
        CqlValue::Varint("123456789012345678901234567890".parse::<BigInt>().unwrap())
    );
    assert_eq!(value("5", &CqlType::Double), CqlValue::Double(5.0));
    assert_eq!(value("5", &CqlType::Float), CqlValue::Float(5.0));
    assert_eq!(
        value("5", &CqlType::Decimal),
        CqlValue::Decimal(Decimal {
            unscaled: BigInt::from(5),
            scale: 0
        })
    );
    assert_eq!(
        error("300", &CqlType::Tinyint),
        "Unable to make byte from '300'"
    );
    assert_eq!(
        error("-32769", &CqlType::Smallint),
        "Unable to make short from '-32769'"
    );
    assert_eq!(
        error("1418306451235", &CqlType::Int),
        "Unable to make int from '1418306451235'"
    );
    assert_eq!(
        error("9223372036854775808", &CqlType::Bigint),
        "Unable to make long from '9223372036854775808'"
    );
}

#[test]
fn constants_of_the_wrong_kind_are_not_assignable() {
    assert_eq!(
        error("'abc'", &CqlType::Int),
        "Invalid STRING constant (abc) for \"c\" of type int"
    );
    assert_eq!(
        error("1.5", &CqlType::Int),
        "Invalid FLOAT constant (1.5) for \"c\" of type int"
    );
    assert_eq!(
        error("42", &CqlType::Text),
        "Invalid INTEGER constant (42) for \"c\" of type text"
    );
    assert_eq!(
        error("true", &CqlType::Int),
        "Invalid BOOLEAN constant (true) for \"c\" of type int"
    );
    assert_eq!(
        error("0xcafe", &CqlType::Text),
        "Invalid HEX constant (0xcafe) for \"c\" of type text"
    );
    assert_eq!(
        error("1h", &CqlType::Bigint),
        "Invalid DURATION constant (1h) for \"c\" of type bigint"
    );
    assert_eq!(
        error("NaN", &CqlType::Bigint),
        "Invalid FLOAT constant (NaN) for \"c\" of type bigint"
    );
    assert_eq!(
        error("'a'", &list(CqlType::Text)),
        "Invalid STRING constant (a) for \"c\" of type list<text>"
    );
}

#[test]
fn floats_and_decimals() {
    assert_eq!(value("1.5", &CqlType::Double), CqlValue::Double(1.5));
    assert_eq!(value("-2e10", &CqlType::Float), CqlValue::Float(-2e10));
    assert_eq!(
        value("Infinity", &CqlType::Double),
        CqlValue::Double(f64::INFINITY)
    );
    assert_eq!(
        value("-Infinity", &CqlType::Float),
        CqlValue::Float(f32::NEG_INFINITY)
    );
    assert!(matches!(value("NaN", &CqlType::Double), CqlValue::Double(x) if x.is_nan()));
    assert!(matches!(value("-NaN", &CqlType::Float), CqlValue::Float(x) if x.is_nan()));
    assert_eq!(
        value("-1.50", &CqlType::Decimal),
        CqlValue::Decimal(Decimal {
            unscaled: BigInt::from(-150),
            scale: 2
        })
    );
    assert_eq!(
        value("1.5E3", &CqlType::Decimal),
        CqlValue::Decimal(Decimal {
            unscaled: BigInt::from(15),
            scale: -2
        })
    );
    assert_eq!(
        error("NaN", &CqlType::Decimal),
        "unable to make BigDecimal from 'NaN'"
    );
}

#[test]
fn strings() {
    assert_eq!(
        value("'it''s'", &CqlType::Text),
        CqlValue::Text("it's".into())
    );
    assert_eq!(
        value("$$dollar$$", &CqlType::Text),
        CqlValue::Text("dollar".into())
    );
    assert_eq!(
        value("'plain'", &CqlType::Ascii),
        CqlValue::Ascii("plain".into())
    );
    assert!(
        error("'héllo'", &CqlType::Ascii).starts_with("Invalid ASCII character in string literal")
    );
    assert_eq!(
        value("'127.0.0.1'", &CqlType::Inet),
        CqlValue::Inet("127.0.0.1".parse::<IpAddr>().unwrap())
    );
    assert_eq!(
        value("'::1'", &CqlType::Inet),
        CqlValue::Inet("::1".parse::<IpAddr>().unwrap())
    );
    assert_eq!(value("''", &CqlType::Inet), CqlValue::Empty);
    assert_eq!(
        error("'localhost'", &CqlType::Inet),
        "Unable to make inet address from 'localhost'"
    );
}

#[test]
fn dates_times_and_timestamps() {
    assert_eq!(
        value("'2024-01-31'", &CqlType::Date),
        CqlValue::Date((1 << 31) + 19_753)
    );
    assert_eq!(value("2147483648", &CqlType::Date), CqlValue::Date(1 << 31));
    assert_eq!(
        error("'2024-02-30'", &CqlType::Date),
        "Unable to coerce '2024-02-30' to a formatted date (long)"
    );
    assert_eq!(
        value("'08:12:54.123'", &CqlType::Time),
        CqlValue::Time(29_574_123_000_000)
    );
    assert_eq!(value("1000", &CqlType::Time), CqlValue::Time(1000));
    assert_eq!(
        error("'25:00:00'", &CqlType::Time),
        "(TimeType) Unable to coerce '25:00:00' to a formatted time (long)"
    );
    let base = 1_706_688_774_000;
    assert_eq!(
        value("'2024-01-31 08:12:54'", &CqlType::Timestamp),
        CqlValue::Timestamp(base)
    );
    assert_eq!(
        value("'2024-01-31T08:12:54.123Z'", &CqlType::Timestamp),
        CqlValue::Timestamp(base + 123)
    );
    assert_eq!(
        value("'2024-01-31 10:12:54+0200'", &CqlType::Timestamp),
        CqlValue::Timestamp(base)
    );
    assert_eq!(
        value("'now'", &CqlType::Timestamp),
        CqlValue::Timestamp(NOW)
    );
    assert_eq!(value("-1", &CqlType::Timestamp), CqlValue::Timestamp(-1));
    assert_eq!(
        error("'yesterday'", &CqlType::Timestamp),
        "Unable to coerce 'yesterday' to a formatted date (long)"
    );
    // Zeros may pad any field (Cassandra's TimestampSerializerTest.testZeroPadding,
    // CASSANDRA-16105); the values are still checked.
    for padded in [
        "'1970-01-01T0:0000000010:0.1Z'",
        "'0001970-01-01T0:010:0.1Z'",
        "'1970-0001-0001T0:010:0.1Z'",
    ] {
        assert_eq!(
            value(padded, &CqlType::Timestamp),
            CqlValue::Timestamp(600_100),
            "{padded}"
        );
    }
    assert_eq!(
        value("'2017-012-03 04:05+0000'", &CqlType::Timestamp),
        value("'2017-12-03 04:05+0000'", &CqlType::Timestamp)
    );
    assert_eq!(
        error("'1970-0013-01'", &CqlType::Timestamp),
        "Unable to coerce '1970-0013-01' to a formatted date (long)"
    );
}

#[test]
fn durations() {
    let hour = 3_600_000_000_000;
    assert_eq!(
        value("1h30m", &CqlType::Duration),
        CqlValue::Duration(Duration {
            months: 0,
            days: 0,
            nanos: hour * 3 / 2
        })
    );
    assert_eq!(
        value("P1DT2H", &CqlType::Duration),
        CqlValue::Duration(Duration {
            months: 0,
            days: 1,
            nanos: 2 * hour
        })
    );
    assert_eq!(
        value("-P1Y", &CqlType::Duration),
        CqlValue::Duration(Duration {
            months: -12,
            days: 0,
            nanos: 0
        })
    );
    assert_eq!(
        error("5", &CqlType::Duration),
        "Unable to convert '5' to a duration"
    );
    assert_eq!(
        error("'1h'", &CqlType::Duration),
        "Invalid STRING constant (1h) for \"c\" of type duration"
    );
}

#[test]
fn uuids_booleans_and_blobs() {
    let v4 = "123e4567-e89b-42d3-a456-426614174000";
    let v1 = "123e4567-e89b-12d3-a456-426614174000";
    assert_eq!(
        value(v4, &CqlType::Uuid),
        CqlValue::Uuid(Uuid::parse_str(v4).unwrap())
    );
    assert_eq!(
        value(v1, &CqlType::Timeuuid),
        CqlValue::Timeuuid(Uuid::parse_str(v1).unwrap())
    );
    assert_eq!(
        error(v4, &CqlType::Timeuuid),
        "TimeUUID supports only version 1 UUIDs"
    );
    assert_eq!(
        error(&format!("'{v4}'"), &CqlType::Uuid),
        format!("Invalid STRING constant ({v4}) for \"c\" of type uuid")
    );
    assert_eq!(value("true", &CqlType::Boolean), CqlValue::Boolean(true));
    assert_eq!(
        value("0xCAFE", &CqlType::Blob),
        CqlValue::Blob(vec![0xCA, 0xFE])
    );
    assert_eq!(value("0x", &CqlType::Blob), CqlValue::Blob(vec![]));
    assert_eq!(
        error("0xabc", &CqlType::Blob),
        "cannot parse 'abc' as hex bytes"
    );
}

#[test]
fn nulls() {
    assert_eq!(convert("null", &CqlType::Int), Ok(None));
    assert_eq!(
        error("null", &CqlType::Counter),
        "Invalid null value for counter increment/decrement"
    );
    assert_eq!(
        error("[1, null]", &list(CqlType::Int)),
        "null is not supported inside collections"
    );
    assert_eq!(
        error("{null}", &set(CqlType::Int)),
        "null is not supported inside collections"
    );
    assert_eq!(
        error("{1: null}", &map(CqlType::Int, CqlType::Int)),
        "null is not supported inside collections"
    );
}

#[test]
fn collections() {
    assert_eq!(
        value("[3, 1, 3]", &list(CqlType::Int)),
        CqlValue::List(vec![CqlValue::Int(3), CqlValue::Int(1), CqlValue::Int(3)])
    );
    assert_eq!(
        value("{3, 1, 3, -7}", &set(CqlType::Int)),
        CqlValue::Set(vec![CqlValue::Int(-7), CqlValue::Int(1), CqlValue::Int(3)])
    );
    assert_eq!(
        value(
            "{'b': 1, 'a': 2, 'b': 3}",
            &map(CqlType::Text, CqlType::Int)
        ),
        CqlValue::Map(vec![
            (CqlValue::Text("a".into()), CqlValue::Int(2)),
            (CqlValue::Text("b".into()), CqlValue::Int(3)),
        ])
    );
    assert_eq!(
        value("{}", &map(CqlType::Text, CqlType::Int)),
        CqlValue::Map(vec![])
    );
    // `NaN` and `Infinity` are keywords, not field names: these are map keys (compared by
    // bytes, as NaN is not equal to itself).
    let doubles = map(CqlType::Double, CqlType::Int);
    let expected = CqlValue::Map(vec![
        (CqlValue::Double(f64::NEG_INFINITY), CqlValue::Int(3)),
        (CqlValue::Double(f64::INFINITY), CqlValue::Int(2)),
        (CqlValue::Double(f64::NAN), CqlValue::Int(1)),
    ]);
    assert_eq!(
        value("{NaN: 1, Infinity: 2, -Infinity: 3}", &doubles).to_bytes(&doubles),
        expected.to_bytes(&doubles)
    );
    assert_eq!(value("{}", &set(CqlType::Int)), CqlValue::Set(vec![]));
    assert_eq!(value("[]", &list(CqlType::Int)), CqlValue::List(vec![]));
    assert_eq!(
        error("[1, 'a']", &list(CqlType::Int)),
        "Invalid list literal for c: value 'a' is not of type int"
    );
    assert_eq!(
        error("{1, 'a'}", &set(CqlType::Int)),
        "Invalid set literal for c: value 'a' is not of type int"
    );
    assert_eq!(
        error("{'a': 1}", &map(CqlType::Int, CqlType::Int)),
        "Invalid map literal for c: key 'a' is not of type int"
    );
    assert_eq!(
        error("{1: 'a'}", &map(CqlType::Int, CqlType::Int)),
        "Invalid map literal for c: value 'a' is not of type int"
    );
    assert_eq!(
        error("[1]", &set(CqlType::Int)),
        "Invalid list literal for c of type set<int>"
    );
    assert_eq!(
        error("{1}", &list(CqlType::Int)),
        "Invalid set literal for c of type list<int>"
    );
    assert_eq!(
        error("{1: 2}", &CqlType::Int),
        "Invalid map literal for c of type int"
    );
    // An element's own range error.
    assert_eq!(
        error("[1, 300]", &list(CqlType::Tinyint)),
        "Unable to make byte from '300'"
    );
    // Nested frozen collections.
    let nested = list(CqlType::Set {
        element: Box::new(CqlType::Int),
        frozen: true,
    });
    assert_eq!(
        value("[{2, 1}, {}]", &nested),
        CqlValue::List(vec![
            CqlValue::Set(vec![CqlValue::Int(1), CqlValue::Int(2)]),
            CqlValue::Set(vec![]),
        ])
    );
}

#[test]
fn tuples_udts_and_vectors() {
    let tuple = CqlType::Tuple(vec![CqlType::Int, CqlType::Text, CqlType::Boolean]);
    assert_eq!(
        value("(1, null, true)", &tuple),
        CqlValue::Tuple(vec![
            Some(CqlValue::Int(1)),
            None,
            Some(CqlValue::Boolean(true))
        ])
    );
    assert_eq!(
        value("(1)", &tuple),
        CqlValue::Tuple(vec![Some(CqlValue::Int(1))])
    );
    assert_eq!(
        error("(1, 'a', true, 4)", &tuple),
        "Invalid tuple literal for c: too many elements. Type frozen<tuple<int, text, boolean>> \
         expects 3 but got 4"
    );
    assert_eq!(
        error("('a')", &tuple),
        "Invalid tuple literal for c: component 0 is not of type int"
    );
    assert_eq!(
        error("(1, 2)", &CqlType::Int),
        "Invalid tuple type literal for c of type int"
    );

    assert_eq!(
        value("{zip: 75001}", &address()),
        CqlValue::Udt(vec![
            ("street".into(), None),
            ("zip".into(), Some(CqlValue::Int(75001))),
        ])
    );
    assert_eq!(
        error("{zip: 1, city: 'x'}", &address()),
        "Unknown field 'city' in value of user defined type address"
    );
    assert_eq!(
        error("{zip: 'x'}", &address()),
        "Invalid user type literal for c: field zip is not of type int"
    );
    assert_eq!(
        error("{zip: 1}", &CqlType::Int),
        "Invalid user type literal for c of type int"
    );

    let vector = CqlType::Vector {
        element: Box::new(CqlType::Float),
        dimension: 3,
    };
    assert_eq!(
        value("[1.0, 2, -3.5]", &vector),
        CqlValue::Vector(vec![
            CqlValue::Float(1.0),
            CqlValue::Float(2.0),
            CqlValue::Float(-3.5)
        ])
    );
    assert_eq!(
        error("[1.0, 2]", &vector),
        "Invalid vector literal for c of type vector<float, 3>; expected 3 elements, but given 2"
    );
}

#[test]
fn type_hints_and_non_literals() {
    assert_eq!(value("(int) 5", &CqlType::Int), CqlValue::Int(5));
    assert_eq!(
        error("(bigint) 5", &CqlType::Int),
        "Cannot assign value (bigint)5 to c of type int"
    );
    // A hint of a type whose values the receiver reads (isValueCompatibleWith) is taken, and
    // the term read as the receiver's type.
    assert_eq!(
        value("(ascii)'foo'", &CqlType::Text),
        CqlValue::Text("foo".into())
    );
    assert_eq!(
        value("(text)(ascii)'foo'", &CqlType::Text),
        CqlValue::Text("foo".into())
    );
    assert_eq!(
        value("(int)3", &CqlType::Varint),
        value("3", &CqlType::Varint)
    );
    assert_eq!(
        value("(bigint)3", &CqlType::Timestamp),
        CqlValue::Timestamp(3)
    );
    assert_eq!(
        error("(text)'foo'", &CqlType::Ascii),
        "Cannot assign value (text)'foo' to c of type ascii"
    );
    assert_eq!(
        error("(int)3", &CqlType::Double),
        "Cannot assign value (int)3 to c of type double"
    );
    // The term must be a value of the hinted type.
    assert_eq!(
        error("(int)'foo'", &CqlType::Int),
        "Cannot cast value 'foo' to type int"
    );
    assert_eq!(error("?", &CqlType::Int), "? is not a literal");
    assert_eq!(error("[1, ?]", &list(CqlType::Int)), "? is not a literal");
    assert_eq!(error("now()", &CqlType::Timeuuid), "now() is not a literal");
    // An evaluator binds what is not a literal, with the element's receiver name and type.
    let mut seen = Vec::new();
    let mut bind = |t: &Term, receiver: &str, ty: &CqlType| {
        seen.push((t.to_string(), receiver.to_string(), ty.clone()));
        Ok(Some(CqlValue::Int(9)))
    };
    let bound = from_term_with(&term("[1, ?]"), "c", &list(CqlType::Int), NOW, &mut bind);
    assert_eq!(
        bound,
        Ok(Some(CqlValue::List(vec![
            CqlValue::Int(1),
            CqlValue::Int(9)
        ])))
    );
    assert_eq!(
        seen,
        vec![("?".to_string(), "value(c)".to_string(), CqlType::Int)]
    );
}

#[test]
fn tuples_from_strings() {
    // TupleType.fromString: fields split on unescaped `:`, `@` for null.
    let tuple = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
    let t = |fields: Vec<Option<CqlValue>>| CqlValue::Tuple(fields);
    assert_eq!(
        value("'0:0'", &tuple),
        t(vec![
            Some(CqlValue::Int(0)),
            Some(CqlValue::Text("0".into()))
        ])
    );
    assert_eq!(
        value(r"'1:1\:1'", &tuple),
        t(vec![
            Some(CqlValue::Int(1)),
            Some(CqlValue::Text("1:1".into()))
        ])
    );
    assert_eq!(
        value("'@:1'", &tuple),
        t(vec![None, Some(CqlValue::Text("1".into()))])
    );
    assert_eq!(value("'7'", &tuple), t(vec![Some(CqlValue::Int(7))]));
    assert_eq!(value("7", &tuple), t(vec![Some(CqlValue::Int(7))]));
    assert_eq!(
        value(
            "'a\\@b:\\@'",
            &CqlType::Tuple(vec![CqlType::Text, CqlType::Text])
        ),
        t(vec![
            Some(CqlValue::Text("a@b".into())),
            Some(CqlValue::Text("@".into()))
        ])
    );
    assert_eq!(
        error("'1:a:b'", &tuple),
        "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3"
    );
    assert_eq!(error("'x:a'", &tuple), "Unable to make int from 'x'");
    // In a collection too.
    assert_eq!(
        value("['1:a']", &list(tuple.clone())),
        CqlValue::List(vec![t(vec![
            Some(CqlValue::Int(1)),
            Some(CqlValue::Text("a".into()))
        ])])
    );
}
