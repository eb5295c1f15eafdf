//! Each of DynamoDB's ValidationException messages for expressions.
mod common;

use common::{names, values};
use khata_dynamo::expr::{parse_condition, parse_key_condition, parse_projection, parse_update};
use serde_json::json;

fn cond_err(expr: &str, nm: &[(&str, &str)], vals: serde_json::Value) -> String {
    parse_condition(expr, &names(nm), &values(vals))
        .unwrap_err()
        .0
}

fn update_err(expr: &str, vals: serde_json::Value) -> String {
    parse_update(expr, &names(&[]), &values(vals))
        .unwrap_err()
        .0
}

#[test]
fn syntax_errors() {
    assert_eq!(
        cond_err("foo", &[], json!({})),
        r#"Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "foo""#
    );
    assert_eq!(
        cond_err("a = = :v", &[], json!({":v": {"N": "1"}})),
        r#"Invalid ConditionExpression: Syntax error; token: "=", near: "= = :v""#
    );
    assert_eq!(
        update_err("SET _123 = :v", json!({":v": {"N": "1"}})),
        r#"Invalid UpdateExpression: Syntax error; token: "_", near: "SET _123""#
    );
    assert!(
        cond_err("a != :v", &[], json!({":v": {"N": "1"}})).contains("Syntax error; token: \"!\"")
    );
    assert!(cond_err("a = :v AND", &[], json!({":v": {"N": "1"}})).contains("token: \"<EOF>\""));
}

#[test]
fn placeholders() {
    assert_eq!(
        cond_err("a = :v", &[], json!({})),
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :v"
    );
    assert_eq!(
        cond_err("#a = :v", &[], json!({":v": {"N": "1"}})),
        "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #a"
    );
    assert_eq!(
        cond_err("a = :v", &[], json!({":v": {"N": "1"}, ":w": {"N": "2"}})),
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}"
    );
    assert_eq!(
        cond_err("a = :v", &[("#x", "x")], json!({":v": {"N": "1"}})),
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}"
    );
}

#[test]
fn reserved_words() {
    assert_eq!(
        cond_err("status = :v", &[], json!({":v": {"N": "1"}})),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status"
    );
    assert_eq!(
        cond_err("a.Size = :v", &[], json!({":v": {"N": "1"}})),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: Size"
    );
    assert!(
        parse_condition(
            "#s = :v",
            &names(&[("#s", "status")]),
            &values(json!({":v": {"N": "1"}}))
        )
        .is_ok()
    );
}

