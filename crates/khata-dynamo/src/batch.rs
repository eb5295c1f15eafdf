//! BatchGetItem and BatchWriteItem: many items of one or more tables in one request.
//!
//! DynamoDB's rules, checked before anything is read or written: at most 100 keys in a
//! BatchGetItem and 25 requests in a BatchWriteItem (over all tables), every key valid for its
//! table, no item twice in one table's list ("Provided list of item keys contains
//! duplicates"), an unknown table is `ResourceNotFoundException` for the whole request.
//!
//! BatchGetItem reads each key as GetItem does (`ConsistentRead` per table) and answers
//! `Responses` per table; once the items answered pass 16 MB the keys not yet read come back in
//! `UnprocessedKeys` with their table's projection and consistency, as DynamoDB does. Nothing
//! else makes a key unprocessed on a healthy node, so `UnprocessedKeys` is empty otherwise.
//!
//! BatchWriteItem writes every item whole (PutRequest as PutItem, DeleteRequest as
//! DeleteItem, no conditions). Each item's write is atomic; khata happens to apply the whole
//! batch as one commit-log record, which DynamoDB does not promise and clients must not rely
//! on. When `ReturnConsumedCapacity` asks for units, or a table has a stream or secondary
//! indexes (whose records and entries depend on the old item), the old items are read (under
//! their compare-and-set locks, see [`Coordinator::cas_many`]) and handed to
//! [`item_writes::append`]; the units then count the larger of old and new as DynamoDB's do.
//! Otherwise the writes are blind. `UnprocessedItems` is always empty on a healthy node.

use std::collections::HashSet;

use khata_coordinator::catalog::{CasManyOutcome, CasRead, Mutation};
use khata_coordinator::{Consistency, Coordinator, ReadCommand, WriteType};
use serde_json::{Map as JsonMap, Value};

use crate::capacity::{self, Consumed, PerTable, ReturnCapacity};
use crate::error::{DynamoError, Result};
use crate::expr::{Expressions, Projection};
use crate::item_ops::{self, OpError, Placeholders};
use crate::item_writes::{self, Before};
use crate::items::{ItemKey, ItemLayout};
use crate::ops::Operations;
use crate::value::Item;

/// The most keys one BatchGetItem reads.
pub const MAX_BATCH_GET_KEYS: usize = 100;
/// The most requests one BatchWriteItem makes.
pub const MAX_BATCH_WRITE_REQUESTS: usize = 25;
/// The most item bytes one BatchGetItem answers; the rest is `UnprocessedKeys`.
pub const MAX_BATCH_GET_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

type Object = JsonMap<String, Value>;

fn op(e: impl Into<OpError>) -> DynamoError {
    DynamoError::from(e.into())
}

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Object> {
    match v {
        Value::Object(o) => Ok(o),
        _ => Err(DynamoError::serialization(format!(
            "Unexpected value type in payload for {what}"
        ))),
    }
}

/// `RequestItems`: required, a non-empty map.
fn request_items(req: &Object) -> Result<&Object> {
    match req.get("RequestItems") {
        None | Some(Value::Null) => Err(DynamoError::validation(
            "1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null",
        )),
        Some(Value::Object(m)) if m.is_empty() => Err(DynamoError::validation(
            "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
        )),
        Some(v) => object(v, "RequestItems"),
    }
}

/// `ReturnItemCollectionMetrics`: whether it is `SIZE` (only tables with local secondary
/// indexes have item collections to measure, [`crate::collections`]).
pub(crate) fn item_collection_metrics(req: &Object) -> Result<bool> {
    crate::collections::wanted(req).map_err(op)
}

/// `ItemCollectionSizeLimitExceededException`.
pub(crate) fn collection_size_exceeded() -> DynamoError {
    DynamoError::from(item_ops::OpError::CollectionSizeExceeded)
}

/// A table of a batch, resolved.
struct BatchTable {
    name: String,
    layout: ItemLayout,
    /// Whether writes must know the old item: the table has a stream (old images, INSERT or
    /// MODIFY) or secondary indexes (entries to remove).
    needs_old: bool,
}

fn resolve(ops: &Operations, name: &str) -> Result<BatchTable> {
    let table = ops.table(name)?;
    let layout = crate::ops::item_layout(&table)?;
    let meta = &table.meta;
    let needs_old = meta.stream.as_ref().is_some_and(|s| s.enabled)
        || !meta.global_secondary_indexes.is_empty()
        || !meta.local_secondary_indexes.is_empty();
    Ok(BatchTable {
        name: name.to_string(),
        layout,
        needs_old,
    })
}

