//! INSERT, UPDATE, DELETE and BATCH: statements to mutations, written through the coordinator.
//!
//! Semantics follow Cassandra: INSERT writes a row marker (so the row exists with only its key)
//! and UPDATE does not; a null writes a cell tombstone; an unset value leaves the column
//! alone; writing a whole non-frozen collection first deletes it (a collection tombstone at
//! timestamp - 1); `USING TTL` (or the table's `default_time_to_live`) makes cells expire;
//! `USING TIMESTAMP` (or the client's default timestamp) replaces the coordinator's.

use std::collections::BTreeMap;

use bytes::Bytes;
use khata_coordinator::WriteType;
use khata_coordinator::catalog::{Mutation, TableSchema};
use khata_types::cell::{Cell, DeletionTime, LivenessInfo};
use khata_types::clustering::{encode_key, end_bound, start_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ClusteringOrder, ColumnDef, ColumnKind, CqlType};
use khata_types::token::{DecoratedKey, serialize_partition_key};
use khata_types::{MAX_TTL_SECONDS, Timestamp};

use super::bind::{self, Bound, required};
use super::error::{ExecError, coordinator_consistency};
use super::{Executor, Run};
use crate::frame::{self, BatchType, ResultBody, Value};
use crate::language::ast::{
    AssignmentOp, Batch as AstBatch, BatchKind, BatchStatement, ComparisonOp, Delete, Insert,
    InsertValues, Relation, Statement, Term, Update, Using,
};
use crate::server::Session;

/// Time and TTL of a write.
#[derive(Clone, Copy, Debug)]
struct WriteTime {
    timestamp: Timestamp,
    now: u32,
    ttl: Option<u32>,
}

impl WriteTime {
    fn cell(&self, value: Bytes) -> Cell {
        match self.ttl {
            Some(ttl) if ttl > 0 => {
                Cell::expiring(self.timestamp, value, ttl, self.now.saturating_add(ttl))
            }
            _ => Cell::live(self.timestamp, value),
        }
    }

    fn liveness(&self) -> LivenessInfo {
        match self.ttl {
            Some(ttl) if ttl > 0 => LivenessInfo::new(
                self.timestamp,
                Some(khata_types::cell::Expiry::new(
                    ttl,
                    self.now.saturating_add(ttl),
                )),
            ),
            _ => LivenessInfo::new(self.timestamp, None),
        }
    }

    fn tombstone(&self) -> Cell {
        Cell::tombstone(self.timestamp, self.now)
    }
}

fn write_time(
    exec: &Executor,
    run: &Run<'_>,
    t: &TableSchema,
    using: &Using,
    batch_timestamp: Option<Timestamp>,
) -> Result<WriteTime, ExecError> {
    let timestamp = match &using.timestamp {
        Some(v) => bind::int_value(run, v, "timestamp")?,
        None => None,
    }
    .or(batch_timestamp)
    .or(run.params.default_timestamp)
    .unwrap_or_else(|| exec.coordinator().timestamp());
    let ttl = match &using.ttl {
        Some(v) => match bind::int_value(run, v, "ttl")? {
            Some(ttl) if ttl < 0 => {
                return Err(ExecError::invalid(format!(
                    "A TTL must be greater or equal to 0, but was {ttl}"
                )));
            }
            Some(ttl) if ttl > i64::from(MAX_TTL_SECONDS) => {
                return Err(ExecError::invalid(format!(
                    "ttl is too large. requested ({ttl}) maximum ({MAX_TTL_SECONDS})"
                )));
            }
            Some(ttl) => Some(ttl as u32),
            None => None,
        },
        None => None,
    }
    .or(Some(t.def.options.default_time_to_live).filter(|t| *t > 0));
    Ok(WriteTime {
        timestamp,
        now: exec.coordinator().now_seconds(),
        ttl,
    })
}

/// The primary key a WHERE clause names: the partition keys (several with IN) and the
/// clustering restriction (a full key, a prefix, or a slice for range deletions).
struct Target {
    keys: Vec<DecoratedKey>,
    clustering: Vec<Bytes>,
    slice: Option<(Bytes, Bytes)>,
}

