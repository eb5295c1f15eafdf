//! DynamoDB Streams: a time-ordered log of the changes to a table's items, and the Streams API
//! ([`api`]: ListStreams, DescribeStream, GetShardIterator, GetRecords).
//!
//! **Writing records.** Every write to a table whose stream is enabled goes through one
//! compare-and-set on the item's partition ([`cas_item`]): under the partition's lock the item
//! is read, the write decided, and the stream record built from the item before and after
//! ([`Stream::record`]) is added to the same mutation list as the item write, so both are in
//! one commit-log record and a crash keeps both or neither. As DynamoDB does, a write that
//! leaves the item unchanged, and a delete of an absent item, write no record. Records are
//! INSERT (no item before), MODIFY (an item before and after) or REMOVE, with the images the
//! stream's view type asks for; deletes by the TTL expirer carry `userIdentity` (the
//! service). Item writes of other operations (batches, transactions) call
//! [`Stream::record`] inside their own compare-and-set and settle the [`Ticket`] after
//! their write, or use [`cas_item`].
//!
//! **Storage** is the log table of [`log`]; **order and the reader rule** (sequence numbers,
//! the in-flight watermark, shards) are in [`state`].
//!
//! **Lifecycle.** Enabling a stream (CreateTable or UpdateTable) records it in the log and
//! opens its first shard; disabling closes its shard and keeps it readable (`DISABLED`) for
//! 24 hours; enabling again starts a new stream with a new label. The state of each stream
//! is loaded on first use and reconciled with the table's metadata then and on every
//! metadata change ([`Streams::table_changed`]): a crash between a metadata change and the
//! log's update is repaired on the next load.
//!
//! **After DeleteTable** the table's streams go DISABLED and stay readable for 24 hours, as
//! DynamoDB keeps them ([`Streams::table_deleted`]): the table and its index tables are
//! dropped, but the keyspace keeps the log table, whose stream entries carry the table's name
//! and key schema so that DescribeStream can still answer. Such a stream is found by its ARN
//! ([`Streams::deleted`]) and listed by ListStreams; a table created again under the name
//! reuses the keyspace, and its streams join the old ones in the log. Once every entry has
//! expired, the keyspace is dropped ([`drop_expired_logs`], from the TTL expirer's loop).
//!
//! Not done: several shards per stream (one open shard per stream, as one node needs); the
//! in-flight watermark is this node's, as the coordinator is.

pub mod api;
pub mod log;
pub mod state;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use khata_coordinator::catalog::{Mutation, ReadResult, SchemaChange};
use khata_coordinator::{Consistency, Coordinator, CoordinatorError, WriteType};
use khata_types::LocalTime;
use parking_lot::Mutex;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::error::{DynamoError, Result};
use crate::items::{ItemKey, ItemLayout};
use crate::tables::{KEYSPACE_PREFIX, KeyElement, Table, key_named, keyspace_name};
use crate::value::Item;
use state::{ShardEntry, StreamEntry, StreamState, format_sequence};

/// Who made a change, when it was not a user: DynamoDB's TTL deletes are the service's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    /// `{"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}`.
    Service,
}

impl Identity {
    fn to_json(self) -> Value {
        match self {
            Identity::Service => json!({
                "Type": "Service",
                "PrincipalId": "dynamodb.amazonaws.com",
            }),
        }
    }
}

/// A change to one item, as its stream record shows it.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub old: Option<Item>,
    pub new: Option<Item>,
    pub identity: Option<Identity>,
}

/// One stream of one table, with its state on this node.
#[derive(Debug)]
pub struct Stream {
    coordinator: Arc<Coordinator>,
    pub table_name: String,
    /// The log table ([`log`]).
    pub log_table: Uuid,
    pub label: String,
    pub view_type: String,
    /// The key schema of the table the stream belongs (or belonged) to.
    pub key_schema: Vec<KeyElement>,
    key_names: Vec<String>,
    entry: Mutex<StreamEntry>,
    state: Mutex<StreamState>,
}

/// A sequence number in flight: the write carrying it must [`Ticket::finish`] when it has
/// been applied or has failed; readers stop below it until then. It must live until the write
/// has ended: dropped, it lets the number go as not applied.
#[derive(Debug)]
#[must_use = "a ticket holds readers back until it is finished"]
pub struct Ticket {
    stream: Arc<Stream>,
    /// `None` once released.
    seq: Option<u64>,
    directory: Vec<ShardEntry>,
}

