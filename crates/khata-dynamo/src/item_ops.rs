//! The item operations: PutItem, GetItem, UpdateItem, DeleteItem, Query and Scan, on a table
//! whose [`ItemLayout`] the caller resolved.
//!
//! Each takes the request's JSON object (and the item or key the request parser already read,
//! [`crate::ops::request`]) and answers the response printed as bytes ([`Body`]: items are
//! written straight into it, never built as a `serde_json::Value`), or an [`OpError`] that the
//! endpoint turns into DynamoDB's error. Writes with a condition, `ReturnValues` other than
//! `NONE`, and every UpdateItem are one compare-and-set on the item's partition
//! ([`Coordinator::cas`]): the item is read, checked and written with no other conditional
//! write to the partition in between, so conditional increments by concurrent clients lose no
//! update. Unconditional PutItem and DeleteItem are plain writes, except on a table with a
//! stream, where every write is a compare-and-set that adds the stream record of the change
//! ([`crate::streams::cas_item`]).
//!
//! Reads are at `LOCAL_ONE`, or `LOCAL_QUORUM` with `ConsistentRead`; writes at
//! `LOCAL_QUORUM` (DESIGN.md §7).

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::catalog::{ReadResult, ScanPosition};
use khata_coordinator::{
    Consistency, Coordinator, CoordinatorError, ReadCommand, ScanCommand, WriteType,
};
use khata_types::clustering::{after_prefix, end_bound, full_range};
use khata_types::token::{DecoratedKey, Token};
use parking_lot::Mutex;
use serde_json::{Map as JsonMap, Value};

use crate::capacity::{self, Consumed, ReturnCapacity};
use crate::expr::{self, Condition, Expressions, KeyCondition, Projection, RangeCondition, Update};
use crate::items::{ItemKey, ItemLayout};
use crate::reply::Body;
use crate::value::{
    AttributeValue, Item, KeyType, Number, ValidationError, ValueError, values_from_json, write_map,
};

/// A request's JSON object.
pub type Object = JsonMap<String, Value>;

/// Why an item operation failed.
#[derive(Debug)]
pub enum OpError {
    /// `ValidationException`.
    Validation(String),
    /// `SerializationException` (badly shaped JSON values).
    Serialization(String),
    /// `ConditionalCheckFailedException`, with the item when the request asked for it
    /// (`ReturnValuesOnConditionCheckFailure: ALL_OLD`).
    ConditionalCheckFailed(Option<Item>),
    /// `ItemCollectionSizeLimitExceededException`: the write would grow its item collection
    /// past the limit ([`crate::collections`]).
    CollectionSizeExceeded,
    /// The coordinator failed (timeouts, unavailable replicas, storage errors).
    Coordinator(CoordinatorError),
    /// Stored data could not be read back.
    Internal(String),
}

impl From<ValidationError> for OpError {
    fn from(e: ValidationError) -> Self {
        OpError::Validation(e.0)
    }
}

impl From<ValueError> for OpError {
    fn from(e: ValueError) -> Self {
        match e {
            ValueError::Serialization(m) => OpError::Serialization(m),
            ValueError::Validation(v) => OpError::Validation(v.0),
        }
    }
}

impl From<CoordinatorError> for OpError {
    fn from(e: CoordinatorError) -> Self {
        OpError::Coordinator(e)
    }
}

pub(crate) type Result<T> = std::result::Result<T, OpError>;

/// The largest page a Query or Scan returns, in bytes of items read.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;

/// Rows read from the engine per round of a Query or Scan.
pub(crate) const READ_CHUNK: usize = 1000;

/// Tombstones (deleted items) a Query page passes before it ends early, with a
/// `LastEvaluatedKey` at the last key it scanned: DynamoDB never fails a read on deleted
/// items, and a page over a long run of them (the queue pattern: items put, then deleted)
/// must still end in bounded time. Alternator's `query_tombstone_page_limit`, and its default.
pub(crate) const TOMBSTONE_PAGE_LIMIT: usize = 10_000;

pub(crate) fn validation(message: impl Into<String>) -> OpError {
    OpError::Validation(message.into())
}

pub(crate) fn string<'a>(req: &'a Object, name: &str) -> Result<Option<&'a str>> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(OpError::Serialization(format!(
            "Unexpected value type in payload for {name}"
        ))),
    }
}

/// The expression parameters of each item operation, in the order DynamoDB lists them when it
/// refuses placeholders given without them ([`Placeholders::of`]).
pub(crate) const WRITE_EXPRESSIONS: &[&str] = &["ConditionExpression"];
/// UpdateItem's (and a transaction's Update's).
pub(crate) const UPDATE_EXPRESSIONS: &[&str] = &["UpdateExpression", "ConditionExpression"];
/// GetItem's, BatchGetItem's and TransactGetItems'.
pub(crate) const GET_EXPRESSIONS: &[&str] = &["ProjectionExpression"];
/// Query's.
pub(crate) const QUERY_EXPRESSIONS: &[&str] = &[
    "FilterExpression",
    "KeyConditionExpression",
    "ProjectionExpression",
];
/// Scan's.
pub(crate) const SCAN_EXPRESSIONS: &[&str] = &["FilterExpression", "ProjectionExpression"];

/// The request's `ExpressionAttributeNames` and `ExpressionAttributeValues`.
pub(crate) struct Placeholders {
    pub(crate) names: HashMap<String, String>,
    pub(crate) values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    /// The placeholders of a request whose operation takes the expression parameters
    /// `expressions`, in the order DynamoDB names them in its refusal.
    pub(crate) fn of(req: &Object, expressions: &[&str]) -> Result<Placeholders> {
        only_with_expressions(req, expressions)?;
        let mut names = HashMap::new();
        match req.get("ExpressionAttributeNames") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                if m.is_empty() {
                    return Err(validation("ExpressionAttributeNames must not be empty"));
                }
                for (k, v) in m {
                    let Value::String(v) = v else {
                        return Err(OpError::Serialization(
                            "Unexpected value type in payload for ExpressionAttributeNames".into(),
                        ));
                    };
                    crate::value::check_attribute_name(v)?;
                    names.insert(k.clone(), v.clone());
                }
            }
            Some(_) => {
                return Err(OpError::Serialization(
                    "Unexpected value type in payload for ExpressionAttributeNames".into(),
                ));
            }
        }
        let values = match req.get("ExpressionAttributeValues") {
            None | Some(Value::Null) => HashMap::new(),
            Some(Value::Object(m)) if m.is_empty() => {
                return Err(validation("ExpressionAttributeValues must not be empty"));
            }
            Some(v) => values_from_json(v)?,
        };
        Ok(Placeholders { names, values })
    }

    fn any(&self) -> bool {
        !self.names.is_empty() || !self.values.is_empty()
    }
}

/// Refuses `ExpressionAttributeNames` in a request without any of the operation's
/// `expressions`, and `ExpressionAttributeValues` without one that can use values (a
/// projection cannot), as DynamoDB does: given at all, even empty (so before it says "must not
/// be empty"), and names first.
fn only_with_expressions(req: &Object, expressions: &[&str]) -> Result<()> {
    let given = |name: &&str| req.get(*name).is_some_and(|v| !v.is_null());
    if given(&"ExpressionAttributeNames") && !expressions.iter().any(given) {
        return Err(validation(
            "ExpressionAttributeNames can only be specified when using expressions",
        ));
    }
    let with_values: Vec<&str> = expressions
        .iter()
        .copied()
        .filter(|e| *e != "ProjectionExpression")
        .collect();
    if given(&"ExpressionAttributeValues")
        && !with_values.is_empty()
        && !with_values.iter().any(given)
    {
        return Err(validation(format!(
            "ExpressionAttributeValues can only be specified when using expressions: {} {} null",
            with_values.join(" and "),
            if with_values.len() > 1 { "are" } else { "is" }
        )));
    }
    Ok(())
}

