//! Building and dropping indexes in the background: the backfill of a GSI that UpdateTable
//! added, the drop of one it deleted, and the resumption of both when the node starts.
//!
//! The states live in the table's metadata (`IndexStatus` of each [`IndexMeta`]), changed under
//! the node's schema lock like every other metadata change, so a restart finds them:
//!
//! - `CREATING`: the index table exists and writes keep it; [`backfill`] scans the base table
//!   and writes each item's entry at the timestamp of its index key values, then marks the
//!   index ACTIVE. Entries are idempotent, so an interrupted backfill simply starts over.
//! - `DELETING`: neither written nor read; [`drop_index`] waits for writes that resolved the
//!   index before it was marked to finish, drops its table, then removes it from the metadata.
//! - no engine table yet (metadata written before indexes were kept): the table is created
//!   and the index built as if it had just been added.
//!
//! [`IndexMeta`]: crate::tables::IndexMeta

use std::sync::Arc;
use std::time::Duration;

use khata_coordinator::catalog::{Mutation, SchemaChange};
use khata_coordinator::{Consistency, Coordinator, ScanCommand, WriteType};
use khata_types::Timestamp;
use khata_types::row::{CellKey, Row};
use tokio::sync::Mutex;

use super::{IndexLayout, IndexStatus};
use crate::item_ops::READ_CHUNK;
use crate::items::ItemLayout;
use crate::tables::{self, IndexMeta, Table, TableMeta};

/// The lock that serializes this node's metadata changes (`Operations::schema_lock`).
pub type SchemaLock = Arc<Mutex<()>>;

/// How long a deleted index stays `DELETING` before its table is dropped: longer than a write
/// that resolved it before can take (the write timeout is 2 s).
pub const DROP_DELAY: Duration = Duration::from_secs(3);

fn find(coordinator: &Coordinator, name: &str) -> Result<Option<Table>, String> {
    tables::find(&coordinator.schema(), name)
}

fn index_mut<'a>(meta: &'a mut TableMeta, name: &str) -> Option<&'a mut IndexMeta> {
    meta.global_secondary_indexes
        .iter_mut()
        .chain(meta.local_secondary_indexes.iter_mut())
        .find(|i| i.index_name == name)
}

