//! Arbitrary bytes deserialized as arbitrary types never panic, and whatever deserializes is
//! a conforming value that serializes to bytes which deserialize to the same value (bound
//! values come from the network).

#[path = "value_strategies.rs"]
mod strategies;

use khata_cql::value::CqlValue;
use proptest::prelude::*;
use strategies::{Gen, column_type, typed_value};

/// Bytes that are often close to a valid serialization: a valid one, mutated.
fn mutated() -> impl Strategy<Value = (khata_types::schema::CqlType, Vec<u8>)> {
    (
        typed_value(Gen::WIRE),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        any::<prop::sample::Index>(),
        0usize..3,
    )
        .prop_map(|((ty, value), flips, cut, mode)| {
            let mut bytes = value.to_bytes(&ty);
            if !bytes.is_empty() {
                for (at, b) in flips {
                    let i = at.index(bytes.len());
                    bytes[i] = b;
                }
            }
            match mode {
                0 => bytes.truncate(cut.index(bytes.len() + 1)),
                1 => bytes.push(cut.index(256) as u8),
                _ => {}
            }
            (ty, bytes)
        })
}

fn check(ty: &khata_types::schema::CqlType, bytes: &[u8]) -> Result<(), TestCaseError> {
    // What the bind path accepts without decoding, decoding accepts too.
    if khata_cql::value::valid_as_is(ty, bytes) {
        prop_assert!(
            CqlValue::deserialize(ty, bytes).is_ok(),
            "{ty:?} {bytes:?} passed as is"
        );
    }
    if let Ok(value) = CqlValue::deserialize(ty, bytes) {
        prop_assert!(value.conforms_to(ty), "{value:?}");
        let again = value.to_bytes(ty);
        let back = CqlValue::deserialize(ty, &again)
            .map_err(|e| TestCaseError::fail(format!("re-serialized value refused: {e}")))?;
        prop_assert_eq!(back.to_bytes(ty), again);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn random_bytes_never_panic(ty in column_type(), bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        check(&ty, &bytes)?;
    }

    #[test]
    fn mutated_values_never_panic((ty, bytes) in mutated()) {
        check(&ty, &bytes)?;
    }
}
