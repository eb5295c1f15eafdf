//! TransactWriteItems and TransactGetItems: all-or-nothing groups of up to 100 actions on
//! items of one or more tables.
//!
//! A transaction runs as one [`Coordinator::cas_many`]: it takes the compare-and-set lock of
//! every item it names (in one global order, the same locks single-item conditional writes and
//! UpdateItem take), reads every item, checks every condition, and either applies every write
//! as ONE commit-log record or writes nothing. Other transactions and conditional writes on
//! the same items wait or conflict; they never see half a transaction.
//!
//! Checks, in DynamoDB's order and with its answers:
//! - the request's shape (1 to 100 actions, each exactly one of Put, Update, Delete,
//!   ConditionCheck; expressions parse and use every name and value they are given;
//!   `ReturnValuesOnConditionCheckFailure`; a `ClientRequestToken` of 1 to 36 characters):
//!   `ValidationException` for the whole request; an unknown table is
//!   `ResourceNotFoundException`;
//! - at most 4 MB of items and keys in the request, and no item named twice ("Transaction
//!   request cannot include multiple operations on one item"): `ValidationException`;
//! - an item that is invalid for its table (key types, key sizes, the 400 KB item limit): the
//!   transaction is cancelled with `ValidationError` for the first such action and `None` for
//!   the others, nothing read;
//! - under the locks, every condition: any false one cancels the transaction with
//!   `ConditionalCheckFailed` for each failed action (with the item when the action asked for
//!   `ALL_OLD`) and `None` for the others; an update that cannot apply (wrong types, a key
//!   attribute, the size limit) is `ValidationError`.
//!
//! A cancellation is `TransactionCanceledException` with `CancellationReasons`, and the message
//! "Transaction cancelled, please refer cancellation reasons for specific reasons [None,
//! ConditionalCheckFailed]" naming each reason in order.
//!
//! TransactionConflict: a transaction waits at most [`TRANSACTION_LOCK_WAIT`] for each lock.
//! A lock held longer (another transaction or conditional write is busy with the item) cancels
//! the transaction with `TransactionConflict` for the actions on that lock's items and `None`
//! for the rest, nothing read or written; clients retry, as they do against DynamoDB. The
//! bound is per lock and the locks are ordered, so there is no deadlock whatever the bound.
//!
//! Idempotency: a `ClientRequestToken` remembers a successful TransactWriteItems for 10
//! minutes (on this node). The same token with the same request answers the stored answer
//! without writing again, its `ConsumedCapacity` the read units of reading the items (a
//! transactional read of each as the transaction left it), as DynamoDB's reference says of
//! such calls; with a different request it is
//! `IdempotentParameterMismatchException`; while the first is still running it is
//! `TransactionInProgressException`. A cancelled transaction is not remembered, so it can be
//! retried with its token.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use khata_coordinator::catalog::{CasManyOutcome, CasRead, Mutation, ReadResult};
use khata_coordinator::{Consistency, Coordinator};
use parking_lot::Mutex;
use serde_json::{Map as JsonMap, Value};
use sha2::{Digest, Sha256};

use crate::capacity::{self, Consumed, PerTable, ReturnCapacity};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::expr::{Condition, Expressions, Projection, Update};
use crate::item_ops::{self, OpError, Placeholders};
use crate::item_writes::{self, Before};
use crate::items::{ItemKey, ItemLayout};
use crate::ops::Operations;
use crate::value::{Item, MAX_ITEM_SIZE_BYTES};

/// The most actions in one transaction.
pub const MAX_TRANSACTION_ACTIONS: usize = 100;
/// The most bytes of items and keys one TransactWriteItems carries.
pub const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;
/// How long a transaction waits for each item's lock before it is cancelled with
/// `TransactionConflict`.
pub const TRANSACTION_LOCK_WAIT: Duration = Duration::from_millis(100);
/// How long a `ClientRequestToken` is remembered.
pub const IDEMPOTENCY_WINDOW_SECONDS: u32 = 600;
/// The most tokens remembered at once (the oldest are forgotten first past it).
pub const MAX_REMEMBERED_TOKENS: usize = 100_000;

type Object = JsonMap<String, Value>;

fn op(e: impl Into<OpError>) -> DynamoError {
    DynamoError::from(e.into())
}