/// The duplicate check of both batches: one table's keys, by engine key.
fn check_duplicates(keys: &[ItemKey]) -> Result<()> {
    let mut seen = HashSet::with_capacity(keys.len());
    for k in keys {
        if !seen.insert((k.partition.key.clone(), k.clustering.clone())) {
            return Err(DynamoError::validation(
                "Provided list of item keys contains duplicates",
            ));
        }
    }
    Ok(())
}

/// One table's part of a BatchGetItem.
struct GetTable {
    table: BatchTable,
    request: Object,
    keys: Vec<(Item, ItemKey)>,
    projection: Option<Projection>,
    consistent: bool,
}

fn get_table(ops: &Operations, name: &str, request: &Value) -> Result<GetTable> {
    let request = object(request, "RequestItems")?;
    let keys = match request.get("Keys") {
        None | Some(Value::Null) => {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value null at 'requestItems.{name}.member.keys' failed to satisfy constraint: Member must not be null"
            )));
        }
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(DynamoError::serialization(
                "Unexpected value type in payload for Keys",
            ));
        }
    };
    if keys.is_empty() || keys.len() > MAX_BATCH_GET_KEYS {
        let bound = if keys.is_empty() {
            "greater than or equal to 1"
        } else {
            "less than or equal to 100"
        };
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '[...]' at 'requestItems.{name}.member.keys' failed to satisfy constraint: Member must have length {bound}"
        )));
    }
    if request
        .get("AttributesToGet")
        .and_then(Value::as_array)
        .is_some_and(|a| a.is_empty())
    {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '[]' at 'requestItems.{name}.member.attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1"
        )));
    }
    let table = resolve(ops, name)?;
    let p = Placeholders::of(request, item_ops::GET_EXPRESSIONS).map_err(op)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let projection = item_ops::projection(request, &mut ex).map_err(op)?;
    if !p.values.is_empty() {
        let mut names: Vec<&String> = p.values.keys().collect();
        names.sort();
        let names: Vec<&str> = names.into_iter().map(String::as_str).collect();
        return Err(DynamoError::validation(format!(
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{}}}",
            names.join(", ")
        )));
    }
    table.layout.finish_expressions(ex).map_err(op)?;
    let consistent = item_ops::read_consistency(request).map_err(op)? == Consistency::LocalQuorum;
    let mut parsed = Vec::with_capacity(keys.len());
    for k in keys {
        let item = Item::from_json(k).map_err(op)?;
        let key = table.layout.key_of_param(&item).map_err(op)?;
        parsed.push((item, key));
    }
    let engine_keys: Vec<ItemKey> = parsed.iter().map(|(_, k)| k.clone()).collect();
    check_duplicates(&engine_keys)?;
    Ok(GetTable {
        table,
        request: request.clone(),
        keys: parsed,
        projection,
        consistent,
    })
}

/// BatchGetItem.
pub async fn batch_get_item(ops: &Operations, req: &Object) -> Result<Value> {
    let capacity_mode = ReturnCapacity::of(req).map_err(op)?;
    let items = request_items(req)?;
    let mut tables = Vec::with_capacity(items.len());
    let mut total = 0;
    for (name, request) in items {
        let t = get_table(ops, name, request)?;
        total += t.keys.len();
        tables.push(t);
    }
    if total > MAX_BATCH_GET_KEYS {
        return Err(DynamoError::validation(
            "Too many items requested for the BatchGetItem call",
        ));
    }
    let coordinator = &ops.coordinator;
    let now = coordinator.now_seconds();
    let mut responses = JsonMap::new();
    let mut unprocessed = JsonMap::new();
    let mut consumed = PerTable::default();
    let mut answered_bytes = 0usize;
    // Once an item would take the answer past 16 MB, it and every key after it are left.
    let mut full = false;
    for t in &tables {
        let mut found = Vec::new();
        let mut left = Vec::new();
        let cl = if t.consistent {
            Consistency::LocalQuorum
        } else {
            Consistency::LocalOne
        };
        for (key_item, key) in &t.keys {
            if full {
                left.push(key_item.to_json());
                continue;
            }
            let read = coordinator
                .read(
                    ReadCommand {
                        table: t.table.layout.table.def.id,
                        key: key.partition.clone(),
                        ranges: vec![t.table.layout.row_range(key)],
                        reversed: false,
                        row_limit: Some(1),
                        one_row: true,
                        now,
                    },
                    cl,
                )
                .await
                .map_err(DynamoError::from)?;
            let item = item_ops::stored_item(&t.table.layout, key, &read, now).map_err(op)?;
            // Units count the whole item; the 16 MB the answer.
            let units = capacity::item_read_units(item.as_ref(), t.consistent);
            let item = item.map(|item| match &t.projection {
                Some(p) => p.apply(&item),
                None => item,
            });
            let bytes = item.as_ref().map_or(0, Item::size_bytes);
            if answered_bytes + bytes > MAX_BATCH_GET_RESPONSE_BYTES {
                full = true;
                left.push(key_item.to_json());
                continue;
            }
            consumed.add(&t.table.name, &Consumed::read(units));
            if let Some(item) = item {
                answered_bytes += bytes;
                found.push(item.to_json());
            }
        }
        responses.insert(t.table.name.clone(), Value::Array(found));
        if !left.is_empty() {
            let mut rest = t.request.clone();
            rest.insert("Keys".into(), Value::Array(left));
            unprocessed.insert(t.table.name.clone(), Value::Object(rest));
        }
    }
    let mut out = JsonMap::new();
    out.insert("Responses".into(), Value::Object(responses));
    out.insert("UnprocessedKeys".into(), Value::Object(unprocessed));
    if capacity_mode.wanted() {
        out.insert("ConsumedCapacity".into(), consumed.to_json(capacity_mode));
    }
    Ok(Value::Object(out))
}

