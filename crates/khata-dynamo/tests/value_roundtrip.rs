//! Property tests: JSON and binary encodings round-trip, the binary decoder never panics,
//! key encodings sort as DynamoDB orders keys, and the expression parser never panics.
use std::collections::HashMap;

use khata_dynamo::expr::{parse_condition, parse_projection, parse_update};
use khata_dynamo::value::{
    AttributeValue, Item, KeyType, Map, Number, decode_key, decode_value, encode_key, encode_value,
};
use proptest::prelude::*;

fn number() -> impl Strategy<Value = Number> {
    (
        any::<bool>(),
        proptest::collection::vec(0u8..10, 1..=38),
        -130i32..=87,
    )
        .prop_map(|(neg, digits, exp)| {
            let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
            Number::parse(&format!("{}{}e{}", if neg { "-" } else { "" }, text, exp))
                .unwrap_or_else(|_| Number::zero())
        })
}

fn value() -> impl Strategy<Value = AttributeValue> {
    let leaf = prop_oneof![
        ".{0,8}".prop_map(AttributeValue::S),
        number().prop_map(AttributeValue::N),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(AttributeValue::B),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null),
        proptest::collection::btree_set(".{0,4}", 1..4)
            .prop_map(|s| AttributeValue::Ss(s.into_iter().collect())),
        proptest::collection::btree_set(number(), 1..4)
            .prop_map(|s| AttributeValue::Ns(s.into_iter().collect())),
        proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..4), 1..4)
            .prop_map(|s| AttributeValue::Bs(s.into_iter().collect())),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(AttributeValue::L),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                .prop_map(|m: Map| AttributeValue::M(m)),
        ]
    })
}

proptest! {
    #[test]
    fn json_round_trip(v in value()) {
        let j = v.to_json();
        prop_assert_eq!(AttributeValue::from_json(&j).unwrap(), v.clone());
        let item: Item = [("a".to_string(), v)].into_iter().collect();
        prop_assert_eq!(Item::from_json(&item.to_json()).unwrap(), item);
    }

    #[test]
    fn binary_round_trip(v in value()) {
        prop_assert_eq!(decode_value(&encode_value(&v)).unwrap(), v);
    }

    #[test]
    fn binary_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode_value(&bytes);
        let _ = decode_key(KeyType::N, &bytes);
        let _ = decode_key(KeyType::S, &bytes);
    }

    #[test]
    fn mutated_encodings_never_panic(v in value(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = encode_value(&v);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = decode_value(&bytes);
        let _ = decode_value(&bytes[..i]);
    }

    #[test]
    fn number_keys_sort_numerically(a in number(), b in number()) {
        let (ka, kb) = (encode_key(&AttributeValue::N(a.clone())).unwrap(), encode_key(&AttributeValue::N(b.clone())).unwrap());
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        prop_assert_eq!(decode_key(KeyType::N, &ka).unwrap(), (AttributeValue::N(a), ka.len()));
        // Text round trip of the canonical form.
        prop_assert_eq!(Number::parse(&b.to_string()).unwrap(), b);
    }

    #[test]
    fn string_and_binary_keys_sort_bytewise(a in ".{0,6}", b in ".{0,6}", x in proptest::collection::vec(0u8..3, 0..6), y in proptest::collection::vec(0u8..3, 0..6)) {
        let (ka, kb) = (encode_key(&AttributeValue::S(a.clone())).unwrap(), encode_key(&AttributeValue::S(b.clone())).unwrap());
        prop_assert_eq!(ka.cmp(&kb), a.as_bytes().cmp(b.as_bytes()));
        let (kx, ky) = (encode_key(&AttributeValue::B(x.clone())).unwrap(), encode_key(&AttributeValue::B(y.clone())).unwrap());
        prop_assert_eq!(kx.cmp(&ky), x.cmp(&y));
        prop_assert_eq!(decode_key(KeyType::B, &kx).unwrap(), (AttributeValue::B(x), kx.len()));
    }

    #[test]
    fn parser_never_panics(text in "[a-z#:()\\[\\]0-9 .,=<>+-]{0,40}|.{0,40}") {
        let names: HashMap<String, String> = [("#a".to_string(), "a".to_string())].into_iter().collect();
        let values: HashMap<String, AttributeValue> = [(":v".to_string(), AttributeValue::N(Number::from(1)))].into_iter().collect();
        let item = Item::new();
        if let Ok(c) = parse_condition(&text, &names, &values) { c.eval(&item); }
        if let Ok(u) = parse_update(&text, &names, &values) { let _ = u.apply(&item, false); let _ = u.apply(&item, true); }
        let _ = parse_projection(&text, &names);
    }
}