/// Why one action of a transaction did not go through (DynamoDB's `CancellationReason`).
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    None,
    ConditionalCheckFailed(Option<Item>),
    TransactionConflict,
    ValidationError(String),
    /// The transaction would grow the action's item collection past its limit.
    ItemCollectionSizeLimitExceeded,
}

impl Reason {
    fn code(&self) -> &'static str {
        match self {
            Reason::None => "None",
            Reason::ConditionalCheckFailed(_) => "ConditionalCheckFailed",
            Reason::TransactionConflict => "TransactionConflict",
            Reason::ValidationError(_) => "ValidationError",
            Reason::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
        }
    }

    fn to_json(&self) -> Value {
        let mut out = JsonMap::new();
        out.insert("Code".into(), Value::String(self.code().into()));
        let message = match self {
            Reason::None => None,
            Reason::ConditionalCheckFailed(_) => Some("The conditional request failed".into()),
            Reason::TransactionConflict => Some("Transaction is ongoing for the item".into()),
            Reason::ValidationError(m) => Some(m.clone()),
            Reason::ItemCollectionSizeLimitExceeded => {
                Some(crate::collections::LIMIT_MESSAGE.into())
            }
        };
        if let Some(m) = message {
            out.insert("Message".into(), Value::String(m));
        }
        if let Reason::ConditionalCheckFailed(Some(item)) = self {
            out.insert("Item".into(), item.to_json());
        }
        Value::Object(out)
    }
}

/// `TransactionCanceledException` with one reason per action.
pub fn cancelled(reasons: &[Reason]) -> DynamoError {
    let codes: Vec<&str> = reasons.iter().map(Reason::code).collect();
    let mut e = DynamoError::new(
        ErrorKind::TransactionCanceled,
        format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
    );
    e.reasons = Some(Box::new(Value::Array(
        reasons.iter().map(Reason::to_json).collect(),
    )));
    e
}

/// `TransactItems`: required, 1 to 100 structures.
fn transact_items(req: &Object) -> Result<Vec<&Object>> {
    let items = match req.get("TransactItems") {
        None | Some(Value::Null) => {
            return Err(DynamoError::validation(
                "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: Member must not be null",
            ));
        }
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(DynamoError::serialization(
                "Unexpected value type in payload for TransactItems",
            ));
        }
    };
    if items.is_empty() {
        return Err(DynamoError::validation(
            "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
        ));
    }
    if items.len() > MAX_TRANSACTION_ACTIONS {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to {MAX_TRANSACTION_ACTIONS}"
        )));
    }
    items
        .iter()
        .map(|v| match v {
            Value::Object(o) => Ok(o),
            _ => Err(DynamoError::serialization(
                "Unexpected value type in payload for TransactItems",
            )),
        })
        .collect()
}

/// Resolved tables of one request, by name.
#[derive(Default)]
struct Tables(HashMap<String, ItemLayout>);

impl Tables {
    fn get(&mut self, ops: &Operations, action: &Object) -> Result<(String, ItemLayout)> {
        let name = match action.get("TableName") {
            Some(Value::String(n)) => n.clone(),
            None | Some(Value::Null) => {
                return Err(DynamoError::validation(
                    "1 validation error detected: Value null at 'transactItems.member.tableName' failed to satisfy constraint: Member must not be null",
                ));
            }
            Some(_) => {
                return Err(DynamoError::serialization(
                    "Unexpected value type in payload for TableName",
                ));
            }
        };
        if let Some(l) = self.0.get(&name) {
            return Ok((name, l.clone()));
        }
        // A transaction's missing table is "Requested resource not found", without the
        // table's name that the single-item operations give.
        let table = ops.table(&name).map_err(|e| {
            if e.kind == ErrorKind::ResourceNotFound {
                DynamoError::new(ErrorKind::ResourceNotFound, "Requested resource not found")
            } else {
                e
            }
        })?;
        let layout = crate::ops::item_layout(&table)?;
        self.0.insert(name.clone(), layout.clone());
        Ok((name, layout))
    }
}

/// What a write action does to its item.
#[derive(Clone)]
enum Write {
    Put(Item),
    Delete,
    Update { key_item: Item, update: Update },
    Check,
}