/// One item write of a BatchWriteItem.
struct BatchWrite {
    table: usize,
    key: ItemKey,
    /// The item a PutRequest writes; `None` for a DeleteRequest.
    item: Option<Item>,
}

fn write_request(
    table: &BatchTable,
    index: usize,
    request: &Value,
    path: &str,
) -> Result<BatchWrite> {
    let request = object(request, "WriteRequest")?;
    let put = request.get("PutRequest").filter(|v| !v.is_null());
    let delete = request.get("DeleteRequest").filter(|v| !v.is_null());
    match (put, delete) {
        (Some(put), None) => {
            let put = object(put, "PutRequest")?;
            let item = item_ops::item_param(put, "Item", &format!("{path}.member.putRequest.item"))
                .map_err(op)?;
            // BatchWriteItem words an item without its key as it words a bad key, where
            // PutItem names the missing attribute.
            if !table.layout.has_key_attributes(&item) {
                return Err(DynamoError::validation(
                    "The provided key element does not match the schema",
                ));
            }
            let key = table.layout.key_of_item(&item).map_err(op)?;
            if item.size_bytes() > crate::value::MAX_ITEM_SIZE_BYTES {
                return Err(DynamoError::validation(
                    "Item size has exceeded the maximum allowed size",
                ));
            }
            Ok(BatchWrite {
                table: index,
                key,
                item: Some(item),
            })
        }
        (None, Some(delete)) => {
            let delete = object(delete, "DeleteRequest")?;
            let key_item =
                item_ops::item_param(delete, "Key", &format!("{path}.member.deleteRequest.key"))
                    .map_err(op)?;
            let key = table.layout.key_of_param(&key_item).map_err(op)?;
            Ok(BatchWrite {
                table: index,
                key,
                item: None,
            })
        }
        _ => Err(DynamoError::validation(
            "Supplied WriteRequest must contain exactly one of PutRequest and DeleteRequest",
        )),
    }
}

/// BatchWriteItem.
pub async fn batch_write_item(ops: &Operations, req: &Object) -> Result<Value> {
    let capacity_mode = ReturnCapacity::of(req).map_err(op)?;
    let metrics_wanted = item_collection_metrics(req)?;
    let items = request_items(req)?;
    let mut tables = Vec::with_capacity(items.len());
    let mut writes = Vec::new();
    for (name, requests) in items {
        let requests = match requests {
            Value::Array(a) => a,
            _ => {
                return Err(DynamoError::serialization(
                    "Unexpected value type in payload for RequestItems",
                ));
            }
        };
        if requests.is_empty() || requests.len() > MAX_BATCH_WRITE_REQUESTS {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value '{{{name}=[...]}}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"
            )));
        }
        let table = resolve(ops, name)?;
        let index = tables.len();
        let path = format!("requestItems.{name}");
        let mut keys = Vec::with_capacity(requests.len());
        for r in requests {
            let w = write_request(&table, index, r, &path)?;
            keys.push(w.key.clone());
            writes.push(w);
        }
        check_duplicates(&keys)?;
        tables.push(table);
    }
    if writes.len() > MAX_BATCH_WRITE_REQUESTS {
        return Err(DynamoError::validation(
            "Too many items requested for the BatchWriteItem call",
        ));
    }
    ops.with_writers(tables.iter_mut().map(|t| &mut t.layout))
        .await?;
    let coordinator = &ops.coordinator;
    let read_old = if capacity_mode.wanted() || tables.iter().any(|t| t.needs_old) {
        Some(write_reading_old(coordinator, &tables, writes).await?)
    } else {
        let ts = coordinator.timestamp();
        let now = coordinator.now_seconds();
        let mut out = item_writes::Writes::with_capacity(writes.len());
        for w in &writes {
            let layout = &tables[w.table].layout;
            let m = mutation_of(layout, w, ts, now)?;
            out.append(layout, Before::Unknown, w.item.as_ref(), m, ts, now)
                .map_err(|e| DynamoError::validation(e.0))?;
        }
        coordinator
            .write(out.mutations, Consistency::LocalQuorum, WriteType::Batch)
            .await
            .map_err(DynamoError::from)?;
        None
    };
    let mut out = JsonMap::new();
    out.insert("UnprocessedItems".into(), Value::Object(JsonMap::new()));
    if let Some((consumed, metrics)) = read_old {
        if capacity_mode.wanted() {
            out.insert("ConsumedCapacity".into(), consumed.to_json(capacity_mode));
        }
        if metrics_wanted && !metrics.is_empty() {
            out.insert(
                "ItemCollectionMetrics".into(),
                crate::collections::Metric::map_json(&metrics),
            );
        }
    }
    Ok(Value::Object(out))
}

