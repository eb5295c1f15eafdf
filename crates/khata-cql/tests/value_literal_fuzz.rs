//! Literal conversion never panics, whatever the constant's text or the term's shape, and what
//! it produces is a value of the receiver's type.

#[path = "value_strategies.rs"]
mod strategies;

use khata_cql::language::ast::{BindMarker, Literal, Name, NativeType, Term, TypeExpr};
use khata_cql::value::{CqlValue, from_term};
use khata_types::schema::CqlType;
use proptest::prelude::*;
use strategies::{NATIVE_TYPES, column_type};

fn check(term: &Term, ty: &CqlType) -> Result<(), TestCaseError> {
    if let Ok(Some(value)) = from_term(term, "c", ty, 0) {
        prop_assert!(value.conforms_to(ty), "{term} as {ty:?}: {value:?}");
        let bytes = value.to_bytes(ty);
        let back = CqlValue::deserialize(ty, &bytes)
            .map_err(|e| TestCaseError::fail(format!("{term}: {e}")))?;
        prop_assert_eq!(back.to_bytes(ty), bytes);
    }
    Ok(())
}

/// Text that looks like the constants the lexer produces, and some that does not.
fn constant_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?[0-9]{1,25}",
        "-?[0-9]{0,5}\\.?[0-9]{0,5}([eE][+-]?[0-9]{1,12})?",
        "[0-9+:. TZ-]{0,30}",
        "-?P?[0-9]{0,12}[yYmMoOwWdDhHsSuUnNTµ:-]{0,3}[0-9]{0,12}[a-zA-Zµ]{0,2}",
        "[0-9a-fA-F:.]{0,40}",
        ".{0,20}",
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    constant_text().prop_flat_map(|text| {
        prop_oneof![
            Just(Literal::String(text.clone())),
            Just(Literal::Integer(text.clone())),
            Just(Literal::Float(text.clone())),
            Just(Literal::Duration(text.clone())),
            Just(Literal::Hex(text.clone())),
            Just(Literal::NaN),
            Just(Literal::Infinity),
            Just(Literal::NegativeInfinity),
            any::<bool>().prop_map(Literal::Boolean),
            any::<[u8; 16]>().prop_map(|b| Literal::Uuid(uuid::Uuid::from_bytes(b))),
        ]
    })
}

/// Term trees: constants, nulls and markers inside lists, sets, maps, tuples, UDT literals and
/// type hints.
fn term() -> impl Strategy<Value = Term> {
    let leaf = prop_oneof![
        8 => literal().prop_map(Term::Literal),
        1 => Just(Term::Literal(Literal::Null)),
        1 => Just(Term::Marker(BindMarker { index: 0, name: None })),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let name = proptest::sample::select(vec!["f0", "f1", "f2", "other"]).prop_map(Name::from);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Term::List),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Term::Set),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Term::Map),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(Term::Tuple),
            proptest::collection::vec((name, inner.clone()), 1..4).prop_map(Term::UserType),
            (
                proptest::sample::select(vec![
                    NativeType::Int,
                    NativeType::Text,
                    NativeType::Double
                ]),
                inner
            )
                .prop_map(|(n, term)| Term::TypeHint {
                    ty: TypeExpr::Native(n),
                    term: Box::new(term)
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn constants_never_panic(ty in proptest::sample::select(NATIVE_TYPES.to_vec()), literal in literal()) {
        check(&Term::Literal(literal), &ty)?;
    }

    #[test]
    fn terms_never_panic(term in term(), ty in column_type()) {
        check(&term, &ty)?;
    }
}