/// One action of a TransactWriteItems, parsed and checked.
#[derive(Clone)]
struct Action {
    table: String,
    layout: ItemLayout,
    /// `Err` when the item is invalid for its table (the action's `ValidationError`).
    key: std::result::Result<ItemKey, String>,
    write: Write,
    condition: Option<Condition>,
    all_old_on_failure: bool,
    /// Bytes the action carries (its item or key), for the 4 MB limit.
    bytes: usize,
}

fn action_kind(action: &Object) -> Result<(&'static str, &Object)> {
    let mut found = None;
    for kind in ["ConditionCheck", "Put", "Delete", "Update"] {
        if let Some(v) = action.get(kind).filter(|v| !v.is_null()) {
            if found.is_some() {
                found = None;
                break;
            }
            match v {
                Value::Object(o) => found = Some((kind, o)),
                _ => {
                    return Err(DynamoError::serialization(format!(
                        "Unexpected value type in payload for {kind}"
                    )));
                }
            }
        }
    }
    found.ok_or_else(|| {
        DynamoError::validation(
            "TransactItems can only contain one of Check, Put, Update or Delete",
        )
    })
}

fn write_action(
    ops: &Operations,
    tables: &mut Tables,
    index: usize,
    raw: &Object,
) -> Result<Action> {
    let (kind, body) = action_kind(raw)?;
    let (table, layout) = tables.get(ops, body)?;
    let member = match kind {
        "ConditionCheck" => "conditionCheck",
        "Put" => "put",
        "Delete" => "delete",
        _ => "update",
    };
    // The members the action must have come first: their absence is a constraint of the
    // request's shape, which DynamoDB checks before what the placeholders are for.
    let condition_text = item_ops::string(body, "ConditionExpression").map_err(op)?;
    if condition_text.is_none() && kind == "ConditionCheck" {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value null at 'transactItems.{}.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null",
            index + 1
        )));
    }
    let update_text = match kind {
        "Update" => item_ops::string(body, "UpdateExpression").map_err(op)?,
        _ => None,
    };
    if update_text.is_none() && kind == "Update" {
        return Err(DynamoError::validation(format!(
            "1 validation error detected: Value null at 'transactItems.{}.member.update.updateExpression' failed to satisfy constraint: Member must not be null",
            index + 1
        )));
    }
    let expressions = if kind == "Update" {
        item_ops::UPDATE_EXPRESSIONS
    } else {
        item_ops::WRITE_EXPRESSIONS
    };
    let p = Placeholders::of(body, expressions).map_err(op)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let condition = match condition_text {
        Some(text) => Some(ex.condition(text).map_err(op)?),
        None => None,
    };
    let update = match update_text {
        Some(text) => Some(ex.update(text).map_err(op)?),
        None => None,
    };
    layout.finish_expressions(ex).map_err(op)?;
    let all_old_on_failure = item_ops::all_old_on_failure(body).map_err(op)?;
    let path = format!("transactItems.{}.member.{member}", index + 1);
    let (write, key, bytes) = match kind {
        "Put" => {
            let item = item_ops::item_param(body, "Item", &format!("{path}.item")).map_err(op)?;
            let key = layout.key_of_item(&item).map_err(|e| e.0).and_then(|k| {
                if item.size_bytes() > MAX_ITEM_SIZE_BYTES {
                    Err("Item size has exceeded the maximum allowed size".to_string())
                } else {
                    Ok(k)
                }
            });
            let bytes = item.size_bytes();
            (Write::Put(item), key, bytes)
        }
        _ => {
            let key_item = item_ops::item_param(body, "Key", &format!("{path}.key")).map_err(op)?;
            let key = layout.key_of_param(&key_item).map_err(|e| e.0);
            let bytes = key_item.size_bytes();
            let write = match (kind, update) {
                ("Update", Some(update)) => Write::Update { key_item, update },
                ("Delete", _) => Write::Delete,
                _ => Write::Check,
            };
            (write, key, bytes)
        }
    };
    Ok(Action {
        table,
        layout,
        key,
        write,
        condition,
        all_old_on_failure,
        bytes,
    })
}

