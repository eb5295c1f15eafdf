//! PartiQL for DynamoDB: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction
//! (`docs/dynamo-partiql.md`).
//!
//! A statement is lexed and parsed by hand ([`lexer`], [`parser`]: DynamoDB's dialect is a
//! small subset of PartiQL, and no parsing crate gives its error texts or a bounded depth),
//! then *translated* ([`translate`]) into the request of the item operation that does the same
//! thing, which runs through [`Operations::dispatch`] as if a client had sent it. So every
//! rule of the item operations (key and value validation, conditions, indexes, streams, item
//! collections, consumed capacity) holds for PartiQL without a second implementation:
//!
//! - `SELECT` with an equality on the partition key (of the table or of the index named by
//!   `"T"."I"`) is a Query: that equality and one sort-key condition (`=`, `<`, `<=`, `>`,
//!   `>=`, `BETWEEN`, `begins_with`) become the key condition, every other `AND` term the
//!   filter. `pk IN (...)` is one Query per value, in order. Anything else is a Scan with the
//!   WHERE as filter. `NextToken` is the read's `LastEvaluatedKey` (and, for `IN`, which value
//!   it was at) as base64 JSON: opaque to clients, checked when it comes back.
//! - `INSERT` is a PutItem on condition `attribute_not_exists(<hash key>)`; a failed condition
//!   is `DuplicateItemException`.
//! - `UPDATE` is an UpdateItem on the key the WHERE's equalities name (all of it required) and
//!   condition `attribute_exists(<hash key>)` plus the WHERE's other terms: PartiQL's UPDATE
//!   never creates an item, and DynamoDB answers `ConditionalCheckFailedException` for an
//!   absent one. `RETURNING` is `ReturnValues`.
//! - `DELETE` is a DeleteItem the same way (an absent item is not an error without a
//!   condition, as in DeleteItem).
//!
//! [`batch`] runs BatchExecuteStatement's statements one by one (reads as key lookups) and
//! [`transaction`] ExecuteTransaction's as one TransactWriteItems or TransactGetItems, so
//! all-or-nothing, cancellation reasons and `ClientRequestToken` idempotency are that
//! machinery's.
//!
//! Not done: `SELECT` projections keep the nested shape a ProjectionExpression answers,
//! aggregate functions, `ORDER BY`, `INSERT ... VALUE` with anything but literals and
//! parameters, and GetItem's cheaper capacity for a `SELECT` naming a whole key (it is a
//! Query of one item, counted as one).

pub mod batch;
pub(crate) mod lexer;
pub(crate) mod parser;
pub mod transaction;
pub(crate) mod translate;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::error::{DynamoError, ErrorKind, Result};
use crate::ops::input::{self, Object};
use crate::ops::request::Request;
use crate::ops::{Operations, RequestInfo};
use parser::{Delete, Expr, Insert, Operand, ParseError, Returning, Select, Statement, Update};
use translate::Printer;

/// The statements of a batch or a transaction (`key` in the request, `member` in DynamoDB's
/// validation messages), one to `max` of them.
fn statement_list<'a>(
    body: &'a Object,
    key: &str,
    member: &str,
    max: usize,
) -> Result<Vec<&'a Object>> {
    let Some(statements) = input::object_list(body, key)? else {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value null at '{member}' failed to satisfy constraint: Member must not be null"
        )));
    };
    if statements.is_empty() || statements.len() > max {
        let constraint = if statements.is_empty() {
            "Member must have length greater than or equal to 1".to_string()
        } else {
            format!("Member must have length less than or equal to {max}")
        };
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '[...]' at '{member}' failed to satisfy constraint: {constraint}"
        )));
    }
    Ok(statements)
}

/// The longest statement DynamoDB accepts, in characters.
pub const MAX_STATEMENT_CHARS: usize = 8192;

/// The most values `pk IN (...)` may list (each is a Query).
pub const MAX_IN_VALUES: usize = 100;

/// The key attributes of a table or index: hash, then range.
pub(crate) struct Keys {
    pub hash: String,
    pub range: Option<String>,
    /// A GSI with a multi-attribute key: more than one HASH or RANGE attribute (`hash` and
    /// `range` are the first of each).
    pub multi_attribute: bool,
}

