//! Query and Scan with `IndexName`: entries read from the index table, each checked against
//! its base item (stale ones skipped and deleted, see the module docs of [`crate::indexes`]),
//! then projected as the index projects.
//!
//! DynamoDB's rules kept here: GSIs refuse `ConsistentRead` and reads while backfilling; the
//! default `Select` is `ALL_PROJECTED_ATTRIBUTES`; `ALL_ATTRIBUTES` on a GSI that does not
//! project everything is refused, while an LSI fetches what it does not project from the base
//! item (so filters and projections on an LSI see the whole item, on a GSI only what it
//! projects); `LastEvaluatedKey` holds the index keys and the table keys, and
//! `ExclusiveStartKey` must too.

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, ScanPosition};
use khata_coordinator::{Consistency, Coordinator, ReadCommand, ScanCommand, WriteType};
use khata_types::clustering::{
    after_prefix, encode_key as encode_clustering, end_bound, full_range,
};
use khata_types::row::Row;
use khata_types::schema::ClusteringOrder;
use khata_types::token::DecoratedKey;

use super::{IndexLayout, IndexStatus, Projected};
use crate::expr::{CompositeKeyCondition, Expressions, RangeCondition};
use crate::item_ops::{
    Object, OpError, Page, Placeholders, QUERY_EXPRESSIONS, ReadShape, Result, SCAN_EXPRESSIONS,
    TOMBSTONE_PAGE_LIMIT, prefix_end, read_shape, segment_range, stored_item, string, validation,
};
use crate::items::{ItemLayout, clustering_type, column_bytes, key_type_of};
use crate::value::{AttributeValue, Item, Map};

const TYPE_MISMATCH: &str = "One or more parameter values were invalid: Condition parameter type does not match schema type";
const BAD_START_KEY: &str =
    "The provided starting key is invalid: The provided key element does not match the schema";

/// The readable index `name` of the table.
fn readable<'a>(layout: &'a ItemLayout, name: &str) -> Result<&'a IndexLayout> {
    let index = layout
        .indexes
        .iter()
        .find(|i| i.name == name && i.status != IndexStatus::Deleting)
        .ok_or_else(|| {
            validation(format!(
                "The table does not have the specified index: {name}"
            ))
        })?;
    if index.status == IndexStatus::Creating {
        return Err(validation(format!(
            "Cannot read from backfilling global secondary index: {name}"
        )));
    }
    Ok(index)
}

/// What a read through an index returns of each item.
struct View {
    select_all: bool,
}

impl View {
    fn of(index: &IndexLayout, req: &Object, shape: &ReadShape) -> Result<View> {
        if index.global && shape.consistency != Consistency::LocalOne {
            return Err(validation(
                "Consistent reads are not supported on global secondary indexes",
            ));
        }
        let select_all = string(req, "Select")? == Some("ALL_ATTRIBUTES");
        if select_all && index.global && index.projection != Projected::All {
            return Err(validation(format!(
                "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index {} because its projection type is not ALL",
                index.name
            )));
        }
        Ok(View { select_all })
    }

    /// The item filters and projection expressions see: an LSI fetches from the base item
    /// what it does not project, a GSI has only what it projects.
    fn seen(&self, index: &IndexLayout, base: &Item) -> Item {
        if index.global {
            index.project(base)
        } else {
            base.clone()
        }
    }
}

/// Count an index entry's item read into `page`, and keep it if it passes the filter: the
/// index's projection of `base`, or what the request's projection or `Select` asks for.
/// The answer of a page, with the read units it consumed on the index: the entries read (their
/// projected sizes), rounded up once.
fn finish(
    page: Page,
    req: &Object,
    index: &IndexLayout,
    shape: &ReadShape,
    more: bool,
) -> crate::reply::Body {
    let units = crate::capacity::read_units(
        page.bytes(),
        shape.consistency == khata_coordinator::Consistency::LocalQuorum,
    );
    let mut answer = page.finish(shape, more);
    crate::capacity::attach_body(
        &mut answer,
        crate::item_ops::table_name(req),
        &crate::capacity::Consumed::index_read(&index.name, index.global, units),
        shape.capacity,
    );
    answer
}