/// Refuses placeholders that no expression of the request parsed.
pub(crate) fn expressions_required(p: &Placeholders) -> Result<()> {
    if !p.values.is_empty() {
        return Err(validation(
            "ExpressionAttributeValues can only be specified when using expressions",
        ));
    }
    if !p.names.is_empty() {
        return Err(validation(
            "ExpressionAttributeNames can only be specified when using expressions",
        ));
    }
    Ok(())
}

/// The condition of a write: `ConditionExpression`, or the legacy `Expected`.
pub(crate) fn write_condition(
    req: &Object,
    p: &Placeholders,
    ex: &mut Expressions<'_>,
) -> Result<Option<Condition>> {
    // The operation refused a mix of the two kinds first (`expr::check_parameters`).
    if let Some(text) = string(req, "ConditionExpression")? {
        return Ok(Some(ex.condition(text)?));
    }
    match req.get("Expected") {
        None | Some(Value::Null) => Ok(None),
        Some(expected) => {
            if p.any() {
                expressions_required(p)?;
            }
            let op = string(req, "ConditionalOperator")?;
            Ok(Some(expr::expected(expected, op)?))
        }
    }
}

/// The projection of a read: `ProjectionExpression`, or the legacy `AttributesToGet`.
pub(crate) fn projection(req: &Object, ex: &mut Expressions<'_>) -> Result<Option<Projection>> {
    if let Some(text) = string(req, "ProjectionExpression")? {
        if req.get("AttributesToGet").is_some_and(|v| !v.is_null()) {
            return Err(validation(
                "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
            ));
        }
        return Ok(Some(ex.projection(text)?));
    }
    match req.get("AttributesToGet") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(expr::attributes_to_get(v)?)),
    }
}

pub(crate) fn read_consistency(req: &Object) -> Result<Consistency> {
    Ok(match req.get("ConsistentRead") {
        Some(Value::Bool(true)) => Consistency::LocalQuorum,
        None | Some(Value::Null) | Some(Value::Bool(false)) => Consistency::LocalOne,
        Some(_) => {
            return Err(OpError::Serialization(
                "Unexpected value type in payload for ConsistentRead".into(),
            ));
        }
    })
}

/// Member `name` (`Item` or `Key`) as an item: the one the request parser already read
/// (`parsed`), else from the JSON.
fn parsed_item_param(parsed: Option<Item>, req: &Object, name: &str, path: &str) -> Result<Item> {
    match parsed {
        Some(item) => Ok(item),
        None => item_param(req, name, path),
    }
}

pub(crate) fn item_param(req: &Object, name: &str, path: &str) -> Result<Item> {
    match req.get(name) {
        None | Some(Value::Null) => Err(validation(format!(
            "1 validation error detected: Value null at '{path}' failed to satisfy constraint: Member must not be null"
        ))),
        Some(v) => Ok(Item::from_json(v)?),
    }
}

/// The item stored under `key` in what a read returned (`None` if there is none).
pub(crate) fn stored_item(
    layout: &ItemLayout,
    key: &ItemKey,
    read: &ReadResult,
    now: u32,
) -> Result<Option<Item>> {
    match read
        .partition
        .rows
        .get(&key.clustering)
        .filter(|r| r.is_live(now))
    {
        None => Ok(None),
        Some(row) => layout
            .item(&key.partition, &key.clustering, row, now)
            .map(Some)
            .map_err(|e| OpError::Internal(format!("stored item is unreadable: {}", e.0))),
    }
}

/// What a conditional write decided, carried out of the compare-and-set.
#[derive(Default)]
struct Outcome {
    old: Option<Item>,
    new: Option<Item>,
    changed: BTreeSet<String>,
    error: Option<OpError>,
    /// The item collection's size after the write (tables with LSIs, [`crate::collections`]).
    collection: Option<u64>,
}

/// One compare-and-set on an item: `decide` sees the stored item and returns the mutations to
/// apply (the item's first, then its index entries), or an error (a failed condition
/// included).
async fn cas_item<F>(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    key: &ItemKey,
    decide: F,
) -> Result<Outcome>
where
    F: FnOnce(
            Option<Item>,
            &mut Outcome,
        ) -> Result<Option<Vec<khata_coordinator::catalog::Mutation>>>
        + Send
        + 'static,
{
    let now = coordinator.now_seconds();
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let shared = outcome.clone();
    let decide_layout = layout.clone();
    let decide_key = key.clone();
    let streamed = layout.stream.is_some();
    // With a stream, the record of the change joins the write (crate::streams).
    crate::streams::cas_item(coordinator, layout, key, now, move |read: &ReadResult| {
        let collections = decide_layout.collections;
        let mut out = shared.lock();
        let old = match stored_item(&decide_layout, &decide_key, read, now) {
            Ok(old) => old,
            Err(e) => {
                out.error = Some(e);
                return None;
            }
        };
        out.old = old.clone();
        match decide(old, &mut out) {
            Ok(Some(mut ms)) => {
                if let (Some(c), Some(base)) = (collections, ms.first_mut()) {
                    // The item collection's new size joins the item's own mutation.
                    let removed =
                        crate::collections::contribution(&decide_layout, out.old.as_ref());
                    let added = crate::collections::contribution(&decide_layout, out.new.as_ref());
                    let stored = c.stored(&read.partition, now);
                    match crate::collections::resize(stored, removed, added, c.limit) {
                        Ok(bytes) => {
                            let ts = base.update.max_timestamp().unwrap_or_default();
                            c.store(&mut base.update, bytes, ts);
                            out.collection = Some(bytes);
                        }
                        Err(_) => {
                            out.error = Some(OpError::CollectionSizeExceeded);
                            return None;
                        }
                    }
                }
                let change = streamed.then(|| crate::streams::Change {
                    old: out.old.clone(),
                    new: out.new.clone(),
                    identity: None,
                });
                Some((ms, change))
            }
            Ok(None) => None,
            Err(e) => {
                out.error = Some(e);
                None
            }
        }
    })
    .await?;
    let mut out = std::mem::take(&mut *outcome.lock());
    if let Some(e) = out.error.take() {
        return Err(e);
    }
    Ok(out)
}

/// `ReturnValues`, checked against the ones an operation allows.
fn return_values<'a>(req: &'a Object, allowed: &[&str], message: &str) -> Result<&'a str> {
    let v = string(req, "ReturnValues")?.unwrap_or("NONE");
    if !allowed.contains(&v) {
        return Err(validation(message));
    }
    Ok(v)
}

pub(crate) fn all_old_on_failure(req: &Object) -> Result<bool> {
    match string(req, "ReturnValuesOnConditionCheckFailure")? {
        None | Some("NONE") => Ok(false),
        Some("ALL_OLD") => Ok(true),
        Some(other) => Err(validation(format!(
            "1 validation error detected: Value '{other}' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]"
        ))),
    }
}

fn attributes(item: Option<&Item>) -> Body {
    let mut out = Body::new();
    if let Some(item) = item.filter(|i| !i.is_empty()) {
        out.item("Attributes", item);
    }
    out
}