/// `Statement` and `Parameters` of a request (or of a batch's or transaction's member),
/// parsed, with DynamoDB's refusals.
pub(crate) fn statement_of(obj: &Object, path: &str) -> Result<Statement> {
    let text = match input::string(obj, "Statement")? {
        Some(t) => t,
        None => {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value null at '{path}statement' failed to satisfy constraint: Member must not be null"
            )));
        }
    };
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_STATEMENT_CHARS {
        let constraint = if chars == 0 {
            "Member must have length greater than or equal to 1".to_string()
        } else {
            format!("Member must have length less than or equal to {MAX_STATEMENT_CHARS}")
        };
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '{text}' at '{path}statement' failed to satisfy constraint: {constraint}"
        )));
    }
    let params: &[Value] = match input::list(obj, "Parameters")? {
        Some(p) if p.is_empty() => {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value '[]' at '{path}parameters' failed to satisfy constraint: Member must have length greater than or equal to 1"
            )));
        }
        Some(p) => p,
        None => &[],
    };
    parser::parse(text, params).map_err(|e| match e {
        ParseError::Syntax(detail) => DynamoError::validation(format!(
            "Statement wasn't well formed, can't be processed: {detail}"
        )),
        ParseError::Parameters => {
            DynamoError::validation("Number of parameters in request and statement don't match.")
        }
    })
}

/// ExecuteStatement.
pub async fn execute_statement(
    ops: &Operations,
    body: &Object,
    info: &RequestInfo,
) -> Result<Value> {
    let statement = statement_of(body, "")?;
    let limit = input::integer(body, "Limit")?;
    if let Some(l) = limit
        && l < 1
    {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '{l}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
        )));
    }
    let capacity = input::string(body, "ReturnConsumedCapacity")?;
    match statement {
        Statement::Select(select) => {
            let read = Read {
                request: request_hash(body),
                limit,
                consistent: input::boolean(body, "ConsistentRead")?,
                capacity,
                token: input::string(body, "NextToken")?,
            };
            run_select(ops, &select, &read, info).await
        }
        Statement::Exists(_) => Err(DynamoError::validation(
            "Statement wasn't well formed, can't be processed: EXISTS is only supported in ExecuteTransaction",
        )),
        write => {
            let on_failure = input::string(body, "ReturnValuesOnConditionCheckFailure")?;
            run_write(ops, &write, capacity, on_failure, info).await
        }
    }
}

/// A SELECT's read options.
pub(crate) struct Read<'a> {
    /// What identifies the request a `NextToken` continues ([`request_hash`]).
    pub request: u32,
    pub limit: Option<i64>,
    pub consistent: Option<bool>,
    pub capacity: Option<&'a str>,
    pub token: Option<&'a str>,
}

/// The table's (or index's) key attributes, and its metadata's name for errors.
pub(crate) fn keys_of(ops: &Operations, table: &str, index: Option<&str>) -> Result<Keys> {
    let t = ops.table(table)?;
    let schema = match index {
        None => &t.meta.key_schema,
        Some(i) => {
            let found = t
                .meta
                .global_secondary_indexes
                .iter()
                .chain(&t.meta.local_secondary_indexes)
                .find(|x| x.index_name == i);
            match found {
                Some(x) => &x.key_schema,
                // Unlike Query's refusal, PartiQL's does not name the index.
                None => {
                    return Err(DynamoError::validation(
                        "The table does not have the specified index",
                    ));
                }
            }
        }
    };
    let of = |kind: &str| {
        schema
            .iter()
            .find(|k| k.key_type == kind)
            .map(|k| k.attribute_name.clone())
    };
    let hash = of("HASH")
        .ok_or_else(|| DynamoError::internal(format!("table {table} has no hash key")))?;
    let count = |kind: &str| schema.iter().filter(|k| k.key_type == kind).count();
    Ok(Keys {
        hash,
        range: of("RANGE"),
        multi_attribute: count("HASH") > 1 || count("RANGE") > 1,
    })
}

