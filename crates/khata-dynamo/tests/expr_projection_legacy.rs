//! Projections, and the legacy parameters turned into expression trees.
mod common;

use common::{item, names};
use khata_dynamo::expr::{
    attribute_updates, attributes_to_get, check_not_mixed, expected, key_conditions,
    parse_projection, query_filter,
};
use khata_dynamo::value::ValueError;
use serde_json::json;

fn the_item() -> khata_dynamo::value::Item {
    item(
        json!({"a": {"N": "1"}, "b": {"M": {"c": {"S": "x"}, "d": {"S": "y"}}}, "l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}, "s": {"SS": ["p", "q"]}}),
    )
}

#[test]
fn projections() {
    let p = parse_projection("b.c, l[2], l[0], #x, nothing", &names(&[("#x", "a")])).unwrap();
    assert_eq!(
        p.apply(&the_item()).to_json(),
        json!({"a": {"N": "1"}, "b": {"M": {"c": {"S": "x"}}}, "l": {"L": [{"N": "0"}, {"N": "2"}]}})
    );
    let p = parse_projection("b.zz, a.q", &names(&[])).unwrap();
    assert_eq!(p.apply(&the_item()).to_json(), json!({}));
}

fn msg(e: ValueError) -> String {
    e.to_string()
}

#[test]
fn legacy_expected() {
    let it = the_item();
    let c = expected(
        &json!({"a": {"Value": {"N": "1"}}, "zz": {"Exists": false}}),
        None,
    )
    .unwrap();
    assert!(c.eval(&it));
    let c = expected(&json!({"a": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "5"}]}, "zz": {"Exists": false}}), Some("OR")).unwrap();
    assert!(c.eval(&it));
    let c = expected(&json!({"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "0"}, {"N": "1"}]}}), None).unwrap();
    assert!(c.eval(&it));
    let c = expected(&json!({"s": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "q"}]}, "zz": {"ComparisonOperator": "NULL"}}), None).unwrap();
    assert!(c.eval(&it));
    let c = expected(
        &json!({"zz": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "q"}]}}),
        None,
    )
    .unwrap();
    assert!(!c.eval(&it));
    let c = expected(
        &json!({"a": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "3"}, {"N": "1"}]}}),
        None,
    )
    .unwrap();
    assert!(c.eval(&it));
    assert_eq!(
        msg(expected(&json!({"a": {"Exists": true}}), None).unwrap_err()),
        "One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: a"
    );
    assert_eq!(
        msg(expected(&json!({"a": {"Exists": false, "Value": {"N": "1"}}}), None).unwrap_err()),
        "One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: a"
    );
    assert_eq!(
        msg(expected(&json!({"a": {"ComparisonOperator": "EQ"}}), None).unwrap_err()),
        "One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator"
    );
    assert_eq!(
        msg(expected(
            &json!({"a": {"ComparisonOperator": "LT", "AttributeValueList": [{"SS": ["x"]}]}}),
            None
        )
        .unwrap_err()),
        "One or more parameter values were invalid: ComparisonOperator LT is not valid for SS AttributeValue type"
    );
}

#[test]
fn legacy_filters_keys_updates_and_attributes() {
    let it = the_item();
    let f = query_filter(
        &json!({"a": {"ComparisonOperator": "NOT_NULL"}, "b": {"ComparisonOperator": "NULL"}}),
        Some("AND"),
    )
    .unwrap();
    assert!(!f.eval(&it));
    let k = key_conditions(
        &json!({"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}}),
        "a",
        None,
    )
    .unwrap();
    assert!(k.matches(&it));
    let u = attribute_updates(&json!({"a": {"Action": "ADD", "Value": {"N": "2"}}, "b": {"Action": "DELETE"}, "l": {"Action": "ADD", "Value": {"L": [{"N": "3"}]}}, "n": {"Value": {"S": "new"}}})).unwrap();
    let (new, _) = u.apply(&it, true).unwrap();
    let j = new.to_json();
    assert_eq!(j["a"], json!({"N": "3"}));
    assert!(j.get("b").is_none());
    assert_eq!(j["l"]["L"].as_array().unwrap().len(), 4);
    assert_eq!(j["n"], json!({"S": "new"}));
    let p = attributes_to_get(&json!(["a", "s"])).unwrap();
    assert_eq!(
        p.apply(&it).to_json(),
        json!({"a": {"N": "1"}, "s": {"SS": ["p", "q"]}})
    );
    assert_eq!(
        check_not_mixed(&["AttributesToGet"], &["ProjectionExpression"])
            .unwrap_err()
            .0,
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"
    );
    assert!(check_not_mixed(&[], &["ProjectionExpression"]).is_ok());
}