#[test]
fn functions_and_operands() {
    let v = json!({":v": {"N": "1"}});
    assert_eq!(
        cond_err("foo(a)", &[], json!({})),
        "Invalid ConditionExpression: Invalid function name; function: foo"
    );
    assert_eq!(
        cond_err("begins_with(a)", &[], json!({})),
        "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 1"
    );
    assert_eq!(
        cond_err("begins_with(a, :v)", &[], v.clone()),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"
    );
    assert_eq!(
        cond_err("attribute_exists(:v)", &[], v.clone()),
        "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists"
    );
    assert_eq!(
        cond_err("attribute_type(a, :t)", &[], json!({":t": {"S": "X"}})),
        "Invalid ConditionExpression: Invalid attribute type name found; type: X, valid types: { B,NULL,SS,BOOL,L,BS,N,NS,S,M }"
    );
    // The type must be a value (Alternator's test_update_condition_attribute_type_second_arg;
    // the operand types as dynalite gives them).
    assert_eq!(
        cond_err("attribute_type(a, b)", &[], json!({})),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: attribute_type, operand type: {NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
    );
    assert_eq!(
        cond_err("attribute_type(a, size(b))", &[], json!({})),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"
    );
    assert_eq!(
        cond_err("attribute_type(a.b[1], a.b[1])", &[], json!({})),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: attribute_type, first operand: [a, b, [1]]"
    );
    assert_eq!(
        cond_err("size(a)", &[], json!({})),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"
    );
    assert!(
        cond_err(
            "a BETWEEN :h AND :l",
            &[],
            json!({":l": {"N": "1"}, ":h": {"N": "5"}})
        )
        .contains(
            "The BETWEEN operator requires upper bound to be greater than or equal to lower bound"
        )
    );
}

#[test]
fn limits() {
    let many: Vec<String> = (0..101).map(|i| format!(":v{i}")).collect();
    let vals: serde_json::Map<String, serde_json::Value> = many
        .iter()
        .map(|k| (k.clone(), json!({"N": "1"})))
        .collect();
    let expr = format!("a IN ({})", many.join(", "));
    assert_eq!(
        cond_err(&expr, &[], serde_json::Value::Object(vals)),
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101"
    );
    let long = format!("a = :v {}", " ".repeat(4100));
    assert_eq!(
        cond_err(&long, &[], json!({":v": {"N": "1"}})),
        format!(
            "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: {}",
            long.len()
        )
    );
    assert_eq!(
        cond_err("  ", &[], json!({})),
        "Invalid ConditionExpression: The expression can not be empty;"
    );
    let deep = format!("a{} = :v", ".b".repeat(32));
    assert!(
        cond_err(&deep, &[], json!({":v": {"N": "1"}}))
            .contains("The document path has too many nesting levels; nesting levels: 33")
    );
    let nested = format!("{}a = :v{}", "(".repeat(500), ")".repeat(500));
    assert!(cond_err(&nested, &[], json!({":v": {"N": "1"}})).contains("redundant parentheses"));
    let nested = format!("{}a = :v{}", "(".repeat(2040), ")".repeat(2040));
    assert!(cond_err(&nested, &[], json!({":v": {"N": "1"}})).contains("redundant parentheses"));
    let nested = format!("a < {}b{}", "size(".repeat(40), ")".repeat(40));
    assert!(cond_err(&nested, &[], json!({})).contains("nested levels"));
}

/// DynamoDB limits a condition to 300 operators, not its nesting: `a<b or (a<b or (...))` 149
/// deep (299 operators) is taken, 150 deep is refused, and so are 301 NOTs (Alternator's
/// test_deeply_nested_expression_2 and _4, checked against DynamoDB).
#[test]
fn operators_not_nesting_are_limited() {
    let v = json!({});
    let chain = |depth: usize| format!("a<b {}{}", "or (a<b ".repeat(depth), ")".repeat(depth));
    assert!(parse_condition(&chain(149), &names(&[]), &values(v.clone())).is_ok());
    assert_eq!(
        cond_err(&chain(150), &[], v.clone()),
        "Invalid ConditionExpression: The expression contains too many operators; operator count: 301"
    );
    assert!(
        parse_condition(
            &format!("{}a<b", "not ".repeat(299)),
            &names(&[]),
            &values(v.clone())
        )
        .is_ok()
    );
    assert!(
        cond_err(&format!("{}a<b", "not ".repeat(1000)), &[], v.clone())
            .contains("too many operators; operator count: 301")
    );
    // NOTs and parentheses nested 99 deep, 298 operators.
    let deep = format!("{}a<b{}", "NOT (a<b AND ".repeat(99), ")".repeat(99));
    assert!(parse_condition(&deep, &names(&[]), &values(v)).is_ok());
}

/// The deepest input an expression's 4096 bytes can nest is refused without exhausting even a
/// small stack (a request's task runs on a 2 MiB tokio worker stack).
#[test]
fn hostile_nesting_is_refused_within_a_small_stack() {
    let inputs = [
        "(".repeat(4095),
        format!("{}a<b{}", "(".repeat(2046), ")".repeat(2046)),
        format!("a < {}b{}", "size(".repeat(680), ")".repeat(680)),
        format!("{}a<b", "NOT (".repeat(800)),
    ];
    let parsed = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            inputs
                .iter()
                .map(|i| parse_condition(i, &names(&[]), &values(json!({}))).is_err())
                .collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(parsed, [true; 4]);
    let updates = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let text = format!(
                "SET a = {}b{}",
                "if_not_exists(c, list_append(".repeat(300),
                "))".repeat(300)
            );
            parse_update(&text, &names(&[]), &values(json!({}))).is_err()
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(updates);
}

#[test]
fn update_clauses_and_paths() {
    let v = json!({":v": {"N": "1"}});
    assert_eq!(
        update_err("SET a = :v SET b = :v", v.clone()),
        "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"
    );
    assert_eq!(
        update_err("SET a.b = :v REMOVE a", v.clone()),
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a]"
    );
    assert_eq!(
        update_err("SET a[1] = :v, a.b = :v", v.clone()),
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [1]], path two: [a, b]"
    );
    assert_eq!(
        update_err("ADD a :s", json!({":s": {"S": "x"}})),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"
    );
    assert_eq!(
        update_err("DELETE a :v", v.clone()),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER"
    );
    assert_eq!(
        update_err("SET a = list_append(a, :v)", v.clone()),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: N"
    );
    assert_eq!(
        update_err("SET a = size(b)", json!({})),
        "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"
    );
    assert_eq!(
        update_err("SET a = foo(b)", json!({})),
        "Invalid UpdateExpression: Invalid function name; function: foo"
    );
    assert!(update_err("SET a = :v + :v + :v", v.clone()).contains("Syntax error"));
    // A function's arguments are operands, never sums
    // (Alternator's test_update_expression_function_plus_nesting).
    assert_eq!(
        update_err("SET c = if_not_exists(c, :v+:v)", v.clone()),
        "Invalid UpdateExpression: Syntax error; token: \"+\", near: \":v+:v\""
    );
    assert!(
        update_err("SET c = list_append(:l, :l - :l)", json!({":l": {"L": []}}))
            .contains("Syntax error; token: \"-\"")
    );
    // No list_append inside another (Alternator's test_update_expression_function_nesting).
    let l = json!({":l": {"L": []}});
    for expr in [
        "SET a = list_append(list_append(:l, :l), :l)",
        "SET a = list_append(:l, list_append(:l, :l))",
        "SET a = list_append(list_append(list_append(:l, :l), :l), :l)",
    ] {
        assert_eq!(
            update_err(expr, l.clone()),
            "Invalid UpdateExpression: The function is not allowed to be used this way in an expression; function: list_append",
            "{expr}"
        );
    }
}