impl Ticket {
    /// The write ended; `applied` says whether its mutations are durable.
    pub fn finish(mut self, applied: bool) {
        self.release(applied);
    }

    fn release(&mut self, applied: bool) {
        if let Some(seq) = self.seq.take() {
            self.stream
                .state
                .lock()
                .release(seq, applied, &self.directory);
        }
    }
}

/// A ticket dropped unfinished (a transaction that cancelled after taking it, a panic) lets its
/// number go as not applied, so readers are never held back by it.
impl Drop for Ticket {
    fn drop(&mut self) {
        self.release(false);
    }
}

impl Stream {
    /// `stream/<label>` ARN of this stream in `region`.
    pub fn arn(&self, region: &str) -> String {
        stream_arn(region, &self.table_name, &self.label)
    }

    pub fn created_micros(&self) -> i64 {
        self.entry.lock().created_micros
    }

    /// The state, for readers.
    pub fn state(&self) -> StreamState {
        self.state.lock().clone()
    }

    /// The watermark readers stop at ([`state`]).
    pub fn watermark(&self) -> u64 {
        self.state.lock().watermark()
    }

    /// The record of `change` (`None` when it changes nothing, or the stream is closed):
    /// the mutations to add to the item write's, and the ticket of its sequence number. Call
    /// it inside the item's compare-and-set, so records of one item are numbered in the order
    /// of its writes.
    pub fn record(self: &Arc<Self>, change: &Change) -> Option<(Vec<Mutation>, Ticket)> {
        let event = match (&change.old, &change.new) {
            (None, Some(_)) => "INSERT",
            (Some(old), Some(new)) if old != new => "MODIFY",
            (Some(_), None) => "REMOVE",
            _ => return None,
        };
        let source = change.new.as_ref().or(change.old.as_ref())?;
        let keys: Item = self
            .key_names
            .iter()
            .filter_map(|k| source.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        let (ts, assignment) = {
            let mut st = self.state.lock();
            // Taken under the lock: directory rows carried by later records get later
            // timestamps, so the newest version of a shard's row wins.
            let ts = self.coordinator.timestamp();
            (ts, st.assign(ts)?)
        };
        let (new_image, old_image) = match self.view_type.as_str() {
            "NEW_IMAGE" => (change.new.as_ref(), None),
            "OLD_IMAGE" => (None, change.old.as_ref()),
            "NEW_AND_OLD_IMAGES" => (change.new.as_ref(), change.old.as_ref()),
            _ => (None, None),
        };
        let size = keys.size_bytes()
            + new_image.map_or(0, Item::size_bytes)
            + old_image.map_or(0, Item::size_bytes);
        let mut dynamodb = json!({
            "ApproximateCreationDateTime": ts.div_euclid(1_000_000),
            "Keys": keys.to_json(),
            "SequenceNumber": format_sequence(assignment.seq),
            "SizeBytes": size,
            "StreamViewType": self.view_type,
        });
        if let Some(i) = new_image {
            dynamodb["NewImage"] = i.to_json();
        }
        if let Some(i) = old_image {
            dynamodb["OldImage"] = i.to_json();
        }
        let mut record = json!({
            "eventID": self.coordinator.random_uuid().simple().to_string(),
            "eventName": event,
            "dynamodb": dynamodb,
        });
        if let Some(who) = change.identity {
            record["userIdentity"] = who.to_json();
        }
        let mut mutations = vec![log::row(
            self.log_table,
            &assignment.shard_id,
            &format_sequence(assignment.seq),
            record.to_string().into_bytes(),
            ts,
            log::Lifetime::retained_from(ts),
        )];
        for shard in &assignment.directory {
            mutations.push(log::shard_row(self.log_table, &self.label, shard, ts));
        }
        let ticket = Ticket {
            stream: self.clone(),
            seq: Some(assignment.seq),
            directory: assignment.directory,
        };
        Some((mutations, ticket))
    }

    /// Write the directory rows changed here and not yet durable.
    async fn flush_pending(&self) -> Result<()> {
        let (rows, pending) = {
            let st = self.state.lock();
            let ts = self.coordinator.timestamp();
            let rows: Vec<Mutation> = st
                .pending
                .iter()
                .map(|s| log::shard_row(self.log_table, &self.label, s, ts))
                .collect();
            (rows, st.pending.clone())
        };
        if rows.is_empty() {
            return Ok(());
        }
        self.coordinator
            .write(rows, Consistency::LocalQuorum, WriteType::Batch)
            .await?;
        self.state.lock().confirm(&pending);
        Ok(())
    }

    /// Make the state agree with the table's metadata: an open shard when the stream is
    /// enabled, none (and the entry marked disabled) when it is not.
    async fn reconcile(&self, enabled: bool) -> Result<()> {
        let now = self.coordinator.timestamp();
        {
            let mut st = self.state.lock();
            if enabled {
                st.ensure_open(now);
            } else if st.shards.values().any(ShardEntry::is_open) {
                st.close(now);
            }
        }
        if !enabled {
            let entry = {
                let mut e = self.entry.lock();
                if e.disabled_micros.is_some() {
                    None
                } else {
                    e.disabled_micros = Some(now);
                    Some(e.clone())
                }
            };
            if let Some(e) = entry {
                self.coordinator
                    .write(
                        vec![log::stream_row(self.log_table, &e, now)],
                        Consistency::LocalQuorum,
                        WriteType::Simple,
                    )
                    .await?;
            }
        }
        self.flush_pending().await
    }

    /// The stream's table is being deleted: close the stream, and write its entry with the
    /// table's name and key schema, to describe it by for the 24 hours it is kept.
    async fn retire(&self) -> Result<()> {
        self.reconcile(false).await?;
        let entry = {
            let mut e = self.entry.lock();
            e.table_name.clone_from(&self.table_name);
            e.key_schema.clone_from(&self.key_schema);
            e.clone()
        };
        let now = self.coordinator.timestamp();
        self.coordinator
            .write(
                vec![log::stream_row(self.log_table, &entry, now)],
                Consistency::LocalQuorum,
                WriteType::Simple,
            )
            .await?;
        Ok(())
    }
}

/// `arn:aws:dynamodb:<region>:000000000000:table/<table>/stream/<label>`.
pub fn stream_arn(region: &str, table: &str, label: &str) -> String {
    format!("{}/stream/{label}", crate::ops::table_arn(region, table))
}

/// The table name and label of a stream ARN, if it is one.
pub fn parse_arn(arn: &str) -> Option<(&str, &str)> {
    let rest = arn.strip_prefix("arn:aws:dynamodb:")?;
    let (_, rest) = rest.split_once(":table/")?;
    let (table, label) = rest.split_once("/stream/")?;
    if table.is_empty() || label.is_empty() || label.contains('/') {
        return None;
    }
    Some((table, label))
}

/// The streams this node knows, loaded on first use.
#[derive(Debug, Default)]
pub struct Streams {
    loaded: Mutex<HashMap<Uuid, Vec<Arc<Stream>>>>,
    /// One load at a time (loads are rare: once per stream and node start).
    load_lock: tokio::sync::Mutex<()>,
}

impl Streams {
    fn cached(&self, table: Uuid, label: &str) -> Option<Arc<Stream>> {
        self.loaded
            .lock()
            .get(&table)?
            .iter()
            .find(|s| s.label == label)
            .cloned()
    }