/// `ClientRequestToken`: 1 to 36 characters when given.
fn client_token(req: &Object) -> Result<Option<String>> {
    let token = item_ops::string(req, "ClientRequestToken").map_err(op)?;
    match token {
        None => Ok(None),
        Some(t) if t.is_empty() || t.chars().count() > 36 => {
            let bound = if t.is_empty() {
                "greater than or equal to 1"
            } else {
                "less than or equal to 36"
            };
            Err(DynamoError::validation(format!(
                "1 validation error detected: Value '{t}' at 'clientRequestToken' failed to satisfy constraint: Member must have length {bound}"
            )))
        }
        Some(t) => Ok(Some(t.to_string())),
    }
}

/// The answers of successful TransactWriteItems by `ClientRequestToken`, for 10 minutes.
#[derive(Debug, Default)]
pub struct Tokens(Mutex<HashMap<String, TokenState>>);

#[derive(Debug)]
enum TokenState {
    Running {
        digest: [u8; 32],
    },
    Done {
        digest: [u8; 32],
        at: u32,
        answer: Value,
    },
}

/// What a token says about a request.
enum TokenCheck {
    /// Run it (the token, if any, is now marked running).
    Run,
    /// Answer this again.
    Replay(Value),
}

impl Tokens {
    fn begin(&self, token: &str, digest: [u8; 32], now: u32) -> Result<TokenCheck> {
        let mut map = self.0.lock();
        if let Some(state) = map.get(token) {
            match state {
                TokenState::Done { at, .. }
                    if now.saturating_sub(*at) >= IDEMPOTENCY_WINDOW_SECONDS => {}
                TokenState::Done {
                    digest: d, answer, ..
                } => {
                    return if *d == digest {
                        Ok(TokenCheck::Replay(answer.clone()))
                    } else {
                        Err(mismatch())
                    };
                }
                TokenState::Running { digest: d } => {
                    return Err(if *d == digest {
                        DynamoError::new(
                            ErrorKind::TransactionInProgress,
                            "Transaction with the given request token is already in progress",
                        )
                    } else {
                        mismatch()
                    });
                }
            }
        }
        if map.len() >= MAX_REMEMBERED_TOKENS {
            map.retain(|_, s| match s {
                TokenState::Running { .. } => true,
                TokenState::Done { at, .. } => now.saturating_sub(*at) < IDEMPOTENCY_WINDOW_SECONDS,
            });
            if map.len() >= MAX_REMEMBERED_TOKENS {
                // Still full of live tokens: forget the oldest finished one.
                let oldest = map
                    .iter()
                    .filter_map(|(k, s)| match s {
                        TokenState::Done { at, .. } => Some((*at, k.clone())),
                        TokenState::Running { .. } => None,
                    })
                    .min();
                if let Some((_, k)) = oldest {
                    map.remove(&k);
                }
            }
        }
        map.insert(token.to_string(), TokenState::Running { digest });
        Ok(TokenCheck::Run)
    }

    fn finish(&self, token: &str, digest: [u8; 32], now: u32, answer: Option<&Value>) {
        let mut map = self.0.lock();
        match answer {
            Some(a) => {
                map.insert(
                    token.to_string(),
                    TokenState::Done {
                        digest,
                        at: now,
                        answer: a.clone(),
                    },
                );
            }
            None => {
                map.remove(token);
            }
        }
    }
}

fn mismatch() -> DynamoError {
    DynamoError::new(
        ErrorKind::IdempotentParameterMismatch,
        "Request parameters do not match those of the original request with the same client request token",
    )
}

/// A digest of the request without its token: what "the same request" means for a token.
fn request_digest(req: &Object) -> [u8; 32] {
    let mut rest = req.clone();
    rest.remove("ClientRequestToken");
    let text = serde_json::to_string(&Value::Object(rest)).unwrap_or_default();
    Sha256::digest(text.as_bytes()).into()
}