fn mutation_of(layout: &ItemLayout, w: &BatchWrite, ts: i64, now: u32) -> Result<Mutation> {
    Ok(match &w.item {
        Some(item) => layout.put(&w.key, item, ts, now).map_err(op)?,
        None => layout.delete(&w.key, ts, now),
    })
}

/// The batch's writes with the old items read first, for the units, the derived writes and
/// the item collections' sizes (which it answers).
async fn write_reading_old(
    coordinator: &Coordinator,
    tables: &[BatchTable],
    writes: Vec<BatchWrite>,
) -> Result<(PerTable, Vec<crate::collections::Metric>)> {
    let reads: Vec<CasRead> = writes
        .iter()
        .map(|w| CasRead {
            table: tables[w.table].layout.table.def.id,
            key: w.key.partition.clone(),
            ranges: vec![tables[w.table].layout.row_range(&w.key)],
        })
        .collect();
    let layouts: Vec<(String, ItemLayout)> = tables
        .iter()
        .map(|t| (t.name.clone(), t.layout.clone()))
        .collect();
    let now = coordinator.now_seconds();
    let stamps = coordinator.timestamp_source();
    let result = std::sync::Arc::new(parking_lot::Mutex::new(None));
    let shared = result.clone();
    let tickets = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let shared_tickets = tickets.clone();
    let settle_reads = reads.clone();
    let outcome = coordinator
        .cas_many(reads, now, Consistency::LocalSerial, None, move |reads| {
            let ts = stamps.next();
            let mut consumed = PerTable::default();
            let mut out = item_writes::Writes::with_capacity(writes.len());
            let decided: Result<()> = (|| {
                for (i, (w, read)) in writes.iter().zip(reads).enumerate() {
                    let (name, layout) = &layouts[w.table];
                    let old = item_ops::stored_item(layout, &w.key, read, now).map_err(op)?;
                    consumed.add(
                        name,
                        &Consumed::write(capacity::write_units(old.as_ref(), w.item.as_ref()))
                            .with_index_writes(&layout.indexes, old.as_ref(), w.item.as_ref()),
                    );
                    let m = mutation_of(layout, w, ts, now)?;
                    out.append(
                        layout,
                        Before::Known(old.as_ref()),
                        w.item.as_ref(),
                        m,
                        ts,
                        now,
                    )
                    .map_err(|e| DynamoError::validation(e.0))?;
                    out.note_collection(
                        i,
                        name,
                        layout,
                        &w.key,
                        read,
                        old.as_ref(),
                        w.item.as_ref(),
                        ts,
                        now,
                    );
                }
                out.finish_collections()
                    .map_err(|_| collection_size_exceeded())
            })();
            *shared_tickets.lock() = std::mem::take(&mut out.tickets);
            let metrics = std::mem::take(&mut out.metrics);
            let write = decided.is_ok().then_some(out.mutations);
            *shared.lock() = Some(decided.map(|_| (consumed, metrics)));
            write
        })
        .await;
    let applied = match &outcome {
        Ok(CasManyOutcome::Decided { applied, .. }) => Some(*applied),
        Ok(CasManyOutcome::Conflict(_)) => Some(false),
        Err(khata_coordinator::CoordinatorError::WriteTimeout { .. }) => None,
        Err(_) => Some(false),
    };
    crate::streams::settle_many(tickets, applied, settle_reads);
    match outcome.map_err(DynamoError::from)? {
        CasManyOutcome::Decided { .. } => {}
        CasManyOutcome::Conflict(_) => {
            return Err(DynamoError::internal(
                "batch write could not lock its items",
            ));
        }
    }
    let decided = result.lock().take();
    decided.unwrap_or_else(|| Err(DynamoError::internal("batch write was not decided")))
}