/// Refuses an update that writes or removes a key attribute of the table. DynamoDB knows this
/// from the update alone, so it says so before any operand's type is checked against the item
/// (`ADD pk :n` on a string key is refused for the key, not for the type).
pub(crate) fn refuse_key_updates(
    layout: &ItemLayout,
    update: &Update,
) -> std::result::Result<(), ValidationError> {
    let touched = update.attributes();
    let key = std::iter::once(layout.hash.0.as_str())
        .chain(layout.range.as_ref().map(|(n, _)| n.as_str()))
        .find(|k| touched.contains(k));
    match key {
        Some(k) => Err(ValidationError(format!(
            "One or more parameter values were invalid: Cannot update attribute {k}. This attribute is part of the key"
        ))),
        None => Ok(()),
    }
}

/// The condition a write checks and what it answers (PutItem and DeleteItem take the same).
struct WriteRequest {
    condition: Option<Condition>,
    all_old: bool,
    on_failure: bool,
    capacity: ReturnCapacity,
    /// `ReturnItemCollectionMetrics: SIZE`.
    metrics: bool,
}

fn write_request(req: &Object, layout: &ItemLayout) -> Result<WriteRequest> {
    let p = Placeholders::of(req, WRITE_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let condition = write_condition(req, &p, &mut ex)?;
    layout.finish_expressions(ex)?;
    let rv = return_values(
        req,
        &["NONE", "ALL_OLD"],
        "Return values set to invalid value",
    )?;
    Ok(WriteRequest {
        condition,
        all_old: rv == "ALL_OLD",
        on_failure: all_old_on_failure(req)?,
        capacity: ReturnCapacity::of(req)?,
        metrics: crate::collections::wanted(req)?,
    })
}

/// ConditionalCheckFailedException unless `condition` holds on the stored item (an absent item
/// is an empty one).
pub(crate) fn check_condition(
    condition: Option<&Condition>,
    old: &Option<Item>,
    on_failure: bool,
) -> Result<()> {
    match condition {
        Some(c) if !c.eval(old.as_ref().unwrap_or(&Item::new())) => Err(
            OpError::ConditionalCheckFailed(on_failure.then(|| old.clone()).flatten()),
        ),
        _ => Ok(()),
    }
}

/// Write the whole of item `key` (`Some` item for PutItem, `None` for DeleteItem) with the
/// entries it makes in the table's indexes: at once when nothing is to be checked, returned or
/// counted (and the table has no stream), else as one compare-and-set whose write takes its
/// timestamp under the item's lock (so writes to an item are timestamped in the order they
/// are serialized) and also deletes the old item's stale index entries.
async fn write_item(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    key: &ItemKey,
    item: Option<Item>,
    w: WriteRequest,
    req: &Object,
) -> Result<Body> {
    let now = coordinator.now_seconds();
    // A table with a stream needs the item before the write: always a compare-and-set.
    // So does a table that keeps its item collections' sizes.
    if w.condition.is_none()
        && !w.all_old
        && !w.capacity.wanted()
        && layout.stream.is_none()
        && layout.collections.is_none()
    {
        let ts = coordinator.timestamp();
        let mut mutations = vec![match &item {
            Some(item) => layout.put(key, item, ts, now)?,
            None => layout.delete(key, ts, now),
        }];
        if let Some(new) = &item {
            mutations.extend(crate::indexes::index_entries(layout, new, None, ts)?);
        }
        coordinator
            .write(mutations, Consistency::LocalQuorum, WriteType::Simple)
            .await?;
        return Ok(Body::new());
    }
    if let Some(item) = &item
        && item.size_bytes() > crate::value::MAX_ITEM_SIZE_BYTES
    {
        return Err(validation(
            "Item size has exceeded the maximum allowed size",
        ));
    }
    let (condition, on_failure) = (w.condition, w.on_failure);
    let stamps = coordinator.timestamp_source();
    let (write_layout, write_key) = (layout.clone(), key.clone());
    let out = cas_item(coordinator, layout, key, move |old, out| {
        check_condition(condition.as_ref(), &old, on_failure)?;
        let ts = stamps.next();
        let mut mutations = vec![match &item {
            Some(item) => write_layout.put(&write_key, item, ts, now)?,
            None => write_layout.delete(&write_key, ts, now),
        }];
        if let Some(new) = &item {
            mutations.extend(crate::indexes::index_entries(&write_layout, new, None, ts)?);
        }
        if let Some(old) = &old {
            mutations.extend(crate::indexes::obsolete_entries(
                &write_layout,
                old,
                item.as_ref(),
                ts,
                now,
            ));
        }
        out.new = item;
        Ok(Some(mutations))
    })
    .await?;
    let mut answer = if w.all_old {
        attributes(out.old.as_ref())
    } else {
        Body::new()
    };
    let units = capacity::write_units(out.old.as_ref(), out.new.as_ref());
    let consumed = Consumed::write(units).with_index_writes(
        &layout.indexes,
        out.old.as_ref(),
        out.new.as_ref(),
    );
    capacity::attach_body(&mut answer, table_name(req), &consumed, w.capacity);
    attach_metrics(&mut answer, layout, key, out.collection, w.metrics);
    Ok(answer)
}

/// Put `ItemCollectionMetrics` into a single-item write's answer when the request asked for
/// them and the table keeps item collections.
fn attach_metrics(
    answer: &mut Body,
    layout: &ItemLayout,
    key: &ItemKey,
    collection: Option<u64>,
    wanted: bool,
) {
    if let (true, Some(bytes)) = (wanted, collection) {
        let hash = crate::items::column_value(layout.hash.1, &key.partition.key)
            .unwrap_or(crate::value::AttributeValue::Null);
        answer.value(
            "ItemCollectionMetrics",
            &crate::collections::metrics_json(&(layout.hash.0.clone(), hash), bytes),
        );
    }
}

/// The request's `TableName` (the dispatcher checked it is there).
pub(crate) fn table_name(req: &Object) -> &str {
    req.get("TableName")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The envelope DynamoDB's own request validation answers in.
const ENVELOPE: &str = "1 validation error detected: ";

/// The refusals PutItem answers in [`ENVELOPE`] (by how their messages start). DynamoDB has
/// wrapped these since 2026 (as moto's AWS-verified tests record), while it answers the same
/// refusals bare for other operations: Scan's unused names, a transaction's empty
/// `ExpressionAttributeValues`.
const PUT_ENVELOPED: &[&str] = &[
    "Value provided in ExpressionAttributeNames unused in expressions",
    "ExpressionAttributeValues must not be empty",
    "One or more parameter values were invalid: An string set  may not be empty",
    "One or more parameter values were invalid: An number set  may not be empty",
];
/// DeleteItem's (its key cannot hold a set).
const DELETE_ENVELOPED: &[&str] = &[
    "Value provided in ExpressionAttributeNames unused in expressions",
    "ExpressionAttributeValues must not be empty",
];
/// UpdateItem's: PutItem's, unused values, and some refusals of its `UpdateExpression`.
const UPDATE_ENVELOPED: &[&str] = &[
    "Value provided in ExpressionAttributeNames unused in expressions",
    "Value provided in ExpressionAttributeValues unused in expressions",
    "ExpressionAttributeValues must not be empty",
    "One or more parameter values were invalid: An string set  may not be empty",
    "One or more parameter values were invalid: An number set  may not be empty",
    "Invalid UpdateExpression: The expression can not be empty;",
    "Invalid UpdateExpression: Two document paths overlap with each other;",
    "Invalid UpdateExpression: The \"ADD\" section can only be used once",
    "Invalid UpdateExpression: The \"SET\" section can only be used once",
    "Invalid UpdateExpression: The \"REMOVE\" section can only be used once",
    "Invalid UpdateExpression: The \"DELETE\" section can only be used once",
];

/// `e`, in [`ENVELOPE`] when its message starts as one of `wrapped` does.
fn enveloped(wrapped: &'static [&'static str]) -> impl Fn(OpError) -> OpError {
    move |e| match e {
        OpError::Validation(m) if wrapped.iter().any(|w| m.starts_with(w)) => {
            OpError::Validation(format!("{ENVELOPE}{m}"))
        }
        e => e,
    }
}

/// PutItem.
pub async fn put_item(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    parsed: Option<Item>,
) -> Result<Body> {
    expr::check_parameters(req, &expr::WRITE_PARAMETERS)?;
    let item = parsed_item_param(parsed, req, "Item", "item").map_err(enveloped(PUT_ENVELOPED))?;
    let w = write_request(req, layout).map_err(enveloped(PUT_ENVELOPED))?;
    let key = layout.key_of_item(&item)?;
    write_item(coordinator, layout, &key, Some(item), w, req).await
}

/// The `Key` parameter.
fn key_param(layout: &ItemLayout, req: &Object, parsed: Option<Item>) -> Result<ItemKey> {
    let key = parsed_item_param(parsed, req, "Key", "key")?;
    Ok(layout.key_of_param(&key)?)
}

/// GetItem.
pub async fn get_item(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    parsed: Option<Item>,
) -> Result<Body> {
    expr::check_parameters(req, &expr::GET_PARAMETERS)?;
    let key = key_param(layout, req, parsed)?;
    let p = Placeholders::of(req, GET_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let projection = projection(req, &mut ex)?;
    if !p.values.is_empty() {
        return Err(validation(
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {"
                .to_string()
                + &p.values.keys().cloned().collect::<Vec<_>>().join(", ")
                + "}",
        ));
    }
    layout.finish_expressions(ex)?;
    let cl = read_consistency(req)?;
    let capacity_mode = ReturnCapacity::of(req)?;
    let now = coordinator.now_seconds();
    let read = coordinator
        .read(
            ReadCommand {
                table: layout.table.def.id,
                key: key.partition.clone(),
                ranges: vec![layout.row_range(&key)],
                reversed: false,
                row_limit: Some(1),
                one_row: true,
                now,
            },
            cl,
        )
        .await?;
    let mut answer = Body::new();
    let consistent = cl == Consistency::LocalQuorum;
    let units = match &projection {
        // The whole item: written straight from its row, not built first.
        None => match read
            .partition
            .rows
            .get(&key.clustering)
            .filter(|r| r.is_live(now))
        {
            None => capacity::item_read_units(None, consistent),
            Some(row) => {
                let hash = layout.hash_value(&key.partition).map_err(unreadable)?;
                let range = match &layout.range {
                    Some(_) => Some(layout.range_value(&key.clustering).map_err(unreadable)?),
                    None => None,
                };
                let mut out = Vec::with_capacity(256);
                let size = layout
                    .write_item(&mut out, &hash, range.as_ref(), row, now)
                    .map_err(unreadable)?;
                answer.raw("Item", out);
                capacity::read_units(size, consistent)
            }
        },
        Some(p) => {
            let stored = stored_item(layout, &key, &read, now)?;
            let units = capacity::item_read_units(stored.as_ref(), consistent);
            if let Some(item) = stored {
                answer.item("Item", &p.apply(&item));
            }
            units
        }
    };
    capacity::attach_body(
        &mut answer,
        table_name(req),
        &Consumed::read(units),
        capacity_mode,
    );
    Ok(answer)
}

/// DeleteItem.
pub async fn delete_item(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    parsed: Option<Item>,
) -> Result<Body> {
    expr::check_parameters(req, &expr::WRITE_PARAMETERS)?;
    let key = key_param(layout, req, parsed)?;
    let w = write_request(req, layout).map_err(enveloped(DELETE_ENVELOPED))?;
    write_item(coordinator, layout, &key, None, w, req).await
}

/// UpdateItem's update (`UpdateExpression` or the legacy `AttributeUpdates`) and condition.
fn update_expressions(
    req: &Object,
    layout: &ItemLayout,
) -> Result<(Option<Update>, Option<Condition>)> {
    let p = Placeholders::of(req, UPDATE_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let update: Option<Update> = match string(req, "UpdateExpression")? {
        Some(text) => Some(ex.update(text)?),
        None => match req.get("AttributeUpdates") {
            None | Some(Value::Null) => None,
            Some(v) => Some(expr::attribute_updates(v)?),
        },
    };
    let condition = write_condition(req, &p, &mut ex)?;
    layout.finish_expressions(ex)?;
    Ok((update, condition))
}

/// UpdateItem: always a compare-and-set, so that read-modify-writes of one item by concurrent
/// clients serialize.
pub async fn update_item(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    parsed: Option<Item>,
) -> Result<Body> {
    expr::check_parameters(req, &expr::UPDATE_PARAMETERS)?;
    let key_item = parsed_item_param(parsed, req, "Key", "key")?;
    let key = layout.key_of_param(&key_item)?;
    let (update, condition) =
        update_expressions(req, layout).map_err(enveloped(UPDATE_ENVELOPED))?;
    if let Some(u) = &update {
        refuse_key_updates(layout, u)?;
    }
    let rv = return_values(
        req,
        &["NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"],
        "Return values set to invalid value",
    )?
    .to_string();
    let on_failure = all_old_on_failure(req)?;
    let capacity_mode = ReturnCapacity::of(req)?;
    let metrics = crate::collections::wanted(req)?;
    let stamps = coordinator.timestamp_source();
    let now = coordinator.now_seconds();
    let decide_layout = layout.clone();
    let decide_key = key.clone();
    let decide_update = update.clone();
    let out = cas_item(coordinator, layout, &key, move |old, out| {
        check_condition(condition.as_ref(), &old, on_failure)?;
        let base = old.clone().unwrap_or_else(|| key_item.clone());
        let (new, changed) = match &decide_update {
            Some(u) => u.apply(&base, old.is_some())?,
            None => (base, BTreeSet::new()),
        };
        if old.is_none() && decide_update.as_ref().is_some_and(Update::only_removes) {
            // Nothing to remove from an item that does not exist: it stays absent.
            return Ok(None);
        }
        let ts = stamps.next();
        let mut m = vec![decide_layout.update(&decide_key, &new, &changed, ts, now)?];
        let only = old.is_some().then_some(&changed);
        m.extend(crate::indexes::index_entries(
            &decide_layout,
            &new,
            only,
            ts,
        )?);
        if let Some(old) = &old {
            m.extend(crate::indexes::obsolete_entries(
                &decide_layout,
                old,
                Some(&new),
                ts,
                now,
            ));
        }
        out.new = Some(new);
        out.changed = changed;
        Ok(Some(m))
    })
    .await?;
    let updated = |item: Option<&Item>| -> Option<Item> {
        let item = item?;
        let paths = update.as_ref()?.updated_paths();
        Some(paths.apply(item))
    };
    let mut answer = match rv.as_str() {
        "ALL_OLD" => attributes(out.old.as_ref()),
        "ALL_NEW" => attributes(out.new.as_ref()),
        "UPDATED_OLD" => attributes(updated(out.old.as_ref()).as_ref()),
        "UPDATED_NEW" => attributes(updated(out.new.as_ref()).as_ref()),
        _ => Body::new(),
    };
    let units = capacity::write_units(out.old.as_ref(), out.new.as_ref());
    let consumed = Consumed::write(units).with_index_writes(
        &layout.indexes,
        out.old.as_ref(),
        out.new.as_ref(),
    );
    capacity::attach_body(&mut answer, table_name(req), &consumed, capacity_mode);
    attach_metrics(&mut answer, layout, &key, out.collection, metrics);
    Ok(answer)
}

/// DynamoDB's refusal of a Query's start key in another partition than the query's.
pub(crate) const START_OUTSIDE_QUERY: &str =
    "The provided starting key is outside query boundaries based on provided conditions";

/// Refuses a Query's start key whose range key the key condition excludes: `clustering`
/// outside `[low, high)`, the range the condition reads (when it has one).
pub(crate) fn start_within(
    has_range_condition: bool,
    low: &Bytes,
    high: &Bytes,
    clustering: &Bytes,
) -> Result<()> {
    if has_range_condition && !(low <= clustering && clustering < high) {
        return Err(validation(
            "The provided starting key does not match the range key predicate",
        ));
    }
    Ok(())
}

/// Refuses a Query's filter on the key attributes of the table or index it reads, which
/// belong in the key condition, as DynamoDB does (a Scan may filter on anything).
pub(crate) fn filter_off_keys(req: &Object, shape: &ReadShape, keys: &[&str]) -> Result<()> {
    let Some(filter) = &shape.filter else {
        return Ok(());
    };
    let read = filter.attributes();
    if let Some(key) = keys.iter().find(|k| read.contains(*k)) {
        let what = if req.get("FilterExpression").is_some_and(|v| !v.is_null()) {
            "Filter Expression"
        } else {
            "QueryFilter"
        };
        return Err(validation(format!(
            "{what} can only contain non-primary key attributes: Primary key attribute: {key}"
        )));
    }
    Ok(())
}

/// `Select`, `Limit` and the projection of a Query or Scan.
pub(crate) struct ReadShape {
    pub(crate) count_only: bool,
    pub(crate) limit: Option<usize>,
    pub(crate) projection: Option<Projection>,
    pub(crate) filter: Option<Condition>,
    pub(crate) consistency: Consistency,
    pub(crate) capacity: ReturnCapacity,
}

pub(crate) fn read_shape(
    req: &Object,
    ex: &mut Expressions<'_>,
    filter_name: &str,
) -> Result<ReadShape> {
    let projection = projection(req, ex)?;
    let select = string(req, "Select")?;
    let count_only = match select {
        None | Some("ALL_ATTRIBUTES") | Some("ALL_PROJECTED_ATTRIBUTES") => false,
        Some("SPECIFIC_ATTRIBUTES") => {
            if projection.is_none() {
                return Err(validation(
                    "1 validation error detected: Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
                ));
            }
            false
        }
        Some("COUNT") => true,
        Some(other) => {
            return Err(validation(format!(
                "1 validation error detected: Value '{other}' at 'select' failed to satisfy constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]"
            )));
        }
    };
    if projection.is_some()
        && let Some(chosen @ ("ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES" | "COUNT")) = select
    {
        let given = if req.get("AttributesToGet").is_some_and(|v| !v.is_null()) {
            "AttributesToGet"
        } else {
            "ProjectionExpression"
        };
        let what = if chosen == "COUNT" {
            "only the Count"
        } else {
            chosen
        };
        return Err(validation(format!(
            "1 validation error detected: Cannot specify the {given} when choosing to get {what}"
        )));
    }
    let limit = match req.get("Limit") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_i64() {
            Some(l) if l >= 1 => Some(l as usize),
            _ => {
                return Err(validation(format!(
                    "1 validation error detected: Value '{n}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
                )));
            }
        },
        Some(_) => {
            return Err(OpError::Serialization(
                "Unexpected value type in payload for Limit".into(),
            ));
        }
    };
    let filter = match string(req, "FilterExpression")? {
        Some(text) => Some(ex.filter(text)?),
        None => match req.get(filter_name) {
            None | Some(Value::Null) => None,
            Some(v) => {
                let parameter = if filter_name == "QueryFilter" {
                    "queryFilter"
                } else {
                    "scanFilter"
                };
                Some(expr::query_filter(
                    v,
                    parameter,
                    string(req, "ConditionalOperator")?,
                )?)
            }
        },
    };
    Ok(ReadShape {
        count_only,
        limit,
        projection,
        filter,
        consistency: read_consistency(req)?,
        capacity: ReturnCapacity::of(req)?,
    })
}

/// A page of a Query or Scan (of a table or an index) being filled.
pub(crate) struct Page {
    /// The items returned, printed as a JSON array without its closing bracket.
    items: Vec<u8>,
    count: usize,
    scanned: usize,
    bytes: usize,
    last: Option<Item>,
}

impl Page {
    pub(crate) fn new() -> Page {
        Page {
            items: vec![b'['],
            count: 0,
            scanned: 0,
            bytes: 0,
            last: None,
        }
    }

    /// Whether the page is full (by `Limit` or by 1 MB).
    pub(crate) fn full(&self, shape: &ReadShape) -> bool {
        shape.limit.is_some_and(|l| self.scanned >= l) || self.bytes >= MAX_PAGE_BYTES
    }

    /// The bytes read so far (what the read units are counted on).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many rows the next read asks for: the rows `Limit` still allows (a page never
    /// scans more), at most [`READ_CHUNK`]. Reading no further than `Limit` matters for the
    /// common "newest N" Query of a long item collection: each row read is decoded.
    pub(crate) fn rows_to_read(&self, shape: &ReadShape) -> usize {
        match shape.limit {
            Some(l) => l.saturating_sub(self.scanned).clamp(1, READ_CHUNK),
            None => READ_CHUNK,
        }
    }

    /// Count an item read: `size` bytes of it, `last` the key a next page starts after.
    pub(crate) fn read(&mut self, size: usize, last: Item) {
        self.scanned += 1;
        self.bytes += size;
        self.last = Some(last);
    }

    /// Whether `seen` (the item as the filter sees it) passes the filter, counted if it does,
    /// and is to be returned (not with `Select: COUNT`): then [`Page::push`] it.
    pub(crate) fn keep(&mut self, shape: &ReadShape, seen: &Item) -> bool {
        if shape.filter.as_ref().is_some_and(|f| !f.eval(seen)) {
            return false;
        }
        self.count += 1;
        !shape.count_only
    }

    /// End the page at `key` (the key attributes of the last row scanned, a deleted item's when
    /// the page ended on tombstones): the key a next page starts after.
    pub(crate) fn passed(&mut self, key: Item) {
        self.last = Some(key);
    }

    pub(crate) fn push(&mut self, item: &Item) {
        if self.items.len() > 1 {
            self.items.push(b',');
        }
        write_map(&mut self.items, item);
    }

    /// Count an item of the table read, and keep it if it passes the filter.
    /// The whole item is kept as the last one read (no copy of its key per item); the page's
    /// owner cuts it down to its key before finishing ([`Page::keep_key_of_last`]).
    fn add(&mut self, shape: &ReadShape, item: Item) {
        if self.keep(shape, &item) {
            match &shape.projection {
                Some(p) => self.push(&p.apply(&item)),
                None => self.push(&item),
            }
        }
        self.read(item.size_bytes(), item);
    }

    /// Count an item of the table read and returned whole (no filter, projection or COUNT),
    /// written straight from its row ([`ItemLayout::write_item`]). Its key, which a next page
    /// starts after, is for the caller to set in `last`.
    fn add_row(
        &mut self,
        layout: &ItemLayout,
        hash: &AttributeValue,
        range: Option<&AttributeValue>,
        row: &khata_types::row::Row,
        now: u32,
    ) -> Result<()> {
        if self.items.len() > 1 {
            self.items.push(b',');
        }
        let size = layout
            .write_item(&mut self.items, hash, range, row, now)
            .map_err(unreadable)?;
        self.count += 1;
        self.scanned += 1;
        self.bytes += size;
        Ok(())
    }

    /// Cut the last item read (added whole by [`Page::add`]) down to the table's key
    /// attributes, which a next page starts after.
    fn keep_key_of_last(&mut self, layout: &ItemLayout) {
        if let Some(last) = &mut self.last {
            let range = layout.range.as_ref().map(|(n, _)| n.as_str());
            last.retain(|name, _| *name == layout.hash.0 || Some(name.as_str()) == range);
        }
    }

    pub(crate) fn finish(mut self, shape: &ReadShape, more: bool) -> Body {
        let mut out = Body::new();
        if !shape.count_only {
            self.items.push(b']');
            out.raw("Items", self.items);
        }
        out.raw("Count", self.count.to_string().into_bytes());
        out.raw("ScannedCount", self.scanned.to_string().into_bytes());
        if more && let Some(last) = self.last {
            out.item("LastEvaluatedKey", &last);
        }
        out
    }
}

/// A stand-in value of a key type, for encoding the other half of a key.
fn probe(t: KeyType) -> AttributeValue {
    match t {
        KeyType::S => AttributeValue::S("x".into()),
        KeyType::B => AttributeValue::B(vec![1]),
        KeyType::N => AttributeValue::N(Number::zero()),
    }
}

/// The clustering bytes of a range-key value (type-checked as a key).
fn range_bytes(layout: &ItemLayout, v: &AttributeValue) -> Result<Bytes> {
    let (name, _) = layout
        .range
        .as_ref()
        .ok_or_else(|| validation("Query key condition not supported"))?;
    let mut key = crate::value::Map::new();
    key.insert(layout.hash.0.clone(), probe(layout.hash.1));
    key.insert(name.clone(), v.clone());
    Ok(layout
        .key_of_param(&key)
        .map_err(|_| {
            validation(
                "One or more parameter values were invalid: Condition parameter type does not match schema type",
            )
        })?
        .clustering)
}

/// The clustering byte range a range-key condition selects (`begins_with` selects from its
/// prefix on, and rows past the prefix are cut while reading).
fn range_of(layout: &ItemLayout, cond: Option<&RangeCondition>) -> Result<(Bytes, Bytes)> {
    let all = full_range();
    Ok(match cond {
        None => all,
        Some(RangeCondition::Eq(v)) => {
            let k = range_bytes(layout, v)?;
            (k.clone(), end_bound(&k, true))
        }
        Some(RangeCondition::Lt(v)) => (all.0, range_bytes(layout, v)?),
        Some(RangeCondition::Le(v)) => (all.0, end_bound(&range_bytes(layout, v)?, true)),
        Some(RangeCondition::Gt(v)) => (after_prefix(&range_bytes(layout, v)?), all.1),
        Some(RangeCondition::Ge(v)) => (range_bytes(layout, v)?, all.1),
        Some(RangeCondition::Between(lo, hi)) => (
            range_bytes(layout, lo)?,
            end_bound(&range_bytes(layout, hi)?, true),
        ),
        Some(RangeCondition::BeginsWith(v)) => {
            let k = range_bytes(layout, v)?;
            (k.clone(), prefix_end(&k))
        }
    })
}

/// The exclusive end of the keys whose S or B value starts with the value `key` encodes: the
/// clustering encoding of a string or binary is a header, its escaped bytes and a two-byte
/// terminator, so every extension shares the bytes before the terminator, and the least byte
/// string above all of them is those bytes with trailing `FF`s dropped and the last one
/// incremented.
pub(crate) fn prefix_end(key: &[u8]) -> Bytes {
    let mut shared = key[..key.len().saturating_sub(2)].to_vec();
    while shared.last() == Some(&0xFF) {
        shared.pop();
    }
    match shared.last_mut() {
        Some(last) => {
            *last += 1;
            Bytes::from(shared)
        }
        None => full_range().1,
    }
}

/// A Query's key condition on `hash` (and `range`): `KeyConditionExpression`, or the legacy
/// `KeyConditions`.
pub(crate) fn key_condition(
    req: &Object,
    ex: &mut Expressions<'_>,
    hash: &str,
    range: Option<&str>,
) -> Result<KeyCondition> {
    let condition = match string(req, "KeyConditionExpression")? {
        Some(text) => ex.key_condition(text, hash, range)?,
        None => match req.get("KeyConditions") {
            None | Some(Value::Null) => {
                return Err(validation(
                    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
                ));
            }
            Some(v) => expr::key_conditions(v, hash, range)?,
        },
    };
    not_empty(&condition.hash_value, hash)?;
    Ok(condition)
}

/// Refuses an empty S or B value for key attribute `key`, as DynamoDB does.
fn not_empty(value: &AttributeValue, key: &str) -> Result<()> {
    let empty = match value {
        AttributeValue::S(s) if s.is_empty() => Some("string"),
        AttributeValue::B(b) if b.is_empty() => Some("binary"),
        _ => None,
    };
    if let Some(what) = empty {
        return Err(validation(format!(
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty {what} value. Key: {key}"
        )));
    }
    Ok(())
}

/// A Query's key condition on a GSI with a multi-attribute key of these HASH and RANGE
/// attributes: `KeyConditionExpression`, or the legacy `KeyConditions`.
pub(crate) fn composite_key_condition(
    req: &Object,
    ex: &mut Expressions<'_>,
    hashes: &[&str],
    ranges: &[&str],
) -> Result<expr::CompositeKeyCondition> {
    let condition = match string(req, "KeyConditionExpression")? {
        Some(text) => ex.composite_key_condition(text, hashes, ranges)?,
        None => match req.get("KeyConditions") {
            None | Some(Value::Null) => {
                return Err(validation(
                    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
                ));
            }
            Some(v) => expr::composite_key_conditions(v, hashes, ranges)?,
        },
    };
    for (value, key) in condition.hash.iter().zip(hashes) {
        not_empty(value, key)?;
    }
    Ok(condition)
}

/// Refuses `Select: ALL_PROJECTED_ATTRIBUTES` on a table: only an index has a projection.
/// DynamoDB words it for a Query even when it answers a Scan.
fn not_projected(req: &Object) -> Result<()> {
    if string(req, "Select")? == Some("ALL_PROJECTED_ATTRIBUTES") {
        return Err(validation(
            "1 validation error detected: ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
        ));
    }
    Ok(())
}

/// A Query's `ScanIndexForward` (absent: forward).
pub(crate) fn scan_index_forward(req: &Object) -> Result<bool> {
    match req.get("ScanIndexForward") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Ok(true),
        Some(Value::Bool(false)) => Ok(false),
        Some(_) => Err(OpError::Serialization(
            "Unexpected value type in payload for ScanIndexForward".into(),
        )),
    }
}

/// Query (on an index: [`crate::indexes::query`]).
pub async fn query(coordinator: &Coordinator, layout: &ItemLayout, req: &Object) -> Result<Body> {
    expr::check_parameters(req, &expr::QUERY_PARAMETERS)?;
    if let Some(index) = string(req, "IndexName")? {
        return crate::indexes::query::query(coordinator, layout, req, index).await;
    }
    not_projected(req)?;
    let p = Placeholders::of(req, QUERY_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let range_name = layout.range.as_ref().map(|(n, _)| n.as_str());
    let key_condition = key_condition(req, &mut ex, &layout.hash.0, range_name)?;
    let shape = read_shape(req, &mut ex, "QueryFilter")?;
    layout.finish_expressions(ex)?;
    let keys: Vec<&str> = std::iter::once(layout.hash.0.as_str())
        .chain(range_name)
        .collect();
    filter_off_keys(req, &shape, &keys)?;
    let forward = scan_index_forward(req)?;
    // The partition, from the hash key's value.
    let mut key_item = crate::value::Map::new();
    key_item.insert(layout.hash.0.clone(), key_condition.hash_value.clone());
    if let Some((name, t)) = &layout.range {
        key_item.insert(name.clone(), probe(*t));
    }
    let partition = layout
        .key_of_param(&key_item)
        .map_err(|_| validation("One or more parameter values were invalid: Condition parameter type does not match schema type"))?
        .partition;
    let range_cond = key_condition.range.as_ref().map(|(_, c)| c);
    let (mut low, mut high) = range_of(layout, range_cond)?;
    if let Some(start) = req.get("ExclusiveStartKey").filter(|v| !v.is_null()) {
        let start = Item::from_json(start)?;
        let k = layout
            .key_of_param(&start)
            .map_err(|_| validation("The provided starting key is invalid: The provided key element does not match the schema"))?;
        start_within(range_cond.is_some(), &low, &high, &k.clustering)?;
        if k.partition != partition {
            return Err(validation(START_OUTSIDE_QUERY));
        }
        if forward {
            low = low.max(after_prefix(&k.clustering));
        } else {
            high = high.min(k.clustering.clone());
        }
    }
    let now = coordinator.now_seconds();
    let mut page = Page::new();
    let mut more = false;
    // Without a filter, a projection or COUNT every item read is returned whole: it is
    // written straight from its row instead of being built first. The range key of the last
    // one (outer `Some`) is the key a next page starts after.
    let whole = match shape.filter.is_none() && shape.projection.is_none() && !shape.count_only {
        true => Some(layout.hash_value(&partition).map_err(unreadable)?),
        false => None,
    };
    let mut last_whole: Option<Option<AttributeValue>> = None;
    let mut tombstones = 0;
    'read: while low < high && !page.full(&shape) {
        let read = coordinator
            .read_paged(
                ReadCommand {
                    table: layout.table.def.id,
                    key: partition.clone(),
                    ranges: vec![(low.clone(), high.clone())],
                    reversed: !forward,
                    row_limit: Some(page.rows_to_read(&shape)),
                    one_row: false,
                    now,
                },
                TOMBSTONE_PAGE_LIMIT.saturating_sub(tombstones).max(1),
                shape.consistency,
            )
            .await?;
        tombstones += read.tombstones_scanned;
        let rows: Vec<(&Bytes, &khata_types::row::Row)> = if forward {
            read.partition.live_rows(now).collect()
        } else {
            read.partition.live_rows(now).rev().collect()
        };
        // The last row the read scanned, live or not: where it stopped.
        let scanned = match forward {
            true => read.partition.rows.keys().next_back(),
            false => read.partition.rows.keys().next(),
        };
        let Some(last) = scanned.cloned() else {
            break;
        };
        for (clustering, row) in rows {
            if page.full(&shape) {
                more = true;
                break 'read;
            }
            if let Some(hash) = &whole {
                let range = match &layout.range {
                    Some(_) => Some(layout.range_value(clustering).map_err(unreadable)?),
                    None => None,
                };
                if let (Some(v), Some(c)) = (&range, range_cond)
                    && !c.matches(v)
                {
                    // Past a begins_with prefix: nothing further matches.
                    break 'read;
                }
                page.add_row(layout, hash, range.as_ref(), row, now)?;
                last_whole = Some(range);
                continue;
            }
            let item = layout
                .item(&partition, clustering, row, now)
                .map_err(unreadable)?;
            if let (Some((name, _)), Some(c)) = (&layout.range, range_cond)
                && let Some(v) = item.get(name)
                && !c.matches(v)
            {
                // Past a begins_with prefix: nothing further matches.
                break 'read;
            }
            page.add(&shape, item);
        }
        if !read.limit_reached {
            break;
        }
        if tombstones >= TOMBSTONE_PAGE_LIMIT {
            // The page has passed enough deleted items: it ends at the last key scanned.
            let range = match &layout.range {
                Some(_) => Some(layout.range_value(&last).map_err(unreadable)?),
                None => None,
            };
            if whole.is_some() {
                last_whole = Some(range);
            } else {
                let mut key = Item::new();
                key.insert(
                    layout.hash.0.clone(),
                    layout.hash_value(&partition).map_err(unreadable)?,
                );
                if let (Some((name, _)), Some(range)) = (&layout.range, range) {
                    key.insert(name.clone(), range);
                }
                page.passed(key);
            }
            more = true;
            break;
        }
        if forward {
            low = after_prefix(&last);
        } else {
            high = last;
        }
    }
    if page.full(&shape) && !more {
        // DynamoDB answers a LastEvaluatedKey whenever Limit (or 1 MB) ended the page.
        more = true;
    }
    if let (Some(hash), Some(range)) = (whole, last_whole) {
        let mut key = Item::new();
        key.insert(layout.hash.0.clone(), hash);
        if let (Some((name, _)), Some(range)) = (&layout.range, range) {
            key.insert(name.clone(), range);
        }
        page.last = Some(key);
    }
    let units = capacity::read_units(page.bytes, shape.consistency == Consistency::LocalQuorum);
    page.keep_key_of_last(layout);
    let mut answer = page.finish(&shape, more);
    capacity::attach_body(
        &mut answer,
        table_name(req),
        &Consumed::read(units),
        shape.capacity,
    );
    Ok(answer)
}

/// The clustering key a scan page stopped at (`resume`): the row it names, or, when it ended
/// after a whole partition, that partition's last row (deleted or not; empty for a table
/// without clustering). None if the partition left no row to name.
pub(crate) fn scanned_to(
    partitions: &[(DecoratedKey, khata_types::partition::Partition)],
    resume: &ScanPosition,
    clustered: bool,
) -> Option<Bytes> {
    if !clustered {
        return Some(Bytes::new());
    }
    if let Some(c) = &resume.last_clustering {
        return Some(c.clone());
    }
    let (key, partition) = partitions.last()?;
    (*key == resume.key)
        .then(|| partition.rows.keys().next_back().cloned())
        .flatten()
}

/// The error of a stored item that does not decode.
fn unreadable(e: crate::value::DecodeError) -> OpError {
    OpError::Internal(format!("stored item is unreadable: {}", e.0))
}

/// Scan, with parallel `Segment`/`TotalSegments`: segment `i` of `n` is the `i`th of `n`
/// equal slices of the token ring, so the segments together cover every item once.
pub async fn scan(coordinator: &Coordinator, layout: &ItemLayout, req: &Object) -> Result<Body> {
    expr::check_parameters(req, &expr::SCAN_PARAMETERS)?;
    if let Some(index) = string(req, "IndexName")? {
        return crate::indexes::query::scan(coordinator, layout, req, index).await;
    }
    not_projected(req)?;
    let p = Placeholders::of(req, SCAN_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let shape = read_shape(req, &mut ex, "ScanFilter")?;
    layout.finish_expressions(ex)?;
    let (start, end) = segment_range(req)?;
    let mut resume = match req.get("ExclusiveStartKey").filter(|v| !v.is_null()) {
        None => None,
        Some(start_key) => {
            let k = layout
                .key_of_param(&Item::from_json(start_key)?.0)
                .map_err(|_| validation("The provided starting key is invalid: The provided key element does not match the schema"))?;
            start_in_segment(req, k.partition.token, (start, end))?;
            Some(ScanPosition {
                key: k.partition,
                last_clustering: layout.range.as_ref().map(|_| k.clustering),
            })
        }
    };
    let now = coordinator.now_seconds();
    let mut page = Page::new();
    let mut more = false;
    let mut tombstones = 0;
    'read: while !page.full(&shape) {
        let result = coordinator
            .scan_paged(
                ScanCommand {
                    table: layout.table.def.id,
                    start,
                    end,
                    resume: resume.clone(),
                    row_limit: page.rows_to_read(&shape),
                    now,
                },
                TOMBSTONE_PAGE_LIMIT.saturating_sub(tombstones).max(1),
                shape.consistency,
            )
            .await?;
        tombstones += result.tombstones_scanned;
        for (key, partition) in &result.partitions {
            for (clustering, row) in partition.live_rows(now) {
                if page.full(&shape) {
                    more = true;
                    break 'read;
                }
                let item = layout.item(key, clustering, row, now).map_err(|e| {
                    OpError::Internal(format!("stored item is unreadable: {}", e.0))
                })?;
                page.add(&shape, item);
            }
        }
        let Some(r) = result.resume else {
            break;
        };
        if tombstones >= TOMBSTONE_PAGE_LIMIT
            && let Some(clustering) = scanned_to(&result.partitions, &r, layout.range.is_some())
        {
            // The page has passed enough deleted items: it ends where the scan stopped.
            let mut key = Item::new();
            let hash = layout.hash_value(&r.key).map_err(unreadable)?;
            key.insert(layout.hash.0.clone(), hash);
            if let Some((name, _)) = &layout.range {
                let range = layout.range_value(&clustering).map_err(unreadable)?;
                key.insert(name.clone(), range);
            }
            page.passed(key);
            more = true;
            break;
        }
        resume = Some(r);
    }
    if page.full(&shape) {
        more = true;
    }
    let units = capacity::read_units(page.bytes, shape.consistency == Consistency::LocalQuorum);
    page.keep_key_of_last(layout);
    let mut answer = page.finish(&shape, more);
    capacity::attach_body(
        &mut answer,
        table_name(req),
        &Consumed::read(units),
        shape.capacity,
    );
    Ok(answer)
}

/// The token range of a Scan's `Segment` of `TotalSegments` (the whole ring without them).
pub(crate) fn segment_range(req: &Object) -> Result<(Bound<Token>, Bound<Token>)> {
    let segment = req.get("Segment").and_then(Value::as_i64);
    let total = req.get("TotalSegments").and_then(Value::as_i64);
    // The parameters' own limits first, all of them in one message as DynamoDB gives them.
    let mut errors = Vec::new();
    if let Some(s) = segment.filter(|s| !(0..=999_999).contains(s)) {
        let bound = if s < 0 {
            "greater than or equal to 0"
        } else {
            "less than or equal to 999999"
        };
        errors.push(format!(
            "Value '{s}' at 'segment' failed to satisfy constraint: Member must have value {bound}"
        ));
    }
    if let Some(t) = total.filter(|t| !(1..=1_000_000).contains(t)) {
        let bound = if t < 1 {
            "greater than or equal to 1"
        } else {
            "less than or equal to 1000000"
        };
        errors.push(format!(
            "Value '{t}' at 'totalSegments' failed to satisfy constraint: Member must have value {bound}"
        ));
    }
    if !errors.is_empty() {
        let n = errors.len();
        return Err(validation(format!(
            "{n} validation error{} detected: {}",
            if n == 1 { "" } else { "s" },
            errors.join("; ")
        )));
    }
    Ok(match (segment, total) {
        (None, None) => (Bound::Unbounded, Bound::Unbounded),
        (Some(s), Some(t)) if (0..t).contains(&s) => segment_bounds(s as u64, t as u64),
        (Some(_), Some(_)) => {
            return Err(validation(
                "The Segment parameter is zero-based and must be less than parameter TotalSegments",
            ));
        }
        (Some(_), None) => {
            return Err(validation(
                "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
            ));
        }
        (None, Some(_)) => {
            return Err(validation(
                "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
            ));
        }
    })
}

/// Refuses a Scan's `ExclusiveStartKey` whose partition lies outside the requested segment:
/// a key from another segment's pages.
pub(crate) fn start_in_segment(
    req: &Object,
    token: Token,
    segment: (Bound<Token>, Bound<Token>),
) -> Result<()> {
    use std::ops::RangeBounds;
    if segment.contains(&token) {
        return Ok(());
    }
    let value = |name: &str| req.get(name).and_then(Value::as_i64).unwrap_or_default();
    Err(validation(format!(
        "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: {} Segment: {}",
        value("TotalSegments"),
        value("Segment")
    )))
}

/// The token range of scan segment `segment` of `total`.
pub(crate) fn segment_bounds(segment: u64, total: u64) -> (Bound<Token>, Bound<Token>) {
    // Tokens run from i64::MIN (never a real token) to i64::MAX: 2^64 values.
    let width = (u128::from(u64::MAX) + 1) / u128::from(total);
    let at = |i: u64| (i128::from(i64::MIN) + (width * u128::from(i)) as i128) as i64;
    let start = if segment == 0 {
        Bound::Unbounded
    } else {
        Bound::Included(Token(at(segment)))
    };
    let end = if segment + 1 == total {
        Bound::Unbounded
    } else {
        Bound::Excluded(Token(at(segment + 1)))
    };
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_the_ring() {
        for total in [1u64, 2, 3, 7, 1000] {
            let bounds: Vec<_> = (0..total).map(|s| segment_bounds(s, total)).collect();
            assert_eq!(bounds[0].0, Bound::Unbounded);
            assert_eq!(bounds[total as usize - 1].1, Bound::Unbounded);
            for w in bounds.windows(2) {
                match (w[0].1, w[1].0) {
                    (Bound::Excluded(a), Bound::Included(b)) => assert_eq!(a, b),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_token_falls_in_exactly_one_segment() {
        let total = 5;
        for t in [i64::MIN + 1, -1, 0, 1, i64::MAX, 3_689_348_814_741_910_323] {
            let inside = (0..total)
                .filter(|s| {
                    let (lo, hi) = segment_bounds(*s, total);
                    let above = match lo {
                        Bound::Unbounded => true,
                        Bound::Included(x) => Token(t) >= x,
                        Bound::Excluded(x) => Token(t) > x,
                    };
                    let below = match hi {
                        Bound::Unbounded => true,
                        Bound::Included(x) => Token(t) <= x,
                        Bound::Excluded(x) => Token(t) < x,
                    };
                    above && below
                })
                .count();
            assert_eq!(inside, 1, "token {t}");
        }
    }
}