/// TransactWriteItems.
pub async fn transact_write_items(ops: &Operations, req: &Object) -> Result<Value> {
    let capacity_mode = ReturnCapacity::of(req).map_err(op)?;
    let metrics_wanted = crate::batch::item_collection_metrics(req)?;
    let token = client_token(req)?;
    let raw = transact_items(req)?;
    let mut tables = Tables::default();
    let mut actions = Vec::with_capacity(raw.len());
    for (i, a) in raw.iter().enumerate() {
        actions.push(write_action(ops, &mut tables, i, a)?);
    }
    if actions.iter().map(|a| a.bytes).sum::<usize>() > MAX_TRANSACTION_BYTES {
        return Err(DynamoError::validation(
            "Transaction payload size cannot exceed 4 MB",
        ));
    }
    // An empty string or binary key value is refused as the request's error (moto's
    // AWS-verified test_transaction_with_empty_key); other key errors cancel the transaction.
    if let Some(Err(m)) = actions
        .iter()
        .map(|a| &a.key)
        .find(|k| matches!(k, Err(m) if m.starts_with(crate::items::EMPTY_KEY_VALUE)))
    {
        return Err(DynamoError::validation(m.clone()));
    }
    if let Some(i) = actions.iter().position(|a| a.key.is_err()) {
        let mut reasons = vec![Reason::None; actions.len()];
        if let Err(m) = &actions[i].key {
            reasons[i] = Reason::ValidationError(m.clone());
        }
        return Err(cancelled(&reasons));
    }
    let keys: Vec<ItemKey> = actions
        .iter()
        .filter_map(|a| a.key.as_ref().ok().cloned())
        .collect();
    let mut seen = HashSet::with_capacity(keys.len());
    for (a, k) in actions.iter().zip(&keys) {
        if !seen.insert((
            a.layout.table.def.id,
            k.partition.key.clone(),
            k.clustering.clone(),
        )) {
            return Err(DynamoError::validation(
                "Transaction request cannot include multiple operations on one item",
            ));
        }
    }
    ops.with_writers(actions.iter_mut().map(|a| &mut a.layout))
        .await?;
    let now = ops.coordinator.now_seconds();
    let digest = request_digest(req);
    if let Some(t) = &token {
        match ops.transaction_tokens.begin(t, digest, now)? {
            TokenCheck::Run => {}
            TokenCheck::Replay(answer) => return Ok(answer),
        }
    }
    let result = run_write(
        &ops.coordinator,
        actions,
        keys,
        capacity_mode,
        metrics_wanted,
    )
    .await;
    if let Some(t) = &token {
        let replay = result.as_ref().ok().map(|(_, replay)| replay);
        ops.transaction_tokens.finish(t, digest, now, replay);
    }
    result.map(|(answer, _)| answer)
}

/// What the decision under the locks found.
#[derive(Default)]
struct Decision {
    reasons: Vec<Reason>,
    consumed: PerTable,
    /// What a replay of the transaction (its `ClientRequestToken` again) consumes.
    replay_consumed: PerTable,
    metrics: Vec<crate::collections::Metric>,
}

/// Run the transaction: its answer, and the answer to a replay of it.
async fn run_write(
    coordinator: &Coordinator,
    actions: Vec<Action>,
    keys: Vec<ItemKey>,
    capacity_mode: ReturnCapacity,
    metrics_wanted: bool,
) -> Result<(Value, Value)> {
    let reads: Vec<CasRead> = actions
        .iter()
        .zip(&keys)
        .map(|(a, k)| CasRead {
            table: a.layout.table.def.id,
            key: k.partition.clone(),
            ranges: vec![a.layout.row_range(k)],
        })
        .collect();
    let now = coordinator.now_seconds();
    let stamps = coordinator.timestamp_source();
    let decision = Arc::new(Mutex::new(Decision::default()));
    let shared = decision.clone();
    let tickets = Arc::new(Mutex::new(Vec::new()));
    let shared_tickets = tickets.clone();
    let settle_reads = reads.clone();
    let n = actions.len();
    let outcome = coordinator
        .cas_many(
            reads,
            now,
            Consistency::LocalSerial,
            Some(TRANSACTION_LOCK_WAIT),
            move |reads: &[ReadResult]| {
                let ts = stamps.next();
                let mut d = shared.lock();
                let (writes, reasons, consumed, replay_consumed) =
                    decide(&actions, &keys, reads, ts, now);
                d.reasons = reasons;
                d.consumed = consumed;
                d.replay_consumed = replay_consumed;
                let mut writes = writes?;
                *shared_tickets.lock() = std::mem::take(&mut writes.tickets);
                d.metrics = std::mem::take(&mut writes.metrics);
                Some(writes.mutations)
            },
        )
        .await;
    let applied = match &outcome {
        Ok(CasManyOutcome::Decided { applied, .. }) => Some(*applied),
        Ok(CasManyOutcome::Conflict(_)) => Some(false),
        Err(khata_coordinator::CoordinatorError::WriteTimeout { .. }) => None,
        Err(_) => Some(false),
    };
    crate::streams::settle_many(tickets, applied, settle_reads);
    let outcome = outcome.map_err(DynamoError::from)?;
    if let CasManyOutcome::Conflict(items) = outcome {
        let mut reasons = vec![Reason::None; n];
        for i in items {
            reasons[i] = Reason::TransactionConflict;
        }
        return Err(cancelled(&reasons));
    }
    let d = std::mem::take(&mut *decision.lock());
    if d.reasons.iter().any(|r| *r != Reason::None) {
        return Err(cancelled(&d.reasons));
    }
    let answer = |consumed: &PerTable| {
        let mut out = JsonMap::new();
        if capacity_mode.wanted() {
            out.insert("ConsumedCapacity".into(), consumed.to_json(capacity_mode));
        }
        if metrics_wanted && !d.metrics.is_empty() {
            out.insert(
                "ItemCollectionMetrics".into(),
                crate::collections::Metric::map_json(&d.metrics),
            );
        }
        Value::Object(out)
    };
    Ok((answer(&d.consumed), answer(&d.replay_consumed)))
}

