//! `Display` writes a value as a CQL literal that the parser reads back and `from_term`
//! converts to the same value, for every type.

#[path = "value_strategies.rs"]
mod strategies;

use khata_cql::language::ast::{InsertValues, Statement, Term};
use khata_cql::language::parse_statement;
use khata_cql::value::{CqlValue, from_term};
use khata_types::schema::CqlType;
use proptest::prelude::*;
use strategies::{Gen, typed_value};

fn term(text: &str) -> Result<Term, String> {
    let parsed = parse_statement(&format!("INSERT INTO t (c) VALUES ({text})"))
        .map_err(|e| format!("{text}: {e}"))?;
    match parsed.statement {
        Statement::Insert(insert) => match insert.values {
            InsertValues::Columns { mut values, .. } => Ok(values.remove(0)),
            other => Err(format!("{other:?}")),
        },
        other => Err(format!("{other:?}")),
    }
}

fn round_trip(ty: &CqlType, value: &CqlValue) -> Result<(), TestCaseError> {
    let text = value.to_string();
    let term = term(&text).map_err(TestCaseError::fail)?;
    let back = from_term(&term, "c", ty, 0)
        .map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?
        .ok_or_else(|| TestCaseError::fail(format!("{text}: null")))?;
    // Bytes, not values: NaN is not equal to itself.
    prop_assert_eq!(back.to_bytes(ty), value.to_bytes(ty), "{}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn display_converts_back((ty, value) in typed_value(Gen::LITERAL)) {
        round_trip(&ty, &value)?;
    }
}

#[test]
fn udt_fields_that_need_quotes() {
    let ty = CqlType::Udt {
        keyspace: "ks".into(),
        name: "odd".into(),
        fields: vec![
            ("key".into(), CqlType::Int),
            ("Mixed Case".into(), CqlType::Text),
            ("with\"quote".into(), CqlType::Boolean),
            ("select".into(), CqlType::Float),
        ],
        frozen: true,
    };
    let value = CqlValue::Udt(vec![
        ("key".into(), Some(CqlValue::Int(1))),
        ("Mixed Case".into(), Some(CqlValue::Text("x".into()))),
        ("with\"quote".into(), None),
        ("select".into(), Some(CqlValue::Float(f32::NAN))),
    ]);
    assert_eq!(
        value.to_string(),
        "{\"key\": 1, \"Mixed Case\": 'x', \"with\"\"quote\": null, \"select\": NaN}"
    );
    round_trip(&ty, &value).unwrap();
}

#[test]
fn literal_forms() {
    let cases: Vec<(CqlValue, &str)> = vec![
        (CqlValue::Text("it's".into()), "'it''s'"),
        (CqlValue::Blob(vec![0xCA, 0xFE]), "0xcafe"),
        (CqlValue::Double(1e300), "1.0E300"),
        (CqlValue::Double(1e-4), "1.0E-4"),
        (CqlValue::Inet("::1".parse().unwrap()), "'0:0:0:0:0:0:0:1'"),
        (CqlValue::Double(-0.0), "-0.0"),
        (CqlValue::Float(f32::NEG_INFINITY), "-Infinity"),
        (CqlValue::Date(1 << 31), "'1970-01-01'"),
        (CqlValue::Date(0), "'-5877641-06-23'"),
        (CqlValue::Date(u32::MAX), "'+5881580-07-11'"),
        (CqlValue::Time(29_574_123_000_000), "'08:12:54.123000000'"),
        (
            CqlValue::Timestamp(1_706_688_774_123),
            "'2024-01-31T08:12:54.123Z'",
        ),
        (CqlValue::Timestamp(-62_135_596_800_000), "-62135596800000"),
        (
            CqlValue::Duration(khata_cql::value::Duration {
                months: 14,
                days: 3,
                nanos: 5_400_000_000_000,
            }),
            "1y2mo3d1h30m",
        ),
        (
            CqlValue::Tuple(vec![Some(CqlValue::Int(1)), None]),
            "(1, null)",
        ),
        (
            CqlValue::Map(vec![(
                CqlValue::Text("a".into()),
                CqlValue::List(vec![CqlValue::Int(1)]),
            )]),
            "{'a': [1]}",
        ),
        (CqlValue::Set(vec![]), "{}"),
    ];
    for (value, text) in cases {
        assert_eq!(value.to_string(), text);
    }
}