    /// The enabled stream of `table`, to write records to.
    pub async fn writer(
        &self,
        coordinator: &Arc<Coordinator>,
        table: &Table,
    ) -> Result<Option<Arc<Stream>>> {
        match &table.meta.stream {
            Some(s) if s.enabled => self.stream(coordinator, table, &s.label).await,
            _ => Ok(None),
        }
    }

    /// Stream `label` of `table`, if it exists (loaded and reconciled on first use).
    pub async fn stream(
        &self,
        coordinator: &Arc<Coordinator>,
        table: &Table,
        label: &str,
    ) -> Result<Option<Arc<Stream>>> {
        if let Some(s) = self.cached(table.schema.def.id, label) {
            return Ok(Some(s));
        }
        let _guard = self.load_lock.lock().await;
        if let Some(s) = self.cached(table.schema.def.id, label) {
            return Ok(Some(s));
        }
        let Some(stream) = load(coordinator, Owner::Live(table), label).await? else {
            return Ok(None);
        };
        let stream = Arc::new(stream);
        let enabled = enabled_label(table) == Some(label);
        stream.reconcile(enabled).await?;
        self.loaded
            .lock()
            .entry(table.schema.def.id)
            .or_default()
            .push(stream.clone());
        Ok(Some(stream))
    }