/// Under the locks: every action's reason, and the mutations when all are `None`; the units
/// the transaction consumes, and those a replay of it consumes (a transactional read of each
/// item as the transaction leaves it).
fn decide(
    actions: &[Action],
    keys: &[ItemKey],
    reads: &[ReadResult],
    ts: i64,
    now: u32,
) -> (Option<item_writes::Writes>, Vec<Reason>, PerTable, PerTable) {
    let mut reasons = Vec::with_capacity(actions.len());
    let mut mutations = item_writes::Writes::with_capacity(actions.len());
    let mut consumed = PerTable::default();
    let mut replay_consumed = PerTable::default();
    let mut reread = |table: &str, item: Option<&Item>| {
        let units = capacity::item_read_units(item, true);
        replay_consumed.add(table, &Consumed::read(units).transactional());
    };
    for (i, ((a, key), read)) in actions.iter().zip(keys).zip(reads).enumerate() {
        let old = match item_ops::stored_item(&a.layout, key, read, now) {
            Ok(old) => old,
            Err(e) => {
                reasons.push(Reason::ValidationError(
                    DynamoError::from(e).message.unwrap_or_default(),
                ));
                continue;
            }
        };
        if let Some(c) = &a.condition
            && !c.eval(old.as_ref().unwrap_or(&Item::new()))
        {
            let item = if a.all_old_on_failure {
                old.clone().filter(|i| !i.is_empty())
            } else {
                None
            };
            reasons.push(Reason::ConditionalCheckFailed(item));
            consumed.add(
                &a.table,
                &Consumed::write(capacity::write_units(old.as_ref(), None)).transactional(),
            );
            continue;
        }
        let written = match &a.write {
            Write::Check => {
                consumed.add(
                    &a.table,
                    &Consumed::write(capacity::write_units(old.as_ref(), None)).transactional(),
                );
                reread(&a.table, old.as_ref());
                reasons.push(Reason::None);
                continue;
            }
            Write::Put(item) => a
                .layout
                .put(key, item, ts, now)
                .map(|m| (m, Some(item.clone())))
                .map_err(|e| e.0),
            Write::Delete => Ok((a.layout.delete(key, ts, now), None)),
            Write::Update { key_item, update } => {
                update_item(a, key, key_item, update, &old, ts, now)
            }
        };
        match written {
            Ok((m, new)) => {
                consumed.add(
                    &a.table,
                    &Consumed::write(capacity::write_units(old.as_ref(), new.as_ref()))
                        .with_index_writes(&a.layout.indexes, old.as_ref(), new.as_ref())
                        .transactional(),
                );
                reread(&a.table, new.as_ref());
                match mutations.append(
                    &a.layout,
                    Before::Known(old.as_ref()),
                    new.as_ref(),
                    m,
                    ts,
                    now,
                ) {
                    Ok(()) => reasons.push(Reason::None),
                    Err(e) => reasons.push(Reason::ValidationError(e.0)),
                }
                mutations.note_collection(
                    i,
                    &a.table,
                    &a.layout,
                    key,
                    read,
                    old.as_ref(),
                    new.as_ref(),
                    ts,
                    now,
                );
            }
            Err(message) => reasons.push(Reason::ValidationError(message)),
        }
    }
    if reasons.iter().all(|r| *r == Reason::None)
        && let Err(exceeded) = mutations.finish_collections()
    {
        for i in exceeded.into_iter().flatten() {
            reasons[i] = Reason::ItemCollectionSizeLimitExceeded;
        }
    }
    // Stream tickets are only taken for a transaction that writes (below: dropped otherwise).
    let ok = reasons.iter().all(|r| *r == Reason::None);
    (ok.then_some(mutations), reasons, consumed, replay_consumed)
}

