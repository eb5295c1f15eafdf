//! Condition and filter expressions: every comparator, function and precedence rule,
//! evaluated on items.
mod common;

use common::{item, names, values};
use khata_dynamo::expr::parse_condition;
use serde_json::json;

fn the_item() -> khata_dynamo::value::Item {
    item(json!({
        "pk": {"S": "USER#42"},
        "n": {"N": "10"},
        "s": {"S": "hello"},
        "b": {"B": "AAEC"},
        "t": {"BOOL": true},
        "z": {"NULL": true},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2.5"]},
        "l": {"L": [{"N": "1"}, {"S": "x"}, {"M": {"deep": {"N": "7"}}}]},
        "m": {"M": {"nest": {"M": {"v": {"S": "w"}}}, "cnt": {"N": "3"}}},
        "with.dot": {"S": "dotted"}
    }))
}

fn check(expr: &str, vals: serde_json::Value, expected: bool) {
    let mut vals = values(vals);
    vals.retain(|k, _| expr.contains(k.as_str()));
    let mut nm = names(&[("#d", "with.dot"), ("#s", "status")]);
    nm.retain(|k, _| expr.contains(k.as_str()));
    let c = parse_condition(expr, &nm, &vals).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert_eq!(c.eval(&the_item()), expected, "{expr}");
}

#[test]
fn comparators() {
    check("n = :v", json!({":v": {"N": "10.0"}}), true);
    check("n <> :v", json!({":v": {"N": "10"}}), false);
    check("n < :v", json!({":v": {"N": "11"}}), true);
    check("n <= :v", json!({":v": {"N": "10"}}), true);
    check("n > :v", json!({":v": {"N": "9.99"}}), true);
    check("n >= :v", json!({":v": {"N": "10.01"}}), false);
    check("s < :v", json!({":v": {"S": "hellp"}}), true);
    check("b > :v", json!({":v": {"B": "AAE="}}), true);
    // Different types are not comparable: false, not an error.
    check("n < :v", json!({":v": {"S": "zzz"}}), false);
    check("n = :v", json!({":v": {"S": "10"}}), false);
    // A absent attribute is unequal to everything.
    check("absent <> :v", json!({":v": {"N": "1"}}), true);
    check("absent = :v", json!({":v": {"N": "1"}}), false);
    check("absent < :v", json!({":v": {"N": "1"}}), false);
    // Sets compare as sets.
    check("ss = :v", json!({":v": {"SS": ["b", "a"]}}), true);
    check(":v = :v", json!({":v": {"N": "1"}}), true);
}

#[test]
fn between_and_in() {
    check(
        "n BETWEEN :a AND :b",
        json!({":a": {"N": "1"}, ":b": {"N": "10"}}),
        true,
    );
    check(
        "n between :a and :b",
        json!({":a": {"N": "11"}, ":b": {"N": "20"}}),
        false,
    );
    check(
        "s BETWEEN :a AND :b",
        json!({":a": {"N": "1"}, ":b": {"N": "20"}}),
        false,
    );
    check(
        "n IN (:a, :b)",
        json!({":a": {"N": "1"}, ":b": {"N": "10"}}),
        true,
    );
    check("s IN (:a)", json!({":a": {"S": "nope"}}), false);
}

#[test]
fn functions() {
    check("attribute_exists(m.nest.v)", json!({}), true);
    check("attribute_exists(m.nest.x)", json!({}), false);
    check("attribute_not_exists(nothing)", json!({}), true);
    check("attribute_type(ns, :t)", json!({":t": {"S": "NS"}}), true);
    check("attribute_type(z, :t)", json!({":t": {"S": "NULL"}}), true);
    check("attribute_type(t, :t)", json!({":t": {"S": "S"}}), false);
    // A value first, as DynamoDB allows (Alternator's test_update_condition_attribute_type).
    check(
        "attribute_type(:v, :t)",
        json!({":v": {"N": "0"}, ":t": {"S": "N"}}),
        true,
    );
    check(
        "attribute_type(:v, :t)",
        json!({":v": {"N": "0"}, ":t": {"S": "S"}}),
        false,
    );
    check(
        "attribute_type(size(s), :t)",
        json!({":t": {"S": "N"}}),
        true,
    );
    check("begins_with(pk, :p)", json!({":p": {"S": "USER#"}}), true);
    check("begins_with(b, :p)", json!({":p": {"B": "AAE="}}), true);
    check("begins_with(n, :p)", json!({":p": {"S": "1"}}), false);
    check("contains(s, :p)", json!({":p": {"S": "ell"}}), true);
    check("contains(ss, :p)", json!({":p": {"S": "b"}}), true);
    check("contains(ns, :p)", json!({":p": {"N": "2.50"}}), true);
    check("contains(l, :p)", json!({":p": {"S": "x"}}), true);
    check("contains(ss, :p)", json!({":p": {"S": "c"}}), false);
    check("size(s) = :v", json!({":v": {"N": "5"}}), true);
    check("size(ss) > :v", json!({":v": {"N": "1"}}), true);
    check("size(m) = :v", json!({":v": {"N": "2"}}), true);
    check("size(l) = :v", json!({":v": {"N": "3"}}), true);
    check("size(b) = :v", json!({":v": {"N": "3"}}), true);
    check("size(n) = :v", json!({":v": {"N": "2"}}), false);
}

#[test]
fn paths_into_maps_and_lists() {
    check("l[2].deep = :v", json!({":v": {"N": "7"}}), true);
    check("l[0] = :v", json!({":v": {"N": "1"}}), true);
    check("l[9] = :v", json!({":v": {"N": "1"}}), false);
    check("m.#s = :v", json!({":v": {"N": "3"}}), false);
    check("m.cnt = :v", json!({":v": {"N": "3"}}), true);
    check("#d = :v", json!({":v": {"S": "dotted"}}), true);
    check("s[0] = :v", json!({":v": {"S": "h"}}), false);
}

#[test]
fn precedence() {
    let t = json!({":t": {"N": "10"}, ":f": {"N": "0"}});
    // AND binds tighter than OR.
    check("n = :t OR n = :f AND n = :f", t.clone(), true);
    check("(n = :t OR n = :f) AND n = :f", t.clone(), false);
    // NOT binds tighter than AND.
    check("NOT n = :f AND n = :t", t.clone(), true);
    check("NOT (n = :t AND n = :f)", t.clone(), true);
    check("not not n = :t", t.clone(), true);
    check("n = :f OR NOT n = :f", t, true);
}