/// Run item operation `operation` (or TransactWriteItems / TransactGetItems) with `request`
/// as its body, as if a client had sent it, and read its answer. (Not through
/// [`Operations::dispatch`], which would make the dispatcher's future contain itself.)
pub(crate) async fn call(
    ops: &Operations,
    operation: &str,
    request: Map<String, Value>,
    _info: &RequestInfo,
) -> Result<Value> {
    match operation {
        "TransactWriteItems" => return crate::transact::transact_write_items(ops, &request).await,
        "TransactGetItems" => return crate::transact::transact_get_items(ops, &request).await,
        _ => {}
    }
    let reply = ops
        .item_operation(
            operation,
            Request {
                object: request,
                item: None,
            },
        )
        .await?;
    serde_json::from_slice(&reply.into_bytes())
        .map_err(|e| DynamoError::internal(format!("{operation} answered unreadable JSON: {e}")))
}

/// A refusal of a construct the item operations cannot express.
fn unsupported(detail: String) -> DynamoError {
    DynamoError::validation(format!(
        "Statement wasn't well formed, can't be processed: {detail}"
    ))
}

/// A checksum of a request's `Statement` and `Parameters`: a `NextToken` carries it, so a
/// token sent with another statement is refused instead of read as a start key of that one.
fn request_hash(body: &Object) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for member in ["Statement", "Parameters"] {
        h.update(
            body.get(member)
                .map(Value::to_string)
                .unwrap_or_default()
                .as_bytes(),
        );
    }
    h.finalize()
}

/// Where a paged SELECT stopped: the value of `IN` it was at, and the key to start after.
fn decode_token(token: &str, request: u32) -> Result<(usize, Option<Value>)> {
    let invalid = || DynamoError::validation("Invalid NextToken");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| invalid())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let i = v.get("i").and_then(Value::as_u64).ok_or_else(invalid)?;
    if v.get("h").and_then(Value::as_u64) != Some(u64::from(request)) {
        return Err(DynamoError::validation("NextToken does not match request"));
    }
    let k = v.get("k").filter(|k| k.is_object()).cloned();
    Ok((usize::try_from(i).map_err(|_| invalid())?, k))
}

fn encode_token(request: u32, i: usize, key: Option<&Value>) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(json!({"h": request, "i": i, "k": key}).to_string())
}

/// Add `more` consumed capacity into `total` (the same table's: every number added).
pub(crate) fn add_capacity(total: &mut Option<Value>, more: Option<Value>) {
    fn add(a: &mut Value, b: Value) {
        match (a, b) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in b {
                    match a.get_mut(&k) {
                        Some(x) => add(x, v),
                        None => {
                            a.insert(k, v);
                        }
                    }
                }
            }
            (a @ Value::Number(_), Value::Number(b)) => {
                let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
                *a = json!(sum);
            }
            _ => {}
        }
    }
    match (total.as_mut(), more) {
        (_, None) => {}
        (None, Some(m)) => *total = Some(m),
        (Some(t), Some(m)) => add(t, m),
    }
}