fn add(
    page: &mut Page,
    layout: &ItemLayout,
    index: &IndexLayout,
    shape: &ReadShape,
    view: &View,
    base: Item,
) {
    let projected = index.project(&base);
    let names = index
        .key_names()
        .chain(std::iter::once(&layout.hash))
        .chain(layout.range.as_ref());
    let mut last = Item::new();
    for (name, _) in names {
        if let Some(v) = base.get(name) {
            last.insert(name.clone(), v.clone());
        }
    }
    page.read(projected.size_bytes(), last);
    let seen = view.seen(index, &base);
    if !page.keep(shape, &seen) {
        return;
    }
    match &shape.projection {
        Some(p) => page.push(&p.apply(&seen)),
        None if view.select_all => page.push(&base),
        None => page.push(&projected),
    }
}

/// Reads base items for entries, and collects the tombstones of stale entries.
struct Resolver<'a> {
    coordinator: &'a Coordinator,
    layout: &'a ItemLayout,
    index: &'a IndexLayout,
    consistency: Consistency,
    now: u32,
    stale: Vec<Mutation>,
}

impl Resolver<'_> {
    /// The base item of an entry, if the entry is current; a stale entry gets a tombstone at
    /// its own timestamp.
    async fn resolve(
        &mut self,
        partition: &DecoratedKey,
        clustering: &Bytes,
        row: &Row,
    ) -> Result<Option<Item>> {
        let values = self
            .index
            .entry_values(partition, clustering)
            .map_err(OpError::Internal)?;
        let mut key = Map::new();
        for (name, _) in std::iter::once(&self.layout.hash).chain(self.layout.range.as_ref()) {
            let v = values
                .get(name)
                .ok_or_else(|| OpError::Internal("index entry lacks a table key".into()))?;
            key.insert(name.clone(), v.clone());
        }
        let key = self
            .layout
            .key_of_param(&key)
            .map_err(|e| OpError::Internal(format!("index entry names a bad key: {}", e.0)))?;
        let read = self
            .coordinator
            .read(
                ReadCommand {
                    table: self.layout.table.def.id,
                    key: key.partition.clone(),
                    ranges: vec![self.layout.row_range(&key)],
                    reversed: false,
                    row_limit: Some(1),
                    one_row: true,
                    now: self.now,
                },
                self.consistency,
            )
            .await?;
        let item = stored_item(self.layout, &key, &read, self.now)?;
        let current = item.as_ref().and_then(|i| self.index.entry_key(i));
        if current.as_ref() == Some(&(partition.clone(), clustering.clone())) {
            return Ok(item);
        }
        if let Some(liveness) = row.liveness {
            self.stale.push(self.index.entry_delete(
                (partition.clone(), clustering.clone()),
                liveness.timestamp,
                self.now,
            ));
        }
        Ok(None)
    }

    /// Write the stale entries' tombstones (best effort: the next reader tries again).
    async fn clean(self) {
        if self.stale.is_empty() {
            return;
        }
        if let Err(e) = self
            .coordinator
            .write(self.stale, Consistency::LocalOne, WriteType::Simple)
            .await
        {
            tracing::warn!(index = %self.index.name, error = %e, "stale index entries not deleted");
        }
    }
}

/// The clustering prefix of values of the first `values.len()` RANGE attributes of the index.
fn range_prefix(index: &IndexLayout, values: &[&AttributeValue]) -> Result<Bytes> {
    if values.len() > index.range.len() {
        return Err(validation("Query key condition not supported"));
    }
    let mut types = Vec::with_capacity(values.len());
    let mut bytes = Vec::with_capacity(values.len());
    for ((_, t), v) in index.range.iter().zip(values) {
        if key_type_of(v) != Some(*t) {
            return Err(validation(TYPE_MISMATCH));
        }
        types.push((clustering_type(*t), ClusteringOrder::Asc));
        bytes.push(column_bytes(v));
    }
    let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    encode_clustering(&types, &refs)
        .map_err(|e| validation(format!("range key cannot be read: {e}")))
}

/// The clustering byte range of an index partition that conditions on the first RANGE
/// attributes select (`=` on each but the last: a prefix, inside which the last one's condition
/// is a range).
fn range_of(index: &IndexLayout, conds: &[RangeCondition]) -> Result<(Bytes, Bytes)> {
    let Some((last, equal)) = conds.split_last() else {
        return Ok(full_range());
    };
    let mut values = Vec::with_capacity(conds.len());
    for c in equal {
        let RangeCondition::Eq(v) = c else {
            return Err(validation("Query key condition not supported"));
        };
        values.push(v);
    }
    // The prefix's own range (the whole partition for no prefix: `full_range`).
    let all_low = range_prefix(index, &values)?;
    let all_high = after_prefix(&all_low);
    let k = |v: &AttributeValue| {
        let mut with = values.clone();
        with.push(v);
        range_prefix(index, &with)
    };
    Ok(match last {
        RangeCondition::Eq(v) => {
            let k = k(v)?;
            (k.clone(), end_bound(&k, true))
        }
        RangeCondition::Lt(v) => (all_low, k(v)?),
        RangeCondition::Le(v) => (all_low, end_bound(&k(v)?, true)),
        RangeCondition::Gt(v) => (after_prefix(&k(v)?), all_high),
        RangeCondition::Ge(v) => (k(v)?, all_high),
        RangeCondition::Between(lo, hi) => (k(lo)?, end_bound(&k(hi)?, true)),
        RangeCondition::BeginsWith(v) => {
            let k = k(v)?;
            let end = prefix_end(&k).min(all_high);
            (k, end)
        }
    })
}