async fn alter(coordinator: &Coordinator, table: &Table, meta: &TableMeta) -> Result<(), String> {
    coordinator
        .change_schema(SchemaChange::AlterTable(tables::with_meta(
            &table.schema,
            meta,
        )))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Start whatever the metadata says is unfinished: backfills, drops, missing index tables.
/// Called once when the DynamoDB endpoint starts.
pub fn resume(coordinator: Arc<Coordinator>, lock: SchemaLock) {
    let schema = coordinator.schema();
    for name in tables::names(&schema) {
        let Ok(Some(table)) = tables::find(&schema, &name) else {
            continue;
        };
        let globals = table
            .meta
            .global_secondary_indexes
            .iter()
            .map(|i| (i, true));
        let locals = table
            .meta
            .local_secondary_indexes
            .iter()
            .map(|i| (i, false));
        for (index, global) in globals.chain(locals) {
            let (c, l, t, i) = (
                coordinator.clone(),
                lock.clone(),
                name.clone(),
                index.index_name.clone(),
            );
            if index.table().is_none() {
                tokio::spawn(async move {
                    if let Err(e) = create_missing(&c, &l, &t, &i, global).await {
                        tracing::error!(table = %t, index = %i, error = %e, "index table not created");
                    }
                });
                continue;
            }
            match IndexStatus::of(index) {
                IndexStatus::Creating => spawn_backfill(c, l, t, i),
                IndexStatus::Deleting => spawn_drop(c, l, t, i, Duration::ZERO),
                IndexStatus::Active => {}
            }
        }
    }
}

/// An index whose metadata predates its table: create the table, then build it.
async fn create_missing(
    coordinator: &Arc<Coordinator>,
    lock: &SchemaLock,
    table: &str,
    index: &str,
    global: bool,
) -> Result<(), String> {
    {
        let _guard = lock.lock().await;
        let Some(t) = find(coordinator, table)? else {
            return Ok(());
        };
        let mut meta = t.meta.clone();
        let Some(im) = index_mut(&mut meta, index).filter(|i| i.table().is_none()) else {
            return Ok(());
        };
        let id = coordinator.random_uuid();
        let schema = super::table_schema(&t.meta, im, global, id)?;
        coordinator
            .change_schema(SchemaChange::CreateTable(schema))
            .await
            .map_err(|e| e.to_string())?;
        im.table_id = Some(id.to_string());
        im.index_status = Some(IndexStatus::Creating.name().into());
        alter(coordinator, &t, &meta).await?;
    }
    backfill(coordinator, lock, table, index).await
}

/// Backfill `index` of `table` in a background task.
pub fn spawn_backfill(
    coordinator: Arc<Coordinator>,
    lock: SchemaLock,
    table: String,
    index: String,
) {
    tokio::spawn(async move {
        if let Err(e) = backfill(&coordinator, &lock, &table, &index).await {
            tracing::error!(%table, %index, error = %e, "index backfill failed; it resumes when the node restarts");
        }
    });
}

/// The timestamp an item's entry in `index` gets: that of the newest of its index key values
/// (table keys count at the row marker's), as if written by the write that set them.
fn entry_timestamp(layout: &ItemLayout, index: &IndexLayout, row: &Row) -> Option<Timestamp> {
    let marker = row.liveness.map(|l| l.timestamp);
    let mut ts: Option<Timestamp> = None;
    for (name, _) in index.key_names() {
        let t = if *name == layout.hash.0 || layout.range.as_ref().is_some_and(|r| r.0 == *name) {
            marker
        } else {
            let key = CellKey::element(
                layout.attrs_column(),
                bytes::Bytes::copy_from_slice(name.as_bytes()),
            );
            row.cells.get(&key).map(|c| c.timestamp)
        };
        ts = ts.max(t);
    }
    ts.or(marker)
}

/// Scan the base table and write every item's entry of `index`, then mark it ACTIVE.
pub async fn backfill(
    coordinator: &Coordinator,
    lock: &SchemaLock,
    table: &str,
    index: &str,
) -> Result<(), String> {
    let Some(t) = find(coordinator, table)? else {
        return Ok(());
    };
    let layout = crate::ops::item_layout(&t).map_err(|e| format!("{e:?}"))?;
    let Some(ix) = layout
        .indexes
        .iter()
        .find(|i| i.name == index && i.status == IndexStatus::Creating)
        .cloned()
    else {
        return Ok(());
    };
    tracing::info!(%table, %index, "index backfill started");
    let mut resume = None;
    let mut items = 0u64;
    loop {
        let now = coordinator.now_seconds();
        let result = coordinator
            .scan_paged(
                ScanCommand {
                    table: t.schema.def.id,
                    start: std::ops::Bound::Unbounded,
                    end: std::ops::Bound::Unbounded,
                    resume: resume.clone(),
                    row_limit: READ_CHUNK,
                    now,
                },
                crate::item_ops::TOMBSTONE_PAGE_LIMIT,
                Consistency::LocalQuorum,
            )
            .await
            .map_err(|e| e.to_string())?;
        let mut entries: Vec<Mutation> = Vec::new();
        for (key, partition) in &result.partitions {
            for (clustering, row) in partition.live_rows(now) {
                let Ok(item) = layout.item(key, clustering, row, now) else {
                    continue;
                };
                // An item whose index key values the index cannot hold is left out (DynamoDB
                // reports such items as index key violations).
                if ix.check(&layout, &item).is_err() {
                    continue;
                }
                if let (Some(entry), Some(ts)) =
                    (ix.entry_key(&item), entry_timestamp(&layout, &ix, row))
                {
                    entries.push(ix.entry_write(entry, ts));
                    items += 1;
                }
            }
        }
        if !entries.is_empty() {
            coordinator
                .write(entries, Consistency::LocalQuorum, WriteType::Batch)
                .await
                .map_err(|e| e.to_string())?;
        }
        match result.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
    }
    let _guard = lock.lock().await;
    let Some(t) = find(coordinator, table)? else {
        return Ok(());
    };
    let mut meta = t.meta.clone();
    match index_mut(&mut meta, index) {
        Some(im)
            if im.table() == Some(ix.table) && IndexStatus::of(im) == IndexStatus::Creating =>
        {
            im.index_status = None;
        }
        _ => return Ok(()),
    }
    alter(coordinator, &t, &meta).await?;
    tracing::info!(%table, %index, items, "index backfill done: index is ACTIVE");
    Ok(())
}

/// Drop deleted `index` of `table` after `delay`, in a background task.
pub fn spawn_drop(
    coordinator: Arc<Coordinator>,
    lock: SchemaLock,
    table: String,
    index: String,
    delay: Duration,
) {
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        if let Err(e) = drop_index(&coordinator, &lock, &table, &index).await {
            tracing::error!(%table, %index, error = %e, "index drop failed; it resumes when the node restarts");
        }
    });
}

/// Drop a `DELETING` index's table and remove it from the metadata.
pub async fn drop_index(
    coordinator: &Coordinator,
    lock: &SchemaLock,
    table: &str,
    index: &str,
) -> Result<(), String> {
    let _guard = lock.lock().await;
    let Some(t) = find(coordinator, table)? else {
        return Ok(());
    };
    let Some(im) = t
        .meta
        .global_secondary_indexes
        .iter()
        .find(|i| i.index_name == index && IndexStatus::of(i) == IndexStatus::Deleting)
    else {
        return Ok(());
    };
    let schema = coordinator.schema();
    if let Some(id) = im.table()
        && let Some(it) = schema.table_by_id(id)
    {
        coordinator
            .change_schema(SchemaChange::DropTable {
                keyspace: it.def.keyspace.clone(),
                table: it.def.name.clone(),
            })
            .await
            .map_err(|e| e.to_string())?;
    }
    let mut meta = t.meta.clone();
    meta.global_secondary_indexes
        .retain(|i| i.index_name != index);
    meta.keep_used_definitions();
    alter(coordinator, &t, &meta).await
}
