//! Projections, and the legacy parameters turned into expression trees.
mod common;

use common::{item, names};
use khata_dynamo::expr::{
    QUERY_PARAMETERS, SCAN_PARAMETERS, UPDATE_PARAMETERS, WRITE_PARAMETERS, attribute_updates,
    attributes_to_get, check_parameters, expected, key_conditions, parse_projection, query_filter,
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
        "queryFilter",
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
}

fn check(parameters: &khata_dynamo::expr::Parameters, req: serde_json::Value) -> String {
    match check_parameters(req.as_object().unwrap(), parameters) {
        Ok(()) => "ok".into(),
        Err(e) => msg(e),
    }
}

/// Which legacy and expression parameters a request may give together, and what
/// `ConditionalOperator` needs, as DynamoDB answers (dynalite's and extenddb's suites, run
/// against DynamoDB, and Alternator's test_expected.py::test_update_expected_empty).
#[test]
fn legacy_and_expression_parameters() {
    let mixed = "Can not use both expression and non-expression parameters in the same request: ";
    let cond = json!({"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}]});
    assert_eq!(
        check(
            &UPDATE_PARAMETERS,
            json!({"AttributeUpdates": {}, "ConditionExpression": "a = :v"})
        ),
        format!(
            "{mixed}Non-expression parameters: {{AttributeUpdates}} Expression parameters: {{ConditionExpression}}"
        )
    );
    assert_eq!(
        check(
            &UPDATE_PARAMETERS,
            json!({"AttributeUpdates": {}, "Expected": {}, "ConditionalOperator": "AND",
                   "UpdateExpression": "SET a = :v", "ConditionExpression": "a = :v"})
        ),
        format!(
            "{mixed}Non-expression parameters: {{AttributeUpdates, Expected, ConditionalOperator}} Expression parameters: {{UpdateExpression, ConditionExpression}}"
        )
    );
    assert_eq!(
        check(
            &WRITE_PARAMETERS,
            json!({"ConditionalOperator": "OR", "ConditionExpression": "a = :v"})
        ),
        format!(
            "{mixed}Non-expression parameters: {{ConditionalOperator}} Expression parameters: {{ConditionExpression}}"
        )
    );
    // KeyConditions go with a filter or projection expression, not with the key expression.
    assert_eq!(
        check(
            &QUERY_PARAMETERS,
            json!({"KeyConditions": {}, "FilterExpression": "a = :v", "ProjectionExpression": "a"})
        ),
        "ok"
    );
    assert_eq!(
        check(
            &QUERY_PARAMETERS,
            json!({"KeyConditions": {}, "QueryFilter": {}, "KeyConditionExpression": "p = :p",
                   "ProjectionExpression": "a"})
        ),
        format!(
            "{mixed}Non-expression parameters: {{QueryFilter, KeyConditions}} Expression parameters: {{ProjectionExpression, KeyConditionExpression}}"
        )
    );
    assert_eq!(
        check(
            &SCAN_PARAMETERS,
            json!({"AttributesToGet": ["a"], "FilterExpression": "a = :v"})
        ),
        format!(
            "{mixed}Non-expression parameters: {{AttributesToGet}} Expression parameters: {{FilterExpression}}"
        )
    );
    let without = "ConditionalOperator cannot be used without Filter or Expected";
    let one =
        "ConditionalOperator can only be used when Filter or Expected has two or more elements";
    assert_eq!(
        check(&WRITE_PARAMETERS, json!({"ConditionalOperator": "OR"})),
        without
    );
    assert_eq!(
        check(
            &UPDATE_PARAMETERS,
            json!({"Expected": {}, "ConditionalOperator": "AND"})
        ),
        without
    );
    assert_eq!(
        check(
            &SCAN_PARAMETERS,
            json!({"ScanFilter": {"a": cond}, "ConditionalOperator": "AND"})
        ),
        one
    );
    assert_eq!(
        check(
            &QUERY_PARAMETERS,
            json!({"KeyConditions": {"p": cond, "c": cond}, "ConditionalOperator": "AND"})
        ),
        without
    );
    assert_eq!(
        check(
            &QUERY_PARAMETERS,
            json!({"QueryFilter": {"a": cond, "b": cond}, "ConditionalOperator": "OR"})
        ),
        "ok"
    );
    assert_eq!(
        check(
            &WRITE_PARAMETERS,
            json!({"Expected": {"a": cond, "b": cond}, "ConditionalOperator": "XOR"})
        ),
        "1 validation error detected: Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]"
    );
}

/// The values of an IN or BETWEEN are of one type, and an unknown operator is named with
/// where it was (dynalite's suite; Alternator's test_expected.py::test_update_expected_1_in,
/// test_query_filter.py::test_query_filter_in_different_types, test_key_conditions.py).
#[test]
fn legacy_operators_and_their_values() {
    let same = "One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type";
    let mixed = |op: &str| json!({"i": {"ComparisonOperator": op, "AttributeValueList": [{"N": "3"}, {"S": "dog"}]}});
    assert_eq!(msg(expected(&mixed("IN"), None).unwrap_err()), same);
    assert_eq!(msg(expected(&mixed("BETWEEN"), None).unwrap_err()), same);
    assert_eq!(
        msg(query_filter(&mixed("IN"), "queryFilter", None).unwrap_err()),
        same
    );
    assert_eq!(
        msg(query_filter(&mixed("BETWEEN"), "scanFilter", None).unwrap_err()),
        same
    );
    assert!(
        expected(
            &json!({"i": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "3"}, {"N": "4"}]}}),
            None
        )
        .is_ok()
    );
    let enum_set = "Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]";
    assert_eq!(
        msg(key_conditions(
            &json!({"p": {"ComparisonOperator": "eq", "AttributeValueList": [{"S": "x"}]}}),
            "p",
            None
        )
        .unwrap_err()),
        format!(
            "1 validation error detected: Value 'eq' at 'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: {enum_set}"
        )
    );
    assert_eq!(
        msg(expected(
            &json!({"a": {"ComparisonOperator": "DOG", "AttributeValueList": [{"S": "x"}]}}),
            None
        )
        .unwrap_err()),
        format!(
            "1 validation error detected: Value 'DOG' at 'expected.a.member.comparisonOperator' failed to satisfy constraint: {enum_set}"
        )
    );
}

