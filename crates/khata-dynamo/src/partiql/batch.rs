//! BatchExecuteStatement: up to 25 statements, all reads or all writes, each answered on its
//! own in `Responses` (in order) with its item or its `Error {Code, Message}`.
//!
//! A read must name a whole primary key with equalities (it is a key lookup: a Query of that
//! one item, its other terms a filter, its projection kept); a write is what ExecuteStatement
//! does with it. A statement that fails does not fail the others, as in DynamoDB; a request
//! that mixes reads and writes, or holds no statement or more than 25, fails whole.
//! `ConsumedCapacity` is one entry per table, the statements' units added.

use serde_json::{Map, Value, json};

use super::parser::Statement;
use super::translate::{self, Printer};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::ops::input::{self, Object};
use crate::ops::{Operations, RequestInfo};

/// The most statements a batch holds.
pub const MAX_STATEMENTS: usize = 25;

/// BatchExecuteStatement.
pub async fn batch_execute_statement(
    ops: &Operations,
    body: &Object,
    info: &RequestInfo,
) -> Result<Value> {
    let statements = super::statement_list(body, "Statements", "statements", MAX_STATEMENTS)?;
    let capacity = input::string(body, "ReturnConsumedCapacity")?;
    let parsed: Vec<Result<Statement>> = statements
        .iter()
        .enumerate()
        .map(|(i, s)| super::statement_of(s, &format!("statements.{}.member.", i + 1)))
        .collect();
    let reads = parsed
        .iter()
        .filter(|s| matches!(s, Ok(Statement::Select(_))))
        .count();
    let writes = parsed
        .iter()
        .filter(|s| {
            matches!(
                s,
                Ok(Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_))
            )
        })
        .count();
    if reads > 0 && writes > 0 {
        return Err(DynamoError::validation(
            "Statements in a batch must all be reads or all be writes",
        ));
    }

    let mut responses = Vec::with_capacity(statements.len());
    let mut consumed: Vec<(String, Option<Value>)> = Vec::new();
    for (member, statement) in statements.iter().zip(parsed) {
        let table = match &statement {
            Ok(Statement::Select(s)) => Some(s.from.table.clone()),
            Ok(Statement::Insert(s)) => Some(s.table.clone()),
            Ok(Statement::Update(s)) => Some(s.table.clone()),
            Ok(Statement::Delete(s)) => Some(s.table.clone()),
            _ => None,
        };
        let answer = match statement {
            Err(e) => Err(e),
            Ok(Statement::Exists(_)) => Err(DynamoError::validation(
                "Statement wasn't well formed, can't be processed: EXISTS is only supported in ExecuteTransaction",
            )),
            Ok(Statement::Select(select)) => {
                let consistent = input::boolean(member, "ConsistentRead")?;
                read(ops, &select, consistent, capacity, info).await
            }
            Ok(write) => {
                let on_failure = input::string(member, "ReturnValuesOnConditionCheckFailure")?;
                super::run_write(ops, &write, capacity, on_failure, info).await
            }
        };
        let mut response = Map::new();
        if let Some(t) = &table {
            response.insert("TableName".into(), json!(t));
        }
        match answer {
            Ok(mut a) => {
                if let Some(item) = a.get_mut("Item").map(Value::take) {
                    response.insert("Item".into(), item);
                }
                if let (Some(t), Some(c)) = (&table, a.get_mut("ConsumedCapacity").map(Value::take))
                {
                    match consumed.iter_mut().find(|(name, _)| name == t) {
                        Some((_, total)) => super::add_capacity(total, Some(c)),
                        None => consumed.push((t.clone(), Some(c))),
                    }
                }
            }
            Err(e) => {
                response.insert("Error".into(), error_entry(&e));
            }
        }
        responses.push(Value::Object(response));
    }
    let mut out = Map::new();
    out.insert("Responses".into(), Value::Array(responses));
    if capacity.is_some_and(|c| c != "NONE") {
        let list: Vec<Value> = consumed.into_iter().filter_map(|(_, c)| c).collect();
        out.insert("ConsumedCapacity".into(), Value::Array(list));
    }
    Ok(Value::Object(out))
}

/// A statement's `Error`: DynamoDB's `BatchStatementErrorCodeEnum` and the message.
fn error_entry(e: &DynamoError) -> Value {
    let code = match e.kind {
        ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailed",
        ErrorKind::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
        ErrorKind::ResourceNotFound => "ResourceNotFound",
        ErrorKind::DuplicateItem => "DuplicateItem",
        ErrorKind::InternalServerError | ErrorKind::ServiceUnavailable => "InternalServerError",
        _ => "ValidationError",
    };
    let mut entry = Map::new();
    entry.insert("Code".into(), json!(code));
    if let Some(m) = &e.message {
        entry.insert("Message".into(), json!(m));
    }
    if let Some(item) = &e.item {
        entry.insert("Item".into(), (**item).clone());
    }
    Value::Object(entry)
}

/// A batch's SELECT: the one item its whole key names (`Item` absent if there is none or
/// the other terms filter it out).
async fn read(
    ops: &Operations,
    select: &super::parser::Select,
    consistent: Option<bool>,
    capacity: Option<&str>,
    info: &RequestInfo,
) -> Result<Value> {
    if select.from.index.is_some() {
        return Err(DynamoError::validation(
            "Batch read statements must specify a table, not an index",
        ));
    }
    let mut printer = Printer::default();
    let keys = super::keys_of(ops, &select.from.table, None)?;
    let Some(split) =
        translate::split_key(select.filter.as_ref(), &keys.hash, keys.range.as_deref())
    else {
        return Err(DynamoError::validation(
            "Where clause does not contain a mandatory equality on all key attributes",
        ));
    };
    let mut req = Map::new();
    req.insert("TableName".into(), json!(select.from.table));
    let mut key_condition = Vec::new();
    for (name, value) in &split.key {
        let n = printer.name(name);
        let v = printer.value(value);
        key_condition.push(format!("{n} = {v}"));
    }
    req.insert(
        "KeyConditionExpression".into(),
        json!(key_condition.join(" AND ")),
    );
    if let Some(f) = translate::and_all(&mut printer, &split.rest).map_err(super::unsupported)? {
        req.insert("FilterExpression".into(), json!(f));
    }
    if let Some(paths) = &select.projection {
        let printed: Vec<String> = paths.iter().map(|p| printer.path(p)).collect();
        req.insert("ProjectionExpression".into(), json!(printed.join(", ")));
    }
    if let Some(c) = consistent {
        req.insert("ConsistentRead".into(), json!(c));
    }
    if let Some(c) = capacity {
        req.insert("ReturnConsumedCapacity".into(), json!(c));
    }
    printer.finish(&mut req);
    let mut answer = super::call(ops, "Query", req, info).await?;
    let mut out = Map::new();
    if let Some(Value::Array(mut items)) = answer.get_mut("Items").map(Value::take)
        && !items.is_empty()
    {
        out.insert("Item".into(), items.swap_remove(0));
    }
    if let Some(c) = answer.get_mut("ConsumedCapacity").map(Value::take) {
        out.insert("ConsumedCapacity".into(), c);
    }
    Ok(Value::Object(out))
}