/// SELECT: a Query or a Scan (several Queries for `pk IN (...)`).
pub(crate) async fn run_select(
    ops: &Operations,
    select: &Select,
    read: &Read<'_>,
    info: &RequestInfo,
) -> Result<Value> {
    let from = &select.from;
    let keys = keys_of(ops, &from.table, from.index.as_deref())?;
    let terms = translate::conjuncts(select.filter.as_ref());
    let (start, mut start_key) = match read.token {
        Some(t) => decode_token(t, read.request)?,
        None => (0, None),
    };

    // The partition key's values: one for `=`, several for `IN`, none for a Scan.
    let mut partitions: Vec<Value> = Vec::new();
    let mut key_term = None;
    // A multi-attribute GSI key is read by a Scan of the index with the whole filter (its
    // items are the same; a Query would need every HASH attribute's equality).
    let key_terms = if keys.multi_attribute {
        &[][..]
    } else {
        &terms[..]
    };
    for (i, t) in key_terms.iter().enumerate() {
        if let Some(v) = translate::equality(t, &keys.hash) {
            partitions = vec![v.clone()];
            key_term = Some(i);
            break;
        }
    }
    if key_term.is_none() {
        for (i, t) in key_terms.iter().enumerate() {
            if let Expr::In(Operand::Path(p), list) = t
                && p.attribute() == Some(keys.hash.as_str())
                && list.len() <= MAX_IN_VALUES
                && list.iter().all(|o| matches!(o, Operand::Value(_)))
            {
                partitions = list
                    .iter()
                    .filter_map(|o| match o {
                        Operand::Value(v) => Some(v.clone()),
                        _ => None,
                    })
                    .collect();
                key_term = Some(i);
                break;
            }
        }
    }
    let sort_term = match (&keys.range, key_term) {
        (Some(r), Some(_)) => terms.iter().position(|t| translate::sort_key_term(t, r)),
        _ => None,
    };
    let rest: Vec<&Expr> = terms
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != key_term && Some(*i) != sort_term)
        .map(|(_, t)| *t)
        .collect();

    // A Query's filter may not read key attributes; DynamoDB's PartiQL may. Such a filter
    // (and then the projection, which must come after it) is applied here to the Query's items.
    let table_keys = match &from.index {
        Some(_) => Some(keys_of(ops, &from.table, None)?),
        None => None,
    };
    let key_names: Vec<&str> = [&keys]
        .into_iter()
        .chain(table_keys.as_ref())
        .flat_map(|k| [Some(k.hash.as_str()), k.range.as_deref()])
        .flatten()
        .collect();
    let local = key_term.is_some() && rest.iter().any(|t| translate::mentions(t, &key_names));
    let base = |printer: &mut Printer| -> Result<(Map<String, Value>, Option<Local>)> {
        let mut req = Map::new();
        req.insert("TableName".into(), json!(from.table));
        if let Some(i) = &from.index {
            req.insert("IndexName".into(), json!(i));
        }
        if let Some(c) = read.consistent {
            req.insert("ConsistentRead".into(), json!(c));
        }
        if let Some(c) = read.capacity {
            req.insert("ReturnConsumedCapacity".into(), json!(c));
        }
        if local {
            // Its own placeholders: the Query would refuse names it does not use.
            let mut own = Printer::default();
            let projection = select.projection.as_ref().map(|paths| {
                let printed: Vec<String> = paths.iter().map(|p| own.path(p)).collect();
                printed.join(", ")
            });
            let filter = translate::and_all(&mut own, &rest).map_err(unsupported)?;
            let mut placeholders = Map::new();
            own.finish(&mut placeholders);
            return Ok((
                req,
                Some(Local {
                    filter,
                    projection,
                    placeholders,
                }),
            ));
        }
        let projection = select.projection.as_ref().map(|paths| {
            let printed: Vec<String> = paths.iter().map(|p| printer.path(p)).collect();
            printed.join(", ")
        });
        let filter = translate::and_all(printer, &rest).map_err(unsupported)?;
        if let Some(p) = projection {
            req.insert("ProjectionExpression".into(), json!(p));
        }
        if let Some(f) = filter {
            req.insert("FilterExpression".into(), json!(f));
        }
        Ok((req, None))
    };

    if key_term.is_none() {
        let mut printer = Printer::default();
        let (mut req, _) = base(&mut printer)?;
        if let Some(l) = read.limit {
            req.insert("Limit".into(), json!(l));
        }
        if let Some(k) = start_key {
            req.insert("ExclusiveStartKey".into(), k);
        }
        printer.finish(&mut req);
        let answer = call(ops, "Scan", req, info).await?;
        return Ok(page(answer, read.request));
    }

    let mut items: Vec<Value> = Vec::new();
    let mut capacity = None;
    let mut remaining = read.limit;
    let mut next: Option<String> = None;
    let mut last_key = None;
    for (i, value) in partitions.iter().enumerate().skip(start) {
        if remaining == Some(0) {
            next = Some(encode_token(read.request, i, None));
            break;
        }
        let mut printer = Printer::default();
        let (mut req, local) = base(&mut printer)?;
        let h = printer.name(&keys.hash);
        let v = printer.value(value);
        let mut key_condition = format!("{h} = {v}");
        if let Some(s) = sort_term {
            let printed = printer.condition(terms[s]).map_err(unsupported)?;
            key_condition = format!("{key_condition} AND {printed}");
        }
        req.insert("KeyConditionExpression".into(), json!(key_condition));
        if let Some(l) = remaining {
            req.insert("Limit".into(), json!(l));
        }
        if let Some(k) = start_key.take() {
            req.insert("ExclusiveStartKey".into(), k);
        }
        printer.finish(&mut req);
        let mut answer = call(ops, "Query", req, info).await?;
        add_capacity(
            &mut capacity,
            answer.get_mut("ConsumedCapacity").map(Value::take),
        );
        let scanned = answer
            .get("ScannedCount")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if let Some(Value::Array(found)) = answer.get_mut("Items").map(Value::take) {
            match &local {
                None => items.extend(found),
                Some(l) => items.extend(l.apply(found)?),
            }
        }
        if let Some(r) = remaining.as_mut() {
            *r = (*r - scanned).max(0);
        }
        if let Some(k) = answer.get("LastEvaluatedKey") {
            next = Some(encode_token(read.request, i, Some(k)));
            last_key = Some(k.clone());
            break;
        }
    }
    let mut out = Map::new();
    out.insert("Items".into(), Value::Array(items));
    if let Some(n) = next {
        out.insert("NextToken".into(), json!(n));
    }
    if let Some(k) = last_key {
        out.insert("LastEvaluatedKey".into(), k);
    }
    if let Some(c) = capacity {
        out.insert("ConsumedCapacity".into(), c);
    }
    Ok(Value::Object(out))
}