#[test]
fn projection_overlap() {
    assert_eq!(
        parse_projection("a, a.b", &names(&[])).unwrap_err().0,
        "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"
    );
}

#[test]
fn key_condition_shapes() {
    let kc = |e: &str, v: serde_json::Value| {
        parse_key_condition(e, &names(&[]), &values(v), "p", Some("c"))
            .map(|_| ())
            .map_err(|e| e.0)
    };
    let pv = json!({":p": {"S": "x"}, ":c": {"N": "3"}});
    assert!(kc("p = :p", json!({":p": {"S": "x"}})).is_ok());
    assert!(kc("((c = :c) AND (p = :p))", pv.clone()).is_ok());
    assert!(kc(":p = p AND :c < c", pv.clone()).is_ok());
    assert_eq!(
        kc("p = :p AND p = :p", json!({":p": {"S": "x"}})).unwrap_err(),
        "KeyConditionExpressions must only contain one condition per key"
    );
    assert_eq!(
        kc("p < :p", json!({":p": {"S": "x"}})).unwrap_err(),
        "Query key condition not supported"
    );
    assert_eq!(
        kc("c = :c", json!({":c": {"N": "3"}})).unwrap_err(),
        "Query condition missed key schema element: p"
    );
    assert_eq!(
        kc("c = :c OR p = :p", pv.clone()).unwrap_err(),
        "Invalid operator used in KeyConditionExpression: OR"
    );
    assert_eq!(
        kc("NOT c = :c AND p = :p", pv.clone()).unwrap_err(),
        "Invalid operator used in KeyConditionExpression: NOT"
    );
    assert_eq!(
        kc("p = :p AND c <> :c", pv.clone()).unwrap_err(),
        "Invalid operator used in KeyConditionExpression: <>"
    );
    assert_eq!(
        kc("p = :p AND c IN (:c)", pv.clone()).unwrap_err(),
        "Invalid operator used in KeyConditionExpression: IN"
    );
    assert_eq!(
        kc("p = :p AND attribute_exists(c)", json!({":p": {"S": "x"}})).unwrap_err(),
        "Invalid operator used in KeyConditionExpression: attribute_exists"
    );
    assert!(
        kc("p = :p AND dog(c, :c)", pv)
            .unwrap_err()
            .contains("Invalid function name; function: dog")
    );
    assert!(kc("", json!({})).unwrap_err().contains("empty"));
}

/// The checks DynamoDB makes of a condition's operands before reading anything: distinct
/// operands, orderable values, BETWEEN bounds of one type, grouping and function placement.
#[test]
fn operand_checks() {
    let n1 = json!({":a": {"N": "1"}, ":b": {"S": "x"}});
    assert_eq!(
        cond_err("n BETWEEN :a AND :b", &[], n1.clone()),
        "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:x}"
    );
    assert_eq!(
        cond_err("n < :l", &[], json!({":l": {"L": [{"N": "1"}]}})),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: <, operand type: L"
    );
    assert_eq!(
        cond_err(
            "n BETWEEN :a AND :b",
            &[],
            json!({":a": {"BOOL": false}, ":b": {"BOOL": true}})
        ),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: BOOL"
    );
    // `=` and `<>` compare any types.
    parse_condition(
        "n = :l AND n <> :m",
        &names(&[]),
        &values(json!({":l": {"L": []}, ":m": {"M": {}}})),
    )
    .unwrap();
    assert_eq!(
        cond_err("#n = n", &[("#n", "n")], json!({})),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [n]"
    );
    assert_eq!(
        cond_err("contains(a.b, a.b)", &[], json!({})),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: contains, first operand: [a, b]"
    );
    assert_eq!(
        cond_err("((n = :a))", &[], json!({":a": {"N": "1"}})),
        "Invalid ConditionExpression: The expression has redundant parentheses;"
    );
    // One group around a condition, or groups side by side, are fine.
    parse_condition(
        "(n = :a) AND ((m = :a) OR (m = :b))",
        &names(&[]),
        &values(n1.clone()),
    )
    .unwrap();
    parse_condition("((n = :a) AND m = :b)", &names(&[]), &values(n1)).unwrap();
    assert_eq!(
        cond_err(
            "begins_with(s, :b) = :a",
            &[],
            json!({":a": {"BOOL": true}, ":b": {"S": "x"}})
        ),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: begins_with"
    );
    assert_eq!(
        cond_err("if_not_exists(n, :v) = :v", &[], json!({":v": {"N": "1"}})),
        "Invalid ConditionExpression: The function is not allowed in a condition expression; function: if_not_exists"
    );
}