/// An Update action's mutation and new item, as UpdateItem computes them.
fn update_item(
    a: &Action,
    key: &ItemKey,
    key_item: &Item,
    update: &Update,
    old: &Option<Item>,
    ts: i64,
    now: u32,
) -> std::result::Result<(Mutation, Option<Item>), String> {
    let layout = &a.layout;
    // The key first: DynamoDB refuses an update of a key attribute before it checks operand
    // types against the item.
    item_ops::refuse_key_updates(layout, update).map_err(|e| e.0)?;
    let base = old.clone().unwrap_or_else(|| key_item.clone());
    let (new, changed) = update.apply(&base, old.is_some()).map_err(|e| e.0)?;
    if old.is_none() && update.only_removes() {
        // Nothing to remove from an item that does not exist: it stays absent.
        return Ok((layout.delete(key, ts, now), None));
    }
    let m = layout
        .update(key, &new, &changed, ts, now)
        .map_err(|e| e.0)?;
    Ok((m, Some(new)))
}

/// One Get of a TransactGetItems.
struct Get {
    table: String,
    layout: ItemLayout,
    key: ItemKey,
    projection: Option<Projection>,
}

fn get_action(ops: &Operations, tables: &mut Tables, index: usize, raw: &Object) -> Result<Get> {
    let body = match raw.get("Get") {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value null at 'transactItems.{}.member.get' failed to satisfy constraint: Member must not be null",
                index + 1
            )));
        }
        Some(_) => {
            return Err(DynamoError::serialization(
                "Unexpected value type in payload for Get",
            ));
        }
    };
    let (table, layout) = tables.get(ops, body)?;
    let p = Placeholders::of(body, item_ops::GET_EXPRESSIONS).map_err(op)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let projection = match item_ops::string(body, "ProjectionExpression").map_err(op)? {
        Some(text) => Some(ex.projection(text).map_err(op)?),
        None => None,
    };
    if !p.values.is_empty() {
        return Err(DynamoError::validation(
            "ExpressionAttributeValues can only be specified when using expressions: ExpressionAttributeValues is not supported in a Get action",
        ));
    }
    layout.finish_expressions(ex).map_err(op)?;
    let key_item = item_ops::item_param(
        body,
        "Key",
        &format!("transactItems.{}.member.get.key", index + 1),
    )
    .map_err(op)?;
    let key = layout.key_of_param(&key_item).map_err(op)?;
    Ok(Get {
        table,
        layout,
        key,
        projection,
    })
}

