//! Update expressions applied to items: SET (arithmetic, if_not_exists, list_append, list
//! and map paths), REMOVE, ADD, DELETE, the touched attributes, and runtime type errors.
mod common;

use common::{item, names, values};
use khata_dynamo::expr::parse_update;
use khata_dynamo::value::Item;
use serde_json::json;

fn base() -> Item {
    item(json!({
        "n": {"N": "10"},
        "s": {"S": "x"},
        "l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]},
        "m": {"M": {"k": {"S": "v"}}},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2"]}
    }))
}

fn apply(expr: &str, vals: serde_json::Value) -> Result<(serde_json::Value, Vec<String>), String> {
    let u = parse_update(expr, &names(&[]), &values(vals)).map_err(|e| e.0)?;
    let (new, changed) = u.apply(&base(), true).map_err(|e| e.0)?;
    Ok((new.to_json(), changed.into_iter().collect()))
}

#[test]
fn set_and_arithmetic() {
    let (j, changed) = apply("SET n = n + :one, a = :one", json!({":one": {"N": "1"}})).unwrap();
    assert_eq!(j["n"], json!({"N": "11"}));
    assert_eq!(j["a"], json!({"N": "1"}));
    assert_eq!(changed, ["a", "n"]);
    let (j, _) = apply("SET n = :one - n", json!({":one": {"N": "1.5"}})).unwrap();
    assert_eq!(j["n"], json!({"N": "-8.5"}));
    let (j, _) = apply(
        "SET c = if_not_exists(c, :z) + :one, n = if_not_exists(n, :z)",
        json!({":z": {"N": "0"}, ":one": {"N": "1"}}),
    )
    .unwrap();
    assert_eq!(j["c"], json!({"N": "1"}));
    assert_eq!(j["n"], json!({"N": "10"}));
    // Right-hand sides read the old item: a swap works.
    let (j, _) = apply("SET n = s, s = n", json!({})).unwrap();
    assert_eq!(
        (j["n"].clone(), j["s"].clone()),
        (json!({"S": "x"}), json!({"N": "10"}))
    );
}

#[test]
fn lists_and_maps() {
    let (j, _) = apply(
        "SET l = list_append(l, :v)",
        json!({":v": {"L": [{"N": "4"}]}}),
    )
    .unwrap();
    assert_eq!(j["l"]["L"].as_array().unwrap().len(), 5);
    let (j, _) = apply(
        "SET l = list_append(:v, l)",
        json!({":v": {"L": [{"S": "first"}]}}),
    )
    .unwrap();
    assert_eq!(j["l"]["L"][0], json!({"S": "first"}));
    let (j, _) = apply("SET l[1] = :v, l[99] = :v", json!({":v": {"S": "x"}})).unwrap();
    assert_eq!(j["l"]["L"][1], json!({"S": "x"}));
    assert_eq!(j["l"]["L"][4], json!({"S": "x"}));
    // Several SETs past the end append in index order, not as written (Alternator's
    // test_nested_attribute_update_array_out_of_bounds, checked against DynamoDB).
    let (j, _) = apply(
        "SET l[84] = :a, l[37] = :b, l[17] = :c, l[50] = :d",
        json!({":a": {"S": "a"}, ":b": {"S": "b"}, ":c": {"S": "c"}, ":d": {"S": "d"}}),
    )
    .unwrap();
    let appended: Vec<_> = j["l"]["L"].as_array().unwrap()[4..].to_vec();
    assert_eq!(
        appended,
        [
            json!({"S": "c"}),
            json!({"S": "b"}),
            json!({"S": "d"}),
            json!({"S": "a"})
        ]
    );
    let (j, _) = apply("REMOVE l[0], l[2]", json!({})).unwrap();
    assert_eq!(j["l"], json!({"L": [{"N": "1"}, {"N": "3"}]}));
    let (j, changed) = apply("SET m.k2 = :v REMOVE m.k", json!({":v": {"S": "w"}})).unwrap();
    assert_eq!(j["m"], json!({"M": {"k2": {"S": "w"}}}));
    assert_eq!(changed, ["m"]);
    assert_eq!(
        apply("SET nothing.k = :v", json!({":v": {"S": "w"}})).unwrap_err(),
        "The document path provided in the update expression is invalid for update"
    );
    assert_eq!(
        apply("SET s[0] = :v", json!({":v": {"S": "w"}})).unwrap_err(),
        "The document path provided in the update expression is invalid for update"
    );
    let (j, _) = apply("REMOVE nothing, m.nothing, l[17]", json!({})).unwrap();
    assert_eq!(j, base().to_json());
}