fn target(t: &TableSchema, run: &Run<'_>, where_clause: &[Relation]) -> Result<Target, ExecError> {
    let def = &t.def;
    let pk = def.partition_key();
    let clustering = def.clustering();
    let mut pk_values: Vec<Option<Vec<Bytes>>> = vec![None; pk.len()];
    let mut ck_values: Vec<Option<Bytes>> = vec![None; clustering.len()];
    let mut low = None;
    let mut high = None;
    for r in where_clause {
        match r {
            Relation::Column { column, op, value } => {
                let c = def.column(&column.0).ok_or_else(|| {
                    ExecError::invalid(format!("Undefined column name {}", column.0))
                })?;
                let v = required(run, value, &c.ty, &c.name)?;
                match (c.kind, op) {
                    (ColumnKind::PartitionKey { position }, ComparisonOp::Equal) => {
                        pk_values[position as usize] = Some(vec![v])
                    }
                    (ColumnKind::Clustering { position, .. }, ComparisonOp::Equal) => {
                        ck_values[position as usize] = Some(v)
                    }
                    (ColumnKind::Clustering { position, .. }, op) => {
                        let p = position as usize;
                        match op {
                            ComparisonOp::Greater => low = Some((p, v, false)),
                            ComparisonOp::GreaterEqual => low = Some((p, v, true)),
                            ComparisonOp::Less => high = Some((p, v, false)),
                            ComparisonOp::LessEqual => high = Some((p, v, true)),
                            _ => {
                                return Err(ExecError::invalid(
                                    "Invalid operator in a DELETE range",
                                ));
                            }
                        }
                    }
                    _ => {
                        return Err(ExecError::invalid(format!(
                            "Non PRIMARY KEY columns found in where clause: {}",
                            c.name
                        )));
                    }
                }
            }
            Relation::In {
                column,
                negated: false,
                values: crate::language::ast::InValues::Terms(terms),
            } => {
                let c = def.column(&column.0).ok_or_else(|| {
                    ExecError::invalid(format!("Undefined column name {}", column.0))
                })?;
                let ColumnKind::PartitionKey { position } = c.kind else {
                    return Err(ExecError::invalid(
                        "IN is supported on partition key columns only, so far",
                    ));
                };
                let mut vs = Vec::new();
                for term in terms {
                    vs.push(required(run, term, &c.ty, &c.name)?);
                }
                pk_values[position as usize] = Some(vs);
            }
            other => {
                return Err(ExecError::invalid(format!(
                    "relation {other:?} is not supported in a modification"
                )));
            }
        }
    }
    if let Some((i, c)) = pk.iter().enumerate().find(|(i, _)| pk_values[*i].is_none()) {
        let _ = i;
        return Err(ExecError::invalid(format!(
            "Some partition key parts are missing: {}",
            c.name
        )));
    }
    let mut keys: Vec<Vec<Bytes>> = vec![Vec::new()];
    for values in pk_values.into_iter().flatten() {
        keys = keys
            .into_iter()
            .flat_map(|k| {
                values.iter().map(move |v| {
                    let mut k = k.clone();
                    k.push(v.clone());
                    k
                })
            })
            .collect();
    }
    let keys = keys
        .into_iter()
        .map(|k| {
            let refs: Vec<&[u8]> = k.iter().map(|b| &b[..]).collect();
            serialize_partition_key(&refs)
                .map(DecoratedKey::new)
                .map_err(|e| ExecError::invalid(format!("Invalid partition key: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let prefix_len = ck_values.iter().take_while(|v| v.is_some()).count();
    if ck_values.iter().skip(prefix_len).any(Option::is_some) {
        return Err(ExecError::invalid(
            "PRIMARY KEY column cannot be restricted as preceding column is not restricted",
        ));
    }
    let prefix: Vec<Bytes> = ck_values.into_iter().flatten().collect();
    let slice = if low.is_some() || high.is_some() {
        let types: Vec<(CqlType, ClusteringOrder)> =
            clustering.iter().map(|(c, o)| (c.ty.clone(), *o)).collect();
        let enc = |vals: &[Bytes]| {
            let refs: Vec<&[u8]> = vals.iter().map(|b| &b[..]).collect();
            encode_key(&types, &refs).map_err(|e| ExecError::invalid(e.to_string()))
        };
        let base = enc(&prefix)?;
        let desc = clustering
            .get(prefix_len)
            .is_some_and(|(_, o)| *o == ClusteringOrder::Desc);
        let (low, high) = if desc { (high, low) } else { (low, high) };
        let bound = |b: Option<(usize, Bytes, bool)>, start: bool| -> Result<Bytes, ExecError> {
            match b {
                Some((p, v, incl)) if p == prefix_len => {
                    let mut vals = prefix.clone();
                    vals.push(v);
                    let k = enc(&vals)?;
                    Ok(if start {
                        start_bound(&k, incl)
                    } else {
                        end_bound(&k, incl)
                    })
                }
                Some(_) => Err(ExecError::invalid(
                    "Clustering column slice must follow the restricted prefix",
                )),
                None => Ok(if start {
                    start_bound(&base, true)
                } else {
                    end_bound(&base, true)
                }),
            }
        };
        Some((bound(low, true)?, bound(high, false)?))
    } else {
        None
    };
    Ok(Target {
        keys,
        clustering: prefix,
        slice,
    })
}

fn encode_clustering(t: &TableSchema, values: &[Bytes]) -> Result<Bytes, ExecError> {
    let types: Vec<(CqlType, ClusteringOrder)> = t
        .def
        .clustering()
        .iter()
        .map(|(c, o)| (c.ty.clone(), *o))
        .collect();
    let refs: Vec<&[u8]> = values.iter().map(|b| &b[..]).collect();
    encode_key(&types, &refs).map_err(|e| ExecError::invalid(e.to_string()))
}

/// Set a column of `row` to a value (or null), as INSERT and `UPDATE ... SET c = v` do.
fn set_column(row: &mut Row, c: &ColumnDef, value: Bound, wt: &WriteTime) -> Result<(), ExecError> {
    match value {
        Bound::Unset => {}
        Bound::Null if c.ty.is_multi_cell() => {
            row.column_deletions
                .insert(c.id, DeletionTime::new(wt.timestamp, wt.now));
        }
        Bound::Null => {
            row.cells.insert(CellKey::simple(c.id), wt.tombstone());
        }
        Bound::Value(bytes) if c.ty.is_multi_cell() => {
            row.column_deletions
                .insert(c.id, DeletionTime::new(wt.timestamp - 1, wt.now));
            for (path, value) in collection_cells(c, &bytes, wt)? {
                row.cells
                    .insert(CellKey::element(c.id, path), wt.cell(value));
            }
        }
        Bound::Value(bytes) => {
            if c.ty == CqlType::Counter {
                return Err(ExecError::invalid(format!(
                    "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
                    c.name
                )));
            }
            row.cells.insert(CellKey::simple(c.id), wt.cell(bytes));
        }
    }
    Ok(())
}

/// The element cells of a serialized non-frozen collection: set elements and map keys are
/// their own paths; list elements get time-ordered paths.
fn collection_cells(
    c: &ColumnDef,
    bytes: &[u8],
    wt: &WriteTime,
) -> Result<Vec<(Bytes, Bytes)>, ExecError> {
    let bad = || ExecError::invalid(format!("Invalid collection value for {}", c.name));
    let mut r = bytes;
    let read_i32 = |r: &mut &[u8]| -> Result<i32, ExecError> {
        if r.len() < 4 {
            return Err(bad());
        }
        let v = i32::from_be_bytes([r[0], r[1], r[2], r[3]]);
        *r = &r[4..];
        Ok(v)
    };
    let count = read_i32(&mut r)?;
    let mut items = Vec::new();
    let per = if matches!(c.ty, CqlType::Map { .. }) {
        2
    } else {
        1
    };
    for _ in 0..count.max(0) * per {
        let len = read_i32(&mut r)?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        if r.len() < len {
            return Err(bad());
        }
        items.push(Bytes::copy_from_slice(&r[..len]));
        r = &r[len..];
    }
    Ok(match &c.ty {
        CqlType::Set { .. } => items.into_iter().map(|k| (k, Bytes::new())).collect(),
        CqlType::Map { .. } => items
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
        _ => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (list_path(wt.timestamp, i as u64), v))
            .collect(),
    })
}

/// A list element's path: increasing with the write timestamp and the element's place, so
/// elements sort in list order (Cassandra uses a timeuuid).
fn list_path(timestamp: Timestamp, index: u64) -> Bytes {
    let mut p = Vec::with_capacity(16);
    p.extend_from_slice(&((timestamp as u64) ^ (1 << 63)).to_be_bytes());
    p.extend_from_slice(&index.to_be_bytes());
    Bytes::from(p)
}

fn insert_mutations(
    exec: &Executor,
    run: &Run<'_>,
    i: &Insert,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &i.table)?;
    if i.if_not_exists {
        return Err(ExecError::invalid(
            "Conditional updates (IF NOT EXISTS) are not supported by khata yet",
        ));
    }
    let InsertValues::Columns { columns, values } = &i.values else {
        return Err(ExecError::invalid(
            "INSERT JSON is not supported by khata yet",
        ));
    };
    if columns.len() != values.len() {
        return Err(ExecError::invalid("Unmatched column names/values"));
    }
    let wt = write_time(exec, run, t, &i.using, batch_ts)?;
    let mut given: BTreeMap<&str, (&ColumnDef, &Term)> = BTreeMap::new();
    for (name, term) in columns.iter().zip(values) {
        let c = t
            .def
            .column(&name.0)
            .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", name.0)))?;
        if given.insert(c.name.as_str(), (c, term)).is_some() {
            return Err(ExecError::invalid(format!(
                "Multiple definitions found for column {}",
                c.name
            )));
        }
    }
    let mut pk = Vec::new();
    for c in t.def.partition_key() {
        let (_, term) = given.get(c.name.as_str()).ok_or_else(|| {
            ExecError::invalid(format!("Some partition key parts are missing: {}", c.name))
        })?;
        pk.push(required(run, term, &c.ty, &c.name)?);
    }
    let mut ck = Vec::new();
    for (c, _) in t.def.clustering() {
        let (_, term) = given.get(c.name.as_str()).ok_or_else(|| {
            ExecError::invalid(format!("Some clustering keys are missing: {}", c.name))
        })?;
        ck.push(required(run, term, &c.ty, &c.name)?);
    }
    let refs: Vec<&[u8]> = pk.iter().map(|b| &b[..]).collect();
    let key = DecoratedKey::new(
        serialize_partition_key(&refs)
            .map_err(|e| ExecError::invalid(format!("Invalid partition key: {e}")))?,
    );
    let clustering = encode_clustering(t, &ck)?;
    let mut row = Row {
        liveness: Some(wt.liveness()),
        ..Row::default()
    };
    let mut static_row = Row::default();
    for (c, term) in given.values() {
        match c.kind {
            ColumnKind::Regular => {
                set_column(&mut row, c, bind::value(run, term, &c.ty, &c.name)?, &wt)?
            }
            ColumnKind::Static => set_column(
                &mut static_row,
                c,
                bind::value(run, term, &c.ty, &c.name)?,
                &wt,
            )?,
            _ => {}
        }
    }
    let mut update = Partition::new();
    if !static_row.is_empty() {
        update.static_row = static_row;
    }
    update.add_row(clustering, row);
    Ok(vec![Mutation::new(t.def.id, key, update)])
}

fn update_mutations(
    exec: &Executor,
    run: &Run<'_>,
    u: &Update,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &u.table)?;
    if u.if_clause.is_some() {
        return Err(ExecError::invalid(
            "Conditional updates are not supported by khata yet",
        ));
    }
    let wt = write_time(exec, run, t, &u.using, batch_ts)?;
    let target = target(t, run, &u.where_clause)?;
    if target.slice.is_some() || target.clustering.len() != t.def.clustering().len() {
        return Err(ExecError::invalid(format!(
            "Some clustering keys are missing: {}",
            t.def
                .clustering()
                .get(target.clustering.len())
                .map_or("", |(c, _)| c.name.as_str())
        )));
    }
    let mut row = Row::default();
    let mut static_row = Row::default();
    for a in &u.assignments {
        let c = t
            .def
            .column(&a.column.0)
            .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", a.column.0)))?;
        if matches!(
            c.kind,
            ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
        ) {
            return Err(ExecError::invalid(format!(
                "PRIMARY KEY part {} found in SET part",
                c.name
            )));
        }
        let target_row = if c.kind == ColumnKind::Static {
            &mut static_row
        } else {
            &mut row
        };
        match &a.op {
            AssignmentOp::Set(term) => {
                set_column(target_row, c, bind::value(run, term, &c.ty, &c.name)?, &wt)?
            }
            AssignmentOp::Add(term) if c.ty.is_multi_cell() => {
                if let Bound::Value(bytes) = bind::value(run, term, &c.ty, &c.name)? {
                    for (path, value) in collection_cells(c, &bytes, &wt)? {
                        target_row
                            .cells
                            .insert(CellKey::element(c.id, path), wt.cell(value));
                    }
                }
            }
            AssignmentOp::Subtract(term)
                if c.ty.is_multi_cell() && !matches!(c.ty, CqlType::List { .. }) =>
            {
                if let Bound::Value(bytes) = bind::value(run, term, &c.ty, &c.name)? {
                    for (path, _) in collection_cells(c, &bytes, &wt)? {
                        target_row
                            .cells
                            .insert(CellKey::element(c.id, path), wt.tombstone());
                    }
                }
            }
            _ => {
                return Err(ExecError::invalid(format!(
                    "this operation on column {} is not supported by khata yet",
                    c.name
                )));
            }
        }
    }
    let clustering = encode_clustering(t, &target.clustering)?;
    let mut out = Vec::new();
    for key in target.keys {
        let mut update = Partition::new();
        if !static_row.is_empty() {
            update.static_row = static_row.clone();
        }
        if !row.is_empty() {
            update.add_row(clustering.clone(), row.clone());
        }
        out.push(Mutation::new(t.def.id, key, update));
    }
    Ok(out)
}

fn delete_mutations(
    exec: &Executor,
    run: &Run<'_>,
    d: &Delete,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &d.table)?;
    if d.if_clause.is_some() {
        return Err(ExecError::invalid(
            "Conditional deletions are not supported by khata yet",
        ));
    }
    let using = Using {
        ttl: None,
        timestamp: d.timestamp.clone(),
    };
    let wt = write_time(exec, run, t, &using, batch_ts)?;
    let deletion = DeletionTime::new(wt.timestamp, wt.now);
    let target = target(t, run, &d.where_clause)?;
    let full = target.clustering.len() == t.def.clustering().len() && target.slice.is_none();
    let mut out = Vec::new();
    for key in target.keys {
        let mut update = Partition::new();
        if !d.targets.is_empty() {
            if !full {
                return Err(ExecError::invalid(
                    "Range deletions are not supported for specific columns",
                ));
            }
            let mut row = Row::default();
            let mut static_row = Row::default();
            for target_col in &d.targets {
                let c = t.def.column(&target_col.column.0).ok_or_else(|| {
                    ExecError::invalid(format!("Undefined column name {}", target_col.column.0))
                })?;
                let r = if c.kind == ColumnKind::Static {
                    &mut static_row
                } else {
                    &mut row
                };
                if c.ty.is_multi_cell() {
                    r.column_deletions.insert(c.id, deletion);
                } else {
                    r.cells.insert(CellKey::simple(c.id), wt.tombstone());
                }
            }
            update.static_row = static_row;
            if !row.is_empty() {
                update.add_row(encode_clustering(t, &target.clustering)?, row);
            }
        } else if let Some((start, end)) = &target.slice {
            update
                .range_tombstones
                .add(start.clone(), end.clone(), deletion);
        } else if target.clustering.is_empty() {
            update.deletion = Some(deletion);
        } else if full {
            update.add_row(
                encode_clustering(t, &target.clustering)?,
                Row {
                    deletion: Some(deletion),
                    ..Row::default()
                },
            );
        } else {
            let prefix = encode_clustering(t, &target.clustering)?;
            update.range_tombstones.add(
                start_bound(&prefix, true),
                end_bound(&prefix, true),
                deletion,
            );
        }
        out.push(Mutation::new(t.def.id, key, update));
    }
    Ok(out)
}

fn mutations_of(
    exec: &Executor,
    run: &Run<'_>,
    statement: &Statement,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    match statement {
        Statement::Insert(i) => insert_mutations(exec, run, i, batch_ts),
        Statement::Update(u) => update_mutations(exec, run, u, batch_ts),
        Statement::Delete(d) => delete_mutations(exec, run, d, batch_ts),
        _ => Err(ExecError::invalid(
            "Only INSERT, UPDATE and DELETE can be batched",
        )),
    }
}

/// Run one INSERT, UPDATE or DELETE.
pub(crate) async fn run_single(
    exec: &Executor,
    statement: &Statement,
    run: &mut Run<'_>,
) -> Result<ResultBody, ExecError> {
    let mutations = mutations_of(exec, run, statement, None)?;
    exec.coordinator()
        .write(
            mutations,
            coordinator_consistency(run.params.consistency),
            WriteType::Simple,
        )
        .await?;
    Ok(ResultBody::Void)
}

/// Bytes of a batch's mutations, as the batch size thresholds count them.
fn batch_size(mutations: &[Mutation]) -> usize {
    mutations.iter().map(|m| m.update.size_estimate()).sum()
}

async fn write_batch(
    exec: &Executor,
    mutations: Vec<Mutation>,
    logged: bool,
    consistency: frame::Consistency,
    warnings: &mut Vec<String>,
) -> Result<(), ExecError> {
    let size = batch_size(&mutations);
    let config = exec.config();
    let partitions: std::collections::BTreeSet<_> = mutations
        .iter()
        .map(|m| (m.table, m.key.key.clone()))
        .collect();
    if size > config.batch_size_fail_threshold_bytes {
        return Err(ExecError::invalid(format!(
            "Batch too large: {} partitions, {size} bytes, more than batch_size_fail_threshold ({} bytes)",
            partitions.len(),
            config.batch_size_fail_threshold_bytes
        )));
    }
    if size > config.batch_size_warn_threshold_bytes {
        warnings.push(format!(
            "Batch for {} partitions is of size {size}, exceeding specified threshold of {} by {}.",
            partitions.len(),
            config.batch_size_warn_threshold_bytes,
            size - config.batch_size_warn_threshold_bytes
        ));
    }
    if mutations.is_empty() {
        return Ok(());
    }
    let write_type = if logged {
        WriteType::Batch
    } else {
        WriteType::UnloggedBatch
    };
    exec.coordinator()
        .write(mutations, coordinator_consistency(consistency), write_type)
        .await?;
    Ok(())
}

/// `BEGIN BATCH ... APPLY BATCH` sent as one statement.
pub(crate) async fn run_text_batch(
    exec: &Executor,
    batch: &AstBatch,
    run: &mut Run<'_>,
) -> Result<ResultBody, ExecError> {
    if batch.kind == BatchKind::Counter {
        return Err(ExecError::invalid(
            "Counter batches are not supported by khata yet",
        ));
    }
    let ts = match &batch.using.timestamp {
        Some(v) => bind::int_value(run, v, "timestamp")?,
        None => None,
    }
    .or(run.params.default_timestamp)
    .unwrap_or_else(|| exec.coordinator().timestamp());
    let mut mutations = Vec::new();
    for s in &batch.statements {
        let statement = match s {
            BatchStatement::Insert(i) => Statement::Insert(Box::new(i.clone())),
            BatchStatement::Update(u) => Statement::Update(Box::new(u.clone())),
            BatchStatement::Delete(d) => Statement::Delete(Box::new(d.clone())),
        };
        mutations.extend(mutations_of(exec, run, &statement, Some(ts))?);
    }
    let mut warnings = Vec::new();
    write_batch(
        exec,
        mutations,
        batch.kind == BatchKind::Logged,
        run.params.consistency,
        &mut warnings,
    )
    .await?;
    run.warnings.extend(warnings);
    Ok(ResultBody::Void)
}

/// The BATCH message: statements by text or by prepared id, each with its values.
pub(crate) async fn run_batch(
    exec: &Executor,
    session: &Session,
    batch: &frame::Batch,
) -> Result<(ResultBody, Vec<String>), ExecError> {
    if batch.batch_type == BatchType::Counter {
        return Err(ExecError::invalid(
            "Counter batches are not supported by khata yet",
        ));
    }
    let ts = batch
        .default_timestamp
        .unwrap_or_else(|| exec.coordinator().timestamp());
    let mut params = frame::QueryParameters::new(batch.consistency);
    params.default_timestamp = Some(ts);
    let keyspace = batch.keyspace.clone().or_else(|| session.keyspace());
    let mut mutations = Vec::new();
    for s in &batch.statements {
        let (parsed, values, ks) = match s {
            frame::BatchStatement::Query { query, values } => {
                let parsed = crate::language::parse_statement(query)
                    .map_err(|e| ExecError::Body(super::error::parse_error(&e)))?;
                (std::sync::Arc::new(parsed), values, keyspace.clone())
            }
            frame::BatchStatement::Prepared { id, values } => {
                let p = exec.prepared_statement(id)?;
                let ks = p.keyspace.clone().or_else(|| keyspace.clone());
                (std::sync::Arc::new(p.parsed.clone()), values, ks)
            }
        };
        let values: Vec<Value> = super::bind_values(&parsed, values)?;
        let run = Run {
            session,
            coordinator: exec.coordinator().clone(),
            now_micros: ts,
            keyspace: ks,
            values,
            params: &params,
            warnings: Vec::new(),
        };
        mutations.extend(mutations_of(exec, &run, &parsed.statement, Some(ts))?);
    }
    let mut warnings = Vec::new();
    write_batch(
        exec,
        mutations,
        batch.batch_type == BatchType::Logged,
        batch.consistency,
        &mut warnings,
    )
    .await?;
    Ok((ResultBody::Void, warnings))
}