/// TransactGetItems: a consistent snapshot of up to 100 items (every lock held while all are
/// read), answered in request order.
pub async fn transact_get_items(ops: &Operations, req: &Object) -> Result<Value> {
    let capacity_mode = ReturnCapacity::of(req).map_err(op)?;
    let raw = transact_items(req)?;
    let mut tables = Tables::default();
    let mut gets = Vec::with_capacity(raw.len());
    for (i, a) in raw.iter().enumerate() {
        gets.push(get_action(ops, &mut tables, i, a)?);
    }
    let mut seen = HashSet::with_capacity(gets.len());
    for g in &gets {
        if !seen.insert((
            g.layout.table.def.id,
            g.key.partition.key.clone(),
            g.key.clustering.clone(),
        )) {
            return Err(DynamoError::validation(
                "Transaction request cannot include multiple operations on one item",
            ));
        }
    }
    let reads: Vec<CasRead> = gets
        .iter()
        .map(|g| CasRead {
            table: g.layout.table.def.id,
            key: g.key.partition.clone(),
            ranges: vec![g.layout.row_range(&g.key)],
        })
        .collect();
    let coordinator = &ops.coordinator;
    let now = coordinator.now_seconds();
    let outcome = coordinator
        .cas_many(
            reads,
            now,
            Consistency::LocalSerial,
            Some(TRANSACTION_LOCK_WAIT),
            |_| None,
        )
        .await
        .map_err(DynamoError::from)?;
    let reads = match outcome {
        CasManyOutcome::Decided { reads, .. } => reads,
        CasManyOutcome::Conflict(items) => {
            let mut reasons = vec![Reason::None; gets.len()];
            for i in items {
                reasons[i] = Reason::TransactionConflict;
            }
            return Err(cancelled(&reasons));
        }
    };
    let mut responses = Vec::with_capacity(gets.len());
    let mut consumed = PerTable::default();
    let mut total_bytes = 0;
    for (g, read) in gets.iter().zip(&reads) {
        let item = item_ops::stored_item(&g.layout, &g.key, read, now).map_err(op)?;
        consumed.add(
            &g.table,
            &Consumed::read(capacity::item_read_units(item.as_ref(), true)).transactional(),
        );
        let mut entry = JsonMap::new();
        if let Some(item) = item {
            total_bytes += item.size_bytes();
            let item = match &g.projection {
                Some(p) => p.apply(&item),
                None => item,
            };
            entry.insert("Item".into(), item.to_json());
        }
        responses.push(Value::Object(entry));
    }
    if total_bytes > MAX_TRANSACTION_BYTES {
        let reasons = vec![
            Reason::ValidationError(
                "Total size of the items read by the transaction exceeds 4 MB".into()
            );
            gets.len()
        ];
        return Err(cancelled(&reasons));
    }
    let mut out = JsonMap::new();
    out.insert("Responses".into(), Value::Array(responses));
    if capacity_mode.wanted() {
        out.insert("ConsumedCapacity".into(), consumed.to_json(capacity_mode));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cancellation_names_every_reason_in_order() {
        let mut old = Item::new();
        old.insert("PK".into(), crate::value::AttributeValue::S("a".into()));
        let e = cancelled(&[
            Reason::None,
            Reason::ConditionalCheckFailed(Some(old)),
            Reason::TransactionConflict,
        ]);
        assert_eq!(
            e.body(),
            json!({
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, TransactionConflict]",
                "CancellationReasons": [
                    {"Code": "None"},
                    {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
                     "Item": {"PK": {"S": "a"}}},
                    {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
                ]
            })
        );
        assert_eq!(e.kind.status(), 400);
    }

    #[test]
    fn tokens_replay_refuse_a_different_request_and_expire() {
        let tokens = Tokens::default();
        let (a, b) = ([1u8; 32], [2u8; 32]);
        assert!(matches!(tokens.begin("t", a, 100), Ok(TokenCheck::Run)));
        // Running: the same request is in progress, another is a mismatch.
        let e = tokens.begin("t", a, 101).err().unwrap();
        assert_eq!(e.kind, ErrorKind::TransactionInProgress);
        let e = tokens.begin("t", b, 101).err().unwrap();
        assert_eq!(e.kind, ErrorKind::IdempotentParameterMismatch);
        tokens.finish("t", a, 102, Some(&json!({"done": 1})));
        match tokens.begin("t", a, 300) {
            Ok(TokenCheck::Replay(v)) => assert_eq!(v, json!({"done": 1})),
            _ => panic!("expected a replay"),
        }
        let e = tokens.begin("t", b, 300).err().unwrap();
        assert_eq!(e.kind, ErrorKind::IdempotentParameterMismatch);
        // Ten minutes later the token is new again.
        assert!(matches!(
            tokens.begin("t", b, 102 + IDEMPOTENCY_WINDOW_SECONDS),
            Ok(TokenCheck::Run)
        ));
        // A failed run is forgotten: it may be retried.
        tokens.finish("t", b, 800, None);
        assert!(matches!(tokens.begin("t", a, 801), Ok(TokenCheck::Run)));
    }

    #[test]
    fn the_digest_ignores_the_token_only() {
        let with = |token: &str, amount: &str| -> Object {
            serde_json::from_value(json!({"ClientRequestToken": token, "TransactItems": [amount]}))
                .unwrap()
        };
        assert_eq!(
            request_digest(&with("x", "1")),
            request_digest(&with("y", "1"))
        );
        assert_ne!(
            request_digest(&with("x", "1")),
            request_digest(&with("x", "2"))
        );
    }
}