    /// Every stream `table` has (the log's, and the one its metadata names).
    pub async fn labels(&self, coordinator: &Coordinator, table: &Table) -> Result<Vec<String>> {
        let mut labels: Vec<String> = match log_table(coordinator, &table.meta.table_name) {
            Some(id) => log::streams(coordinator, id).await?.into_keys().collect(),
            None => Vec::new(),
        };
        if let Some(s) = &table.meta.stream
            && !labels.contains(&s.label)
        {
            labels.push(s.label.clone());
        }
        labels.sort();
        Ok(labels)
    }

    /// Stream `label` of deleted table `name`, while it is kept ([`Streams::table_deleted`]).
    pub async fn deleted(
        &self,
        coordinator: &Arc<Coordinator>,
        name: &str,
        label: &str,
    ) -> Result<Option<Arc<Stream>>> {
        let Some(log) = deleted_log(coordinator, name) else {
            return Ok(None);
        };
        // Cached under the log table's id: the table's is gone.
        if let Some(s) = self.cached(log, label) {
            return Ok(Some(s));
        }
        let _guard = self.load_lock.lock().await;
        if let Some(s) = self.cached(log, label) {
            return Ok(Some(s));
        }
        let Some(stream) = load(coordinator, Owner::Deleted { name, log }, label).await? else {
            return Ok(None);
        };
        let stream = Arc::new(stream);
        self.loaded
            .lock()
            .entry(log)
            .or_default()
            .push(stream.clone());
        Ok(Some(stream))
    }

    /// The labels of the streams kept after deleted table `name` (`None`: no such table was
    /// deleted with streams in the last 24 hours).
    pub async fn deleted_labels(
        &self,
        coordinator: &Coordinator,
        name: &str,
    ) -> Result<Option<Vec<String>>> {
        let Some(log) = deleted_log(coordinator, name) else {
            return Ok(None);
        };
        let entries = log::streams(coordinator, log).await?;
        Ok(Some(
            entries
                .into_values()
                .filter(|e| e.table_name == name)
                .map(|e| e.label)
                .collect(),
        ))
    }