/// The key condition of a Query on `index`, in the composite form (a one-attribute key's
/// condition parsed with the table's rules and messages).
fn index_key_condition(
    req: &Object,
    ex: &mut Expressions<'_>,
    index: &IndexLayout,
) -> Result<CompositeKeyCondition> {
    let hashes: Vec<&str> = index.hash.iter().map(|(n, _)| n.as_str()).collect();
    let ranges: Vec<&str> = index.range.iter().map(|(n, _)| n.as_str()).collect();
    if index.multi_attribute() {
        return crate::item_ops::composite_key_condition(req, ex, &hashes, &ranges);
    }
    let condition = crate::item_ops::key_condition(req, ex, hashes[0], ranges.first().copied())?;
    Ok(condition.composite())
}

/// The entry an `ExclusiveStartKey` names: it must hold the index keys and the table keys.
fn start_entry(
    layout: &ItemLayout,
    index: &IndexLayout,
    req: &Object,
) -> Result<Option<(DecoratedKey, Bytes)>> {
    let Some(start) = req.get("ExclusiveStartKey").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let start = Item::from_json(start)?;
    let needed: Vec<_> = index
        .key_names()
        .chain(std::iter::once(&layout.hash))
        .chain(layout.range.as_ref())
        .collect();
    // An index's start key is exactly the index's and the table's key attributes: one more
    // or one fewer is refused before their types are looked at (dynalite's query and scan
    // validation, checked against DynamoDB).
    let mut names: Vec<&str> = needed.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if start.len() != names.len() || names.iter().any(|n| start.get(*n).is_none()) {
        return Err(validation("The provided starting key is invalid"));
    }
    for (name, t) in needed {
        if start.get(name).and_then(key_type_of) != Some(*t) {
            return Err(validation(BAD_START_KEY));
        }
    }
    index
        .entry_key(&start)
        .map(Some)
        .ok_or_else(|| validation(BAD_START_KEY))
}

/// The index and table key attributes of the index entry at (`partition`, `clustering`): a
/// `LastEvaluatedKey`.
fn entry_key_item(
    layout: &ItemLayout,
    index: &IndexLayout,
    partition: &DecoratedKey,
    clustering: &Bytes,
) -> Result<Item> {
    let values = index
        .entry_values(partition, clustering)
        .map_err(OpError::Internal)?;
    let names = index
        .key_names()
        .chain(std::iter::once(&layout.hash))
        .chain(layout.range.as_ref());
    let mut key = Item::new();
    for (name, _) in names {
        if let Some(v) = values.get(name) {
            key.insert(name.clone(), v.clone());
        }
    }
    Ok(key)
}