/// A REMOVE or DELETE through a path the item lacks is refused, and nothing of the update is
/// applied, unless the item does not exist (Alternator's test_nested_attribute_update_bad_path_dot
/// and _array, test_nested_attribute_remove_from_missing_item, checked against DynamoDB).
#[test]
fn remove_and_delete_through_missing_paths() {
    let bad_path = "The document path provided in the update expression is invalid for update";
    let ss = json!({":ss": {"SS": ["x"]}});
    for (expr, vals) in [
        ("REMOVE nothing.c, s", json!({})),
        ("REMOVE nothing[0]", json!({})),
        ("REMOVE m.nothing.deeper", json!({})),
        ("REMOVE s.c", json!({})),
        ("REMOVE s[0]", json!({})),
        ("REMOVE l.c", json!({})),
        ("REMOVE m[0]", json!({})),
        ("DELETE nothing.c :ss", ss.clone()),
        ("DELETE s[0] :ss", ss.clone()),
    ] {
        assert_eq!(apply(expr, vals).unwrap_err(), bad_path, "{expr}");
    }
    // On an item that does not exist (only its key is known) they remove nothing.
    let key = item(json!({"pk": {"S": "k"}}));
    for (expr, vals) in [
        ("REMOVE x.y", json!({})),
        ("REMOVE x[0]", json!({})),
        ("DELETE x.y :ss", ss.clone()),
    ] {
        let u = parse_update(expr, &names(&[]), &values(vals)).unwrap();
        let (new, _) = u.apply(&key, false).unwrap();
        assert_eq!(new, key, "{expr}");
        assert_eq!(
            u.apply(&key, true).unwrap_err().0,
            bad_path,
            "{expr} on an existing item"
        );
    }
    // A SET through a missing path is refused on a missing item too.
    let u = parse_update(
        "SET x.y = :v",
        &names(&[]),
        &values(json!({":v": {"N": "1"}})),
    )
    .unwrap();
    assert_eq!(u.apply(&key, false).unwrap_err().0, bad_path);
}

#[test]
fn nested_functions() {
    let (j, _) = apply(
        "SET l = list_append(if_not_exists(nothing, :v), :v), c = if_not_exists(c, if_not_exists(n, :z))",
        json!({":v": {"L": [{"S": "x"}]}, ":z": {"N": "0"}}),
    )
    .unwrap();
    assert_eq!(j["l"], json!({"L": [{"S": "x"}, {"S": "x"}]}));
    assert_eq!(j["c"], json!({"N": "10"}));
}

#[test]
fn add_and_delete() {
    let (j, _) = apply("ADD n :v, c :v", json!({":v": {"N": "-3"}})).unwrap();
    assert_eq!(
        (j["n"].clone(), j["c"].clone()),
        (json!({"N": "7"}), json!({"N": "-3"}))
    );
    let (j, _) = apply(
        "ADD ss :v, ns :w",
        json!({":v": {"SS": ["b", "c"]}, ":w": {"NS": ["3"]}}),
    )
    .unwrap();
    assert_eq!(j["ss"], json!({"SS": ["a", "b", "c"]}));
    assert_eq!(j["ns"], json!({"NS": ["1", "2", "3"]}));
    let (j, _) = apply("DELETE ss :v", json!({":v": {"SS": ["a"]}})).unwrap();
    assert_eq!(j["ss"], json!({"SS": ["b"]}));
    let (j, changed) = apply(
        "DELETE ss :v, elsewhere :v",
        json!({":v": {"SS": ["a", "b"]}}),
    )
    .unwrap();
    assert!(j.get("ss").is_none() && j.get("elsewhere").is_none());
    assert_eq!(changed, ["elsewhere", "ss"]);
}

#[test]
fn type_errors() {
    let bad = "An operand in the update expression has an incorrect data type";
    assert_eq!(
        apply("SET s = s + :v", json!({":v": {"N": "1"}})).unwrap_err(),
        bad
    );
    assert_eq!(
        apply("ADD s :v", json!({":v": {"N": "1"}})).unwrap_err(),
        bad
    );
    assert_eq!(
        apply("ADD ss :v", json!({":v": {"NS": ["1"]}})).unwrap_err(),
        bad
    );
    assert_eq!(
        apply("DELETE n :v", json!({":v": {"NS": ["1"]}})).unwrap_err(),
        bad
    );
    assert_eq!(
        apply("SET l = list_append(s, :v)", json!({":v": {"L": []}})).unwrap_err(),
        bad
    );
    assert_eq!(
        apply("SET a = nothing", json!({})).unwrap_err(),
        "The provided expression refers to an attribute that does not exist in the item"
    );
    assert!(
        apply(
            "SET n = :a + :b",
            json!({":a": {"N": "9e125"}, ":b": {"N": "9e125"}})
        )
        .unwrap_err()
        .starts_with("Number overflow")
    );
}

#[test]
fn updated_paths_projection() {
    let u = parse_update(
        "SET m.k2 = :v, n = :v",
        &names(&[]),
        &values(json!({":v": {"N": "1"}})),
    )
    .unwrap();
    let (new, _) = u.apply(&base(), true).unwrap();
    let updated_new = u.updated_paths().apply(&new).to_json();
    assert_eq!(
        updated_new,
        json!({"m": {"M": {"k2": {"N": "1"}}}, "n": {"N": "1"}})
    );
    assert_eq!(
        u.updated_paths().apply(&base()).to_json(),
        json!({"n": {"N": "10"}})
    );
}