    /// Every stream kept after a DeleteTable: (table name, label), in that order.
    pub async fn all_deleted(&self, coordinator: &Coordinator) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for log in deleted_logs(coordinator) {
            for e in log::streams(coordinator, log).await?.into_values() {
                if !e.table_name.is_empty() {
                    out.push((e.table_name, e.label));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// DeleteTable of `table`: its streams are closed and marked DISABLED, to be kept for 24
    /// hours. Returns whether any is kept (the caller then keeps the log table).
    pub async fn table_deleted(
        &self,
        coordinator: &Arc<Coordinator>,
        table: &Table,
    ) -> Result<bool> {
        let Some(log) = log_table(coordinator, &table.meta.table_name) else {
            return Ok(false);
        };
        for label in self.labels(coordinator, table).await? {
            if let Some(s) = self.stream(coordinator, table, &label).await? {
                s.retire().await?;
            }
        }
        self.loaded.lock().remove(&table.schema.def.id);
        Ok(!log::streams(coordinator, log).await?.is_empty())
    }

    /// `table`'s metadata changed (created with a stream, stream enabled or disabled): bring
    /// its streams in line.
    pub async fn table_changed(&self, coordinator: &Arc<Coordinator>, table: &Table) -> Result<()> {
        if table.meta.stream.is_none() && log_table(coordinator, &table.meta.table_name).is_none() {
            return Ok(());
        }
        let enabled = enabled_label(table);
        for label in self.labels(coordinator, table).await? {
            if let Some(s) = self.stream(coordinator, table, &label).await? {
                s.reconcile(enabled == Some(label.as_str())).await?;
            }
        }
        Ok(())
    }
}

fn enabled_label(table: &Table) -> Option<&str> {
    table
        .meta
        .stream
        .as_ref()
        .filter(|s| s.enabled)
        .map(|s| s.label.as_str())
}

/// The log table of DynamoDB table `name`, if it has one.
pub fn log_table(coordinator: &Coordinator, name: &str) -> Option<Uuid> {
    coordinator
        .schema()
        .table(&keyspace_name(name), &log::log_table_name(name))
        .map(|t| t.def.id)
}

/// The log table kept after DynamoDB table `name` was deleted, if there is one: its keyspace
/// holds the log and no table.
pub fn deleted_log(coordinator: &Coordinator, name: &str) -> Option<Uuid> {
    let schema = coordinator.schema();
    let keyspace = schema.keyspace(&keyspace_name(name))?;
    let log_name = log::log_table_name(name);
    if keyspace.tables.keys().any(|t| *t != log_name) {
        return None;
    }
    keyspace.tables.get(&log_name).map(|t| t.def.id)
}

/// The log tables kept after DeleteTable: those alone in a DynamoDB table's keyspace.
fn deleted_logs(coordinator: &Coordinator) -> Vec<Uuid> {
    let schema = coordinator.schema();
    schema
        .keyspaces
        .iter()
        .filter(|(name, _)| name.starts_with(KEYSPACE_PREFIX))
        .filter_map(|(_, ks)| {
            let mut tables = ks.tables.iter();
            match (tables.next(), tables.next()) {
                (Some((name, t)), None) if name.ends_with(log::LOG_SUFFIX) => Some(t.def.id),
                _ => None,
            }
        })
        .collect()
}

/// Drop the keyspaces of deleted tables whose kept streams have all expired (24 hours after
/// DeleteTable). `schema_lock` is the DynamoDB front end's lock of table creation and
/// deletion, so that a table created again under the name meanwhile keeps its keyspace.
/// Returns how many were dropped.
pub async fn drop_expired_logs(
    coordinator: &Coordinator,
    schema_lock: &tokio::sync::Mutex<()>,
) -> Result<usize> {
    let mut dropped = 0;
    for log in deleted_logs(coordinator) {
        if !log::streams(coordinator, log).await?.is_empty() {
            continue;
        }
        let _guard = schema_lock.lock().await;
        // Still alone in its keyspace (no table created again under the name meanwhile)?
        let keyspace = {
            let schema = coordinator.schema();
            schema
                .keyspaces
                .iter()
                .find(|(_, ks)| ks.tables.len() == 1 && ks.tables.values().any(|t| t.def.id == log))
                .map(|(name, _)| name.clone())
        };
        let Some(keyspace) = keyspace else {
            continue;
        };
        match coordinator
            .change_schema(SchemaChange::DropKeyspace(keyspace))
            .await
        {
            Ok(_) => dropped += 1,
            Err(CoordinatorError::Schema(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(dropped)
}

/// Create the log table of `name` (or find it, if another request just did).
async fn create_log(coordinator: &Coordinator, name: &str) -> Result<Uuid> {
    let schema = log::log_schema(name, coordinator.random_uuid());
    match coordinator
        .change_schema(SchemaChange::CreateTable(schema))
        .await
    {
        Ok(_) => {}
        Err(CoordinatorError::Schema(_)) if log_table(coordinator, name).is_some() => {}
        Err(e) => return Err(e.into()),
    }
    log_table(coordinator, name)
        .ok_or_else(|| DynamoError::internal(format!("the stream log of {name} was not created")))
}

/// Whose stream is loaded: a table's, or a deleted table's, kept in log table `log`.
#[derive(Clone, Copy)]
enum Owner<'a> {
    Live(&'a Table),
    Deleted { name: &'a str, log: Uuid },
}

/// Load stream `label` of `owner` from its log; `None` if there is no such stream.
async fn load(
    coordinator: &Arc<Coordinator>,
    owner: Owner<'_>,
    label: &str,
) -> Result<Option<Stream>> {
    let (name, current, log) = match owner {
        Owner::Live(table) => (
            table.meta.table_name.as_str(),
            table.meta.stream.as_ref().filter(|s| s.label == label),
            log_table(coordinator, &table.meta.table_name),
        ),
        Owner::Deleted { name, log } => (name, None, Some(log)),
    };
    let log = match (log, current) {
        (Some(id), _) => id,
        (None, Some(_)) => create_log(coordinator, name).await?,
        (None, None) => return Ok(None),
    };
    let entries = log::streams(coordinator, log).await?;
    let mut entry = match (entries.get(label), current) {
        (Some(e), _) => e.clone(),
        (None, Some(c)) => {
            let now = coordinator.timestamp();
            let e = StreamEntry {
                label: label.to_string(),
                view_type: c.view_type.clone(),
                created_micros: now,
                disabled_micros: None,
                table_name: name.to_string(),
                key_schema: match owner {
                    Owner::Live(t) => t.meta.key_schema.clone(),
                    Owner::Deleted { .. } => Vec::new(),
                },
            };
            coordinator
                .write(
                    vec![log::stream_row(log, &e, now)],
                    Consistency::LocalQuorum,
                    WriteType::Simple,
                )
                .await?;
            e
        }
        (None, None) => return Ok(None),
    };
    let shards: Vec<ShardEntry> =
        log::read_all(coordinator, log, &log::shards_partition(label)).await?;
    let mut last_record = None;
    for s in shards.iter().filter(|s| s.is_open()) {
        let last = log::read_values(
            coordinator,
            log,
            &s.shard_id,
            khata_types::clustering::full_range(),
            Some(1),
            true,
        )
        .await?;
        let seq = last
            .first()
            .and_then(|v| serde_json::from_slice::<Value>(v).ok())
            .and_then(|r| {
                r["dynamodb"]["SequenceNumber"]
                    .as_str()
                    .and_then(state::parse_sequence)
            });
        last_record = last_record.max(seq);
    }
    // Entries written before they carried the key schema take the table's.
    if let Owner::Live(t) = owner
        && entry.key_schema.is_empty()
    {
        entry.key_schema.clone_from(&t.meta.key_schema);
    }
    let key_schema = entry.key_schema.clone();
    let key_names = ["HASH", "RANGE"]
        .iter()
        .filter_map(|k| key_named(&key_schema, k))
        .map(str::to_string)
        .collect();
    Ok(Some(Stream {
        coordinator: coordinator.clone(),
        table_name: name.to_string(),
        log_table: log,
        label: label.to_string(),
        view_type: entry.view_type.clone(),
        key_schema,
        key_names,
        state: Mutex::new(StreamState::new(label, shards, last_record)),
        entry: Mutex::new(entry),
    }))
}

/// Shift every timestamp of `update` by one amount so that the least is above `floor`.
///
/// A compare-and-set's write must win over what it read: its timestamp was taken before it
/// waited for the partition's lock, so another write that went first may carry a later one,
/// and last-write-wins would then keep that write's cells over this one's, losing an update
/// the client was told succeeded (and making its stream record describe a change that is not
/// there). Shifting the whole write keeps its own order (PutItem's row deletion one
/// microsecond before its cells).
fn stamp_above(update: &mut khata_types::partition::Partition, floor: i64) {
    use khata_types::partition::{RangeTombstone, RangeTombstoneList};
    use khata_types::row::Row;
    let Some(least) = update.min_timestamp() else {
        return;
    };
    if least > floor {
        return;
    }
    let delta = floor + 1 - least;
    let shift_row = |r: &mut Row| {
        if let Some(l) = r.liveness.as_mut() {
            l.timestamp += delta;
        }
        if let Some(d) = r.deletion.as_mut() {
            d.marked_for_delete_at += delta;
        }
        for d in r.column_deletions.values_mut() {
            d.marked_for_delete_at += delta;
        }
        for c in r.cells.values_mut() {
            c.timestamp += delta;
        }
    };
    if let Some(d) = update.deletion.as_mut() {
        d.marked_for_delete_at += delta;
    }
    shift_row(&mut update.static_row);
    for r in update.rows.values_mut() {
        shift_row(r);
    }
    if !update.range_tombstones.is_empty() {
        let shifted: Vec<RangeTombstone> = update
            .range_tombstones
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.deletion.marked_for_delete_at += delta;
                t
            })
            .collect();
        update.range_tombstones = RangeTombstoneList::from_sorted(shifted).unwrap_or_default();
    }
}

/// Finish the tickets a compare-and-set (one item's, or `Coordinator::cas_many`'s for a batch
/// or a transaction) put in `slot` while deciding: at once with `applied` when it answered, or,
/// when it timed out (`None`: it may still run), once it has ended: after the decision's
/// closure let go of `slot` and an empty compare-and-set on the same items got their locks (an
/// empty `cas_many` takes the same stripe locks as `cas`).
pub fn settle_many(
    slot: Arc<Mutex<Vec<Ticket>>>,
    applied: Option<bool>,
    reads: Vec<khata_coordinator::catalog::CasRead>,
) {
    if let Some(applied) = applied {
        for t in std::mem::take(&mut *slot.lock()) {
            t.finish(applied);
        }
        return;
    }
    tokio::spawn(async move {
        let started = tokio::time::Instant::now(); // layering: allowed (bounds a wait)
        while Arc::strong_count(&slot) > 1 && started.elapsed() < TIMED_OUT_WRITE_WAIT {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let tickets = std::mem::take(&mut *slot.lock());
        let Some(first) = tickets.first() else {
            return;
        };
        let coordinator = first.stream.coordinator.clone();
        while started.elapsed() < TIMED_OUT_WRITE_WAIT {
            let now = coordinator.now_seconds();
            match coordinator
                .cas_many(reads.clone(), now, Consistency::LocalSerial, None, |_| None)
                .await
            {
                Err(CoordinatorError::WriteTimeout { .. }) => continue,
                _ => break,
            }
        }
        for t in tickets {
            t.finish(false);
        }
    });
}

/// How long a write that timed out may still be running before its sequence number is let go
/// regardless.
const TIMED_OUT_WRITE_WAIT: Duration = Duration::from_secs(600);

/// One compare-and-set on item `key` of `layout`'s table that also writes the stream record
/// of the change `decide` makes, when the table has a stream: `decide` sees what was read and
/// returns the mutations to apply and the change they make (`None`: write nothing). The
/// table's mutations are stamped above everything read ([`stamp_above`]).
pub async fn cas_item<F>(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    key: &ItemKey,
    now: LocalTime,
    decide: F,
) -> std::result::Result<(ReadResult, bool), CoordinatorError>
where
    F: FnOnce(&ReadResult) -> Option<(Vec<Mutation>, Option<Change>)> + Send + 'static,
{
    let stream = layout.stream.clone();
    let slot: Arc<Mutex<Vec<Ticket>>> = Arc::new(Mutex::new(Vec::new()));
    let filled = slot.clone();
    let table = layout.table.def.id;
    let ranges = vec![layout.row_range(key)];
    let result = coordinator
        .cas(
            table,
            key.partition.clone(),
            ranges.clone(),
            now,
            Consistency::LocalSerial,
            Consistency::LocalQuorum,
            move |read: &ReadResult| {
                let (mut mutations, change) = decide(read)?;
                if let Some(floor) = read.partition.max_timestamp() {
                    for m in mutations.iter_mut().filter(|m| m.table == table) {
                        stamp_above(&mut m.update, floor);
                    }
                }
                if let (Some(stream), Some(change)) = (&stream, change)
                    && let Some((extra, ticket)) = stream.record(&change)
                {
                    mutations.extend(extra);
                    filled.lock().push(ticket);
                }
                Some(mutations)
            },
        )
        .await;
    let applied = match &result {
        Ok((_, applied)) => Some(*applied),
        // The compare-and-set may still run: its number is let go once it has ended.
        Err(CoordinatorError::WriteTimeout { .. }) => None,
        Err(_) => Some(false),
    };
    let reads = vec![khata_coordinator::catalog::CasRead {
        table,
        key: key.partition.clone(),
        ranges,
    }];
    settle_many(slot, applied, reads);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use khata_types::cell::{Cell, DeletionTime, LivenessInfo};
    use khata_types::partition::Partition;
    use khata_types::row::{CellKey, Row};

    fn put(ts: i64) -> Partition {
        let mut row = Row {
            liveness: Some(LivenessInfo::new(ts, None)),
            deletion: Some(DeletionTime::new(ts - 1, 0)),
            ..Row::default()
        };
        row.cells.insert(CellKey::simple(1), Cell::live(ts, "v"));
        let mut p = Partition::new();
        p.add_row(Bytes::new(), row);
        p
    }

    #[test]
    fn a_write_is_stamped_above_what_it_read() {
        let mut p = put(100);
        stamp_above(&mut p, 200);
        assert_eq!(p.min_timestamp(), Some(201));
        assert_eq!(
            p.max_timestamp(),
            Some(202),
            "the deletion stays just before the cells"
        );
        let mut q = put(300);
        stamp_above(&mut q, 200);
        assert_eq!(q, put(300), "already above: unchanged");
    }

    #[test]
    fn stream_arns_parse() {
        let arn = stream_arn("eu-west-1", "Orders", "2026-01-01T00:00:00.000");
        assert_eq!(
            arn,
            "arn:aws:dynamodb:eu-west-1:000000000000:table/Orders/stream/2026-01-01T00:00:00.000"
        );
        assert_eq!(parse_arn(&arn), Some(("Orders", "2026-01-01T00:00:00.000")));
        assert_eq!(parse_arn("arn:aws:dynamodb:x:0:table/T/stream/"), None);
    }
}
