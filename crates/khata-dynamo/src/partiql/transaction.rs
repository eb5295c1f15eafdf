//! ExecuteTransaction: up to 100 statements run as one DynamoDB transaction.
//!
//! Writes (INSERT, UPDATE, DELETE, and `EXISTS(SELECT ...)` as a condition check) become one
//! TransactWriteItems; reads (SELECT, each naming a whole key) one TransactGetItems. So the
//! transaction is all or nothing on khata's transaction machinery ([`crate::transact`]):
//! `TransactionCanceledException` with one `CancellationReasons` entry per statement (an
//! INSERT's failed existence condition reads `ValidationError` "Duplicate primary key exists
//! in table", as DynamoDB Local maps it), and
//! `ClientRequestToken` idempotency (the same statements translate to the same request). A
//! transaction may not mix reads and writes.

use serde_json::{Map, Value, json};

use super::parser::Statement;
use super::translate::{self, Printer};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::ops::input::{self, Object};
use crate::ops::{Operations, RequestInfo};

/// The most statements a transaction holds.
pub const MAX_STATEMENTS: usize = 100;

/// ExecuteTransaction.
pub async fn execute_transaction(
    ops: &Operations,
    body: &Object,
    info: &RequestInfo,
) -> Result<Value> {
    let statements = super::statement_list(
        body,
        "TransactStatements",
        "transactStatements",
        MAX_STATEMENTS,
    )?;
    let mut parsed = Vec::with_capacity(statements.len());
    for (i, s) in statements.iter().enumerate() {
        parsed.push(super::statement_of(
            s,
            &format!("transactStatements.{}.member.", i + 1),
        )?);
    }
    let reads = parsed
        .iter()
        .filter(|s| matches!(s, Statement::Select(_)))
        .count();
    if reads > 0 && reads < parsed.len() {
        return Err(DynamoError::validation(
            "Transactions must consist of either read statements or write statements, not both",
        ));
    }
    let mut req = Map::new();
    for member in ["ReturnConsumedCapacity", "ClientRequestToken"] {
        if let Some(v) = input::string(body, member)? {
            req.insert(member.into(), json!(v));
        }
    }
    if reads > 0 {
        let mut items = Vec::with_capacity(parsed.len());
        for s in &parsed {
            let Statement::Select(select) = s else {
                continue;
            };
            items.push(json!({ "Get": get(ops, select)? }));
        }
        req.remove("ClientRequestToken");
        req.insert("TransactItems".into(), Value::Array(items));
        return super::call(ops, "TransactGetItems", req, info).await;
    }

    let mut items = Vec::with_capacity(parsed.len());
    for (s, member) in parsed.iter().zip(&statements) {
        let on_failure = input::string(member, "ReturnValuesOnConditionCheckFailure")?;
        let (kind, mut action) = match s {
            Statement::Exists(select) => ("ConditionCheck", condition_check(ops, select)?),
            write => {
                let (operation, mut action) = super::write_request(ops, write)?;
                if action.remove("ReturnValues").is_some() {
                    return Err(DynamoError::validation(
                        "RETURNING clause is not supported in ExecuteTransaction.",
                    ));
                }
                let kind = match operation {
                    "PutItem" => "Put",
                    "UpdateItem" => "Update",
                    _ => "Delete",
                };
                (kind, action)
            }
        };
        if let Some(f) = on_failure {
            action.insert("ReturnValuesOnConditionCheckFailure".into(), json!(f));
        }
        let mut item = Map::new();
        item.insert(kind.into(), Value::Object(action));
        items.push(Value::Object(item));
    }
    req.insert("TransactItems".into(), Value::Array(items));
    match super::call(ops, "TransactWriteItems", req, info).await {
        Ok(mut answer) => {
            // DynamoDB answers a transaction of writes with an empty `Responses` too.
            let mut out = Map::new();
            out.insert("Responses".into(), Value::Array(Vec::new()));
            if let Some(c) = answer.get_mut("ConsumedCapacity").map(Value::take) {
                out.insert("ConsumedCapacity".into(), c);
            }
            Ok(Value::Object(out))
        }
        Err(e) if e.kind == ErrorKind::TransactionCanceled => Err(with_duplicates(e, &parsed)),
        Err(e) => Err(e),
    }
}

/// A transaction's SELECT as TransactGetItems' `Get`: the whole key, nothing else.
fn get(ops: &Operations, select: &super::parser::Select) -> Result<Value> {
    if select.from.index.is_some() {
        return Err(DynamoError::validation(
            "Reads on indices are not supported within transactions.",
        ));
    }
    let keys = super::keys_of(ops, &select.from.table, None)?;
    let split = translate::split_key(select.filter.as_ref(), &keys.hash, keys.range.as_deref())
        .filter(|s| s.rest.is_empty())
        .ok_or_else(|| {
            DynamoError::validation(
                "Where clause does not contain a mandatory equality on all key attributes",
            )
        })?;
    let mut get = Map::new();
    get.insert("TableName".into(), json!(select.from.table));
    get.insert("Key".into(), Value::Object(split.key));
    if let Some(paths) = &select.projection {
        let mut printer = Printer::default();
        let printed: Vec<String> = paths.iter().map(|p| printer.path(p)).collect();
        get.insert("ProjectionExpression".into(), json!(printed.join(", ")));
        printer.finish(&mut get);
    }
    Ok(Value::Object(get))
}

/// `EXISTS(SELECT ... WHERE <whole key> AND <condition>)` as a `ConditionCheck`.
fn condition_check(ops: &Operations, select: &super::parser::Select) -> Result<Map<String, Value>> {
    let mut printer = Printer::default();
    let (key, condition) = super::keyed(
        ops,
        &mut printer,
        &select.from.table,
        select.filter.as_ref(),
        true,
    )?;
    let mut check = Map::new();
    check.insert("TableName".into(), json!(select.from.table));
    check.insert("Key".into(), Value::Object(key));
    check.insert(
        "ConditionExpression".into(),
        json!(condition.unwrap_or_default()),
    );
    printer.finish(&mut check);
    Ok(check)
}

/// The cancellation with an INSERT's failed condition said as DynamoDB does: a
/// `ValidationError` reason "Duplicate primary key exists in table".
fn with_duplicates(mut e: DynamoError, statements: &[Statement]) -> DynamoError {
    let Some(reasons) = e.reasons.as_deref_mut().and_then(Value::as_array_mut) else {
        return e;
    };
    for (reason, s) in reasons.iter_mut().zip(statements) {
        if matches!(s, Statement::Insert(_))
            && reason.get("Code").and_then(Value::as_str) == Some("ConditionalCheckFailed")
        {
            let mut r = Map::new();
            r.insert("Code".into(), json!("ValidationError"));
            r.insert(
                "Message".into(),
                json!("Duplicate primary key exists in table"),
            );
            if let Some(item) = reason.get("Item") {
                r.insert("Item".into(), item.clone());
            }
            *reason = Value::Object(r);
        }
    }
    let codes: Vec<&str> = reasons
        .iter()
        .map(|r| r.get("Code").and_then(Value::as_str).unwrap_or("None"))
        .collect();
    e.message = Some(format!(
        "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
        codes.join(", ")
    ));
    e
}
