//! The TTL expirer: deletes items whose time to live has passed, as DynamoDB's background
//! TTL process does.
//!
//! Every `ttl_scan_period_seconds` the node scans each table whose TTL is enabled
//! (UpdateTimeToLive, [`crate::ops::ttl`]) and deletes the items whose TTL attribute is a
//! Number of seconds since the epoch in the past. As DynamoDB documents, an item whose
//! attribute is not a Number, or holds a time more than five years in the past, is left
//! alone. Each delete is one compare-and-set that checks the item is still expired (a write
//! between the scan and the delete that moved the time on wins), and, with a stream, writes a
//! REMOVE record whose `userIdentity` is the service (`{"Type": "Service", "PrincipalId":
//! "dynamodb.amazonaws.com"}`), so consumers can tell expiries from user deletes.
//!
//! The same loop drops the streams kept after a DeleteTable once they have expired
//! ([`crate::streams::drop_expired_logs`]).
//!
//! This is Alternator's approach on one node: a full scan per period, no index of expiry
//! times; a table of many items costs a scan each period. Items past their time stay
//! readable until the expirer reaches them, as in DynamoDB (which takes up to a few days).

use std::sync::Arc;
use std::time::Duration;

use khata_coordinator::catalog::{ReadResult, ScanPosition};
use khata_coordinator::{Consistency, Coordinator, ScanCommand};
use khata_types::LocalTime;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::error::{DynamoError, Result};
use crate::items::{ItemKey, ItemLayout};
use crate::ops::Operations;
use crate::streams::{Change, Identity};
use crate::tables::Table;
use crate::value::{AttributeValue, Item};

/// Items older than this past their expiry time are not deleted (DynamoDB: five years).
pub const MAX_EXPIRED_AGE_SECONDS: f64 = 5.0 * 365.0 * 86_400.0;

/// Rows read per page of the scan.
const SCAN_PAGE_ROWS: usize = 1000;

/// The running expirer task.
#[derive(Debug)]
pub struct Expirer {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Expirer {
    /// Start sweeping every `period`.
    pub fn start(ops: Arc<Operations>, period: Duration) -> Expirer {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(ops, period, stopped));
        Expirer { stop, task }
    }

    /// Stop, letting a delete in progress finish.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn run(ops: Arc<Operations>, period: Duration, mut stopped: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stopped.changed() => return,
        }
        match sweep(&ops, &stopped).await {
            Ok(0) => {}
            Ok(n) => debug!(items = n, "expired items deleted"),
            Err(e) => warn!(error = %e, "TTL sweep failed; it is tried again next period"),
        }
        // The streams kept after a DeleteTable expire with their records (crate::streams).
        match crate::streams::drop_expired_logs(&ops.coordinator, &ops.schema_lock).await {
            Ok(0) => {}
            Ok(n) => debug!(tables = n, "expired streams of deleted tables dropped"),
            Err(e) => warn!(error = %e, "dropping expired streams failed; tried again next period"),
        }
        if *stopped.borrow() {
            return;
        }
    }
}

/// One pass over every table with TTL enabled; returns how many items were deleted.
pub async fn sweep(ops: &Operations, stopped: &watch::Receiver<bool>) -> Result<usize> {
    let mut deleted = 0;
    for name in crate::tables::names(&ops.coordinator.schema()) {
        let Ok(Some(table)) = crate::tables::find(&ops.coordinator.schema(), &name) else {
            continue;
        };
        let Some(attribute) = table
            .meta
            .ttl
            .as_ref()
            .filter(|t| t.enabled)
            .map(|t| t.attribute_name.clone())
        else {
            continue;
        };
        deleted += sweep_table(ops, &table, &attribute, stopped).await?;
        if *stopped.borrow() {
            break;
        }
    }
    Ok(deleted)
}

/// Whether `item` has expired at `now` by its attribute `attribute`.
pub fn is_expired(item: &Item, attribute: &str, now: LocalTime) -> bool {
    let Some(AttributeValue::N(n)) = item.get(attribute) else {
        return false;
    };
    let Ok(at) = n.to_string().parse::<f64>() else {
        return false;
    };
    let now = f64::from(now);
    at <= now && now - at <= MAX_EXPIRED_AGE_SECONDS
}