/// Query with `IndexName`.
pub async fn query(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    index_name: &str,
) -> Result<crate::reply::Body> {
    let index = readable(layout, index_name)?;
    let p = Placeholders::of(req, QUERY_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let key_condition = index_key_condition(req, &mut ex, index)?;
    let shape = read_shape(req, &mut ex, "QueryFilter")?;
    layout.finish_expressions(ex)?;
    let keys: Vec<&str> = index.key_names().map(|(n, _)| n.as_str()).collect();
    crate::item_ops::filter_off_keys(req, &shape, &keys)?;
    let view = View::of(index, req, &shape)?;
    let forward = crate::item_ops::scan_index_forward(req)?;
    let mut hash_values = Vec::with_capacity(index.hash.len());
    for ((_, t), v) in index.hash.iter().zip(&key_condition.hash) {
        if key_type_of(v) != Some(*t) {
            return Err(validation(TYPE_MISMATCH));
        }
        hash_values.push(column_bytes(v));
    }
    let partition = index
        .partition_of(&hash_values)
        .ok_or_else(|| validation(TYPE_MISMATCH))?;
    // The condition on the last RANGE attribute given, and that attribute.
    let range_cond = key_condition
        .range
        .last()
        .map(|c| (&index.range[key_condition.range.len() - 1].0, c));
    let (mut low, mut high) = range_of(index, &key_condition.range)?;
    if let Some((start_partition, start)) = start_entry(layout, index, req)? {
        crate::item_ops::start_within(range_cond.is_some(), &low, &high, &start)?;
        if start_partition != partition {
            return Err(validation(crate::item_ops::START_OUTSIDE_QUERY));
        }
        if forward {
            low = low.max(after_prefix(&start));
        } else {
            high = high.min(start);
        }
    }
    let now = coordinator.now_seconds();
    let mut resolver = Resolver {
        coordinator,
        layout,
        index,
        consistency: shape.consistency,
        now,
        stale: Vec::new(),
    };
    let mut page = Page::new();
    let mut more = false;
    let mut tombstones = 0;
    'read: while low < high && !page.full(&shape) {
        let read = coordinator
            .read_paged(
                ReadCommand {
                    table: index.table,
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
        let rows: Vec<(&Bytes, &Row)> = if forward {
            read.partition.live_rows(now).collect()
        } else {
            read.partition.live_rows(now).rev().collect()
        };
        // The last entry the read scanned, live or not: where it stopped.
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
            if let Some((name, c)) = range_cond {
                let values = index
                    .entry_values(&partition, clustering)
                    .map_err(OpError::Internal)?;
                if values.get(name).is_some_and(|v| !c.matches(v)) {
                    // Past a begins_with prefix: nothing further matches.
                    break 'read;
                }
            }
            if let Some(base) = resolver.resolve(&partition, clustering, row).await? {
                add(&mut page, layout, index, &shape, &view, base);
            }
        }
        if !read.limit_reached {
            break;
        }
        if tombstones >= TOMBSTONE_PAGE_LIMIT {
            // The page has passed enough deleted entries: it ends at the last one scanned.
            page.passed(entry_key_item(layout, index, &partition, &last)?);
            more = true;
            break;
        }
        if forward {
            low = after_prefix(&last);
        } else {
            high = last;
        }
    }
    resolver.clean().await;
    if page.full(&shape) {
        more = true;
    }
    Ok(finish(page, req, index, &shape, more))
}

/// Scan with `IndexName` (parallel segments are slices of the index table's token ring).
pub async fn scan(
    coordinator: &Coordinator,
    layout: &ItemLayout,
    req: &Object,
    index_name: &str,
) -> Result<crate::reply::Body> {
    let index = readable(layout, index_name)?;
    let p = Placeholders::of(req, SCAN_EXPRESSIONS)?;
    let mut ex = Expressions::new(&p.names, &p.values);
    let shape = read_shape(req, &mut ex, "ScanFilter")?;
    layout.finish_expressions(ex)?;
    let view = View::of(index, req, &shape)?;
    let (start, end) = segment_range(req)?;
    let mut resume = match start_entry(layout, index, req)? {
        Some((key, clustering)) => {
            crate::item_ops::start_in_segment(req, key.token, (start, end))?;
            Some(ScanPosition {
                key,
                last_clustering: (!index.clustering.is_empty()).then_some(clustering),
            })
        }
        None => None,
    };
    let now = coordinator.now_seconds();
    let mut resolver = Resolver {
        coordinator,
        layout,
        index,
        consistency: shape.consistency,
        now,
        stale: Vec::new(),
    };
    let mut page = Page::new();
    let mut more = false;
    let mut tombstones = 0;
    'read: while !page.full(&shape) {
        let result = coordinator
            .scan_paged(
                ScanCommand {
                    table: index.table,
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
                    break 'read;
                }
                if let Some(base) = resolver.resolve(key, clustering, row).await? {
                    add(&mut page, layout, index, &shape, &view, base);
                }
            }
        }
        let Some(r) = result.resume else {
            break;
        };
        if tombstones >= TOMBSTONE_PAGE_LIMIT
            && let Some(clustering) =
                crate::item_ops::scanned_to(&result.partitions, &r, !index.clustering.is_empty())
        {
            // The page has passed enough deleted entries: it ends where the scan stopped.
            page.passed(entry_key_item(layout, index, &r.key, &clustering)?);
            more = true;
            break;
        }
        resume = Some(r);
    }
    resolver.clean().await;
    let more = more || page.full(&shape);
    Ok(finish(page, req, index, &shape, more))
}
