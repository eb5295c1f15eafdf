//! Helpers shared by the expression tests: items and placeholders from JSON.
#![allow(dead_code)]

use std::collections::HashMap;

use khata_dynamo::value::{AttributeValue, Item, values_from_json};
use serde_json::Value as Json;

pub fn item(j: Json) -> Item {
    Item::from_json(&j).expect("valid item")
}

pub fn values(j: Json) -> HashMap<String, AttributeValue> {
    values_from_json(&j).expect("valid values")
}

pub fn names(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}