async fn sweep_table(
    ops: &Operations,
    table: &Table,
    attribute: &str,
    stopped: &watch::Receiver<bool>,
) -> Result<usize> {
    let coordinator = &ops.coordinator;
    let mut layout = crate::ops::item_layout(table)?;
    layout.stream = ops.streams.writer(coordinator, table).await?;
    let mut resume: Option<ScanPosition> = None;
    let mut deleted = 0;
    loop {
        let now = coordinator.now_seconds();
        let page = coordinator
            .scan_paged(
                ScanCommand {
                    table: layout.table.def.id,
                    start: std::ops::Bound::Unbounded,
                    end: std::ops::Bound::Unbounded,
                    resume: resume.clone(),
                    row_limit: SCAN_PAGE_ROWS,
                    now,
                },
                crate::item_ops::TOMBSTONE_PAGE_LIMIT,
                Consistency::LocalOne,
            )
            .await?;
        for (key, partition) in &page.partitions {
            for (clustering, row) in partition.live_rows(now) {
                let Ok(item) = layout.item(key, clustering, row, now) else {
                    continue;
                };
                if !is_expired(&item, attribute, now) {
                    continue;
                }
                let key = ItemKey {
                    partition: key.clone(),
                    clustering: clustering.clone(),
                };
                if delete_expired(coordinator, &layout, &key, attribute.to_string()).await? {
                    deleted += 1;
                }
            }
        }
        match page.resume {
            Some(r) if !*stopped.borrow() => resume = Some(r),
            _ => break,
        }
    }
    Ok(deleted)
}

/// Delete item `key` if it is still expired; whether it was.
async fn delete_expired(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    key: &ItemKey,
    attribute: String,
) -> Result<bool> {
    let now = coordinator.now_seconds();
    let ts = coordinator.timestamp();
    let mutation = layout.delete(key, ts, now);
    let decide_layout = layout.clone();
    let decide_key = key.clone();
    let (_, applied) =
        crate::streams::cas_item(coordinator, layout, key, now, move |read: &ReadResult| {
            let row = read
                .partition
                .rows
                .get(&decide_key.clustering)
                .filter(|r| r.is_live(now))?;
            let old = decide_layout
                .item(&decide_key.partition, &decide_key.clustering, row, now)
                .ok()?;
            if !is_expired(&old, &attribute, now) {
                return None;
            }
            let mut mutations = vec![mutation];
            // The item's collection shrinks by what it held (tables with LSIs), and its index
            // entries go with it.
            if let Some(c) = decide_layout.collections {
                let removed = crate::collections::contribution(&decide_layout, Some(&old));
                let stored = c.stored(&read.partition, now);
                if let Ok(bytes) = crate::collections::resize(stored, removed, 0, c.limit) {
                    c.store(&mut mutations[0].update, bytes, ts);
                }
            }
            mutations.extend(crate::indexes::obsolete_entries(
                &decide_layout,
                &old,
                None,
                ts,
                now,
            ));
            let change = Change {
                old: Some(old),
                new: None,
                identity: Some(Identity::Service),
            };
            Some((mutations, Some(change)))
        })
        .await
        .map_err(DynamoError::from)?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Number;

    fn item(attr: AttributeValue) -> Item {
        let mut i = Item::new();
        i.insert("exp".into(), attr);
        i
    }

    #[test]
    fn only_numbers_in_the_recent_past_expire() {
        let now: LocalTime = 1_800_000_000;
        let n = |s: &str| AttributeValue::N(Number::parse(s).unwrap());
        assert!(is_expired(&item(n("1799999999")), "exp", now));
        assert!(is_expired(&item(n("1799999999.5")), "exp", now));
        assert!(!is_expired(&item(n("1800000001")), "exp", now));
        assert!(!is_expired(
            &item(AttributeValue::S("1".into())),
            "exp",
            now
        ));
        assert!(!is_expired(&item(n("1799999999")), "other", now));
        // More than five years ago: left alone.
        assert!(!is_expired(&item(n("1600000000")), "exp", now));
    }
}