/// A filter and projection applied to a Query's items here (the filter reads key attributes).
struct Local {
    filter: Option<String>,
    projection: Option<String>,
    /// `ExpressionAttributeNames` and `ExpressionAttributeValues` of the two.
    placeholders: Map<String, Value>,
}

impl Local {
    /// The `items` (in DynamoDB's JSON form) that pass the filter, projected.
    fn apply(&self, items: Vec<Value>) -> Result<Vec<Value>> {
        let request = &self.placeholders;
        use std::collections::HashMap;
        let invalid = |e: crate::value::ValidationError| DynamoError::validation(e.to_string());
        let mut names = HashMap::new();
        if let Some(Value::Object(n)) = request.get("ExpressionAttributeNames") {
            for (k, v) in n {
                names.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
            }
        }
        let mut values = HashMap::new();
        if let Some(Value::Object(v)) = request.get("ExpressionAttributeValues") {
            for (k, v) in v {
                let value = crate::value::AttributeValue::from_json(v)
                    .map_err(|e| DynamoError::validation(e.to_string()))?;
                values.insert(k.clone(), value);
            }
        }
        let mut ex = crate::expr::Expressions::new(&names, &values);
        let filter = match &self.filter {
            Some(f) => Some(ex.filter(f).map_err(invalid)?),
            None => None,
        };
        let projection = match &self.projection {
            Some(p) => Some(ex.projection(p).map_err(invalid)?),
            None => None,
        };
        let mut out = Vec::with_capacity(items.len());
        for json in items {
            let item = crate::value::Item::from_json(&json)
                .map_err(|e| DynamoError::internal(e.to_string()))?;
            if filter.as_ref().is_some_and(|f| !f.eval(&item)) {
                continue;
            }
            out.push(match &projection {
                Some(p) => p.apply(&item).to_json(),
                None => json,
            });
        }
        Ok(out)
    }
}

/// A Query's or Scan's answer as ExecuteStatement's.
fn page(mut answer: Value, request: u32) -> Value {
    let mut out = Map::new();
    out.insert(
        "Items".into(),
        answer
            .get_mut("Items")
            .map(Value::take)
            .unwrap_or(json!([])),
    );
    if let Some(k) = answer.get_mut("LastEvaluatedKey").map(Value::take) {
        out.insert(
            "NextToken".into(),
            json!(encode_token(request, 0, Some(&k))),
        );
        out.insert("LastEvaluatedKey".into(), k);
    }
    if let Some(c) = answer.get_mut("ConsumedCapacity").map(Value::take) {
        out.insert("ConsumedCapacity".into(), c);
    }
    Value::Object(out)
}

