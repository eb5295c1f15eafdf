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

/// A random tree of AND, OR and NOT over true and false comparisons.
#[derive(Debug, Clone)]
enum Tree {
    Leaf(bool),
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

impl Tree {
    fn value(&self) -> bool {
        match self {
            Tree::Leaf(b) => *b,
            Tree::Not(t) => !t.value(),
            Tree::And(a, b) => a.value() && b.value(),
            Tree::Or(a, b) => a.value() || b.value(),
        }
    }

    /// How tightly the tree's top operator binds (a leaf tightest).
    fn binding(&self) -> u8 {
        match self {
            Tree::Leaf(_) => 4,
            Tree::Not(_) => 3,
            Tree::And(..) => 2,
            Tree::Or(..) => 1,
        }
    }

    /// The text with only the parentheses precedence needs (`extra`: around every operand).
    fn text(&self, extra: bool) -> String {
        let wrap = |t: &Tree, needed: bool| {
            let inner = t.text(extra);
            if (needed || extra) && !matches!(t, Tree::Leaf(_)) {
                format!("({inner})")
            } else {
                inner
            }
        };
        match self {
            Tree::Leaf(true) => "n = :t".into(),
            Tree::Leaf(false) => "n = :f".into(),
            Tree::Not(t) => format!("NOT {}", wrap(t, t.binding() < 3)),
            // Left operands of the same operator need none (left associative); right ones do.
            Tree::And(a, b) => format!(
                "{} AND {}",
                wrap(a, a.binding() < 2),
                wrap(b, b.binding() <= 2)
            ),
            Tree::Or(a, b) => format!(
                "{} OR {}",
                wrap(a, a.binding() < 1),
                wrap(b, b.binding() <= 1)
            ),
        }
    }
}

fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
    use proptest::prelude::*;
    any::<bool>()
        .prop_map(Tree::Leaf)
        .prop_recursive(6, 40, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| Tree::Not(Box::new(t))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Tree::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner).prop_map(|(a, b)| Tree::Or(Box::new(a), Box::new(b))),
            ]
        })
}

proptest::proptest! {
    /// NOT, AND, OR and parentheses parse to what precedence says, with as few parentheses as
    /// it needs and with parentheses around every operand.
    #[test]
    fn precedence_of_random_conditions(t in tree()) {
        let vals = json!({":t": {"N": "10"}, ":f": {"N": "11"}});
        for extra in [false, true] {
            let text = t.text(extra);
            let mut vals = values(vals.clone());
            vals.retain(|k, _| text.contains(k.as_str()));
            let c = parse_condition(&text, &names(&[]), &vals)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            proptest::prop_assert_eq!(c.eval(&the_item()), t.value(), "{}", text);
        }
    }
}