/// An AttributeUpdates ADD or DELETE whose value's type is not the attribute's is a "Type
/// mismatch for attribute to update" (dynalite's suite, Alternator's test_update_item_add and
/// _delete, checked against DynamoDB); the same in an UpdateExpression keeps its own words.
#[test]
fn legacy_type_mismatch() {
    let it = the_item();
    let mismatch = |updates: serde_json::Value| {
        attribute_updates(&updates)
            .unwrap()
            .apply(&it, true)
            .unwrap_err()
            .0
    };
    let words = "Type mismatch for attribute to update";
    assert_eq!(
        mismatch(json!({"a": {"Action": "DELETE", "Value": {"NS": ["1"]}}})),
        words
    );
    assert_eq!(
        mismatch(json!({"s": {"Action": "ADD", "Value": {"NS": ["1"]}}})),
        words
    );
    assert_eq!(
        mismatch(json!({"s": {"Action": "ADD", "Value": {"N": "1"}}})),
        words
    );
    assert_eq!(
        mismatch(json!({"a": {"Action": "ADD", "Value": {"L": []}}})),
        words
    );
    let expression = khata_dynamo::expr::parse_update(
        "ADD s :n",
        &names(&[]),
        &common::values(json!({":n": {"N": "1"}})),
    )
    .unwrap();
    assert_eq!(
        expression.apply(&it, true).unwrap_err().0,
        "An operand in the update expression has an incorrect data type"
    );
}