/// A write statement as the item operation that does it: its name and request (with
/// `ReturnValues` for `RETURNING`; a transaction removes it).
pub(crate) fn write_request(
    ops: &Operations,
    statement: &Statement,
) -> Result<(&'static str, Map<String, Value>)> {
    let mut printer = Printer::default();
    let mut req = Map::new();
    let operation = match statement {
        Statement::Insert(Insert { table, item }) => {
            let keys = keys_of(ops, table, None)?;
            req.insert("TableName".into(), json!(table));
            req.insert("Item".into(), Value::Object(item.clone()));
            let h = printer.name(&keys.hash);
            req.insert(
                "ConditionExpression".into(),
                json!(format!("attribute_not_exists({h})")),
            );
            "PutItem"
        }
        Statement::Update(Update {
            table,
            actions,
            filter,
            returning,
        }) => {
            let (key, condition) = keyed(ops, &mut printer, table, filter.as_ref(), true)?;
            req.insert("TableName".into(), json!(table));
            req.insert("Key".into(), Value::Object(key));
            let update = printer.update(actions).map_err(unsupported)?;
            req.insert("UpdateExpression".into(), json!(update));
            if let Some(c) = condition {
                req.insert("ConditionExpression".into(), json!(c));
            }
            if let Some(r) = returning {
                req.insert("ReturnValues".into(), json!(r.return_values()));
            }
            "UpdateItem"
        }
        Statement::Delete(Delete {
            table,
            filter,
            returning,
        }) => {
            if let Some(r) = returning
                && *r != Returning::AllOld
            {
                return Err(DynamoError::validation(format!(
                    "Invalid returning clause: RETURNING {} *. Only RETURNING ALL OLD * is allowed in DELETE statements.",
                    r.words()
                )));
            }
            let (key, condition) = keyed(ops, &mut printer, table, filter.as_ref(), false)?;
            req.insert("TableName".into(), json!(table));
            req.insert("Key".into(), Value::Object(key));
            if let Some(c) = condition {
                req.insert("ConditionExpression".into(), json!(c));
            }
            if returning.is_some() {
                req.insert("ReturnValues".into(), json!("ALL_OLD"));
            }
            "DeleteItem"
        }
        Statement::Select(_) | Statement::Exists(_) => {
            return Err(DynamoError::internal("a read is not a write"));
        }
    };
    printer.finish(&mut req);
    Ok((operation, req))
}

/// The whole key a WHERE names, and its other terms as a condition (with
/// `attribute_exists(<hash key>)` first when `must_exist`).
pub(crate) fn keyed(
    ops: &Operations,
    printer: &mut Printer,
    table: &str,
    filter: Option<&Expr>,
    must_exist: bool,
) -> Result<(Map<String, Value>, Option<String>)> {
    let keys = keys_of(ops, table, None)?;
    let Some(split) = translate::split_key(filter, &keys.hash, keys.range.as_deref()) else {
        return Err(DynamoError::validation(
            "Where clause does not contain a mandatory equality on all key attributes",
        ));
    };
    let mut condition = Vec::new();
    if must_exist {
        condition.push(format!("attribute_exists({})", printer.name(&keys.hash)));
    }
    if let Some(c) = translate::and_all(printer, &split.rest).map_err(unsupported)? {
        condition.push(c);
    }
    Ok((
        split.key,
        (!condition.is_empty()).then(|| condition.join(" AND ")),
    ))
}

/// INSERT, UPDATE or DELETE through its item operation.
pub(crate) async fn run_write(
    ops: &Operations,
    statement: &Statement,
    capacity: Option<&str>,
    on_failure: Option<&str>,
    info: &RequestInfo,
) -> Result<Value> {
    let (operation, mut req) = write_request(ops, statement)?;
    if let Some(c) = capacity {
        req.insert("ReturnConsumedCapacity".into(), json!(c));
    }
    if let Some(f) = on_failure {
        req.insert("ReturnValuesOnConditionCheckFailure".into(), json!(f));
    }
    let returning = req.contains_key("ReturnValues");
    let mut answer = match call(ops, operation, req, info).await {
        Ok(a) => a,
        Err(e) if operation == "PutItem" && e.kind == ErrorKind::ConditionalCheckFailed => {
            return Err(duplicate_item());
        }
        Err(e) => return Err(e),
    };
    // DynamoDB answers a write with `Items` (empty unless it returns values).
    let mut out = Map::new();
    let items = match answer.get_mut("Attributes").map(Value::take) {
        Some(Value::Object(a)) if returning && !a.is_empty() => vec![Value::Object(a)],
        _ => vec![],
    };
    out.insert("Items".into(), Value::Array(items));
    if let Some(c) = answer.get_mut("ConsumedCapacity").map(Value::take) {
        out.insert("ConsumedCapacity".into(), c);
    }
    Ok(Value::Object(out))
}

/// An INSERT of an item that exists, in DynamoDB's words.
pub(crate) fn duplicate_item() -> DynamoError {
    DynamoError::new(
        ErrorKind::DuplicateItem,
        "Duplicate primary key exists in table",
    )
}
