//! INSERT, UPDATE, DELETE and BATCH: statements to mutations, written through the coordinator.
//!
//! Semantics follow Cassandra: INSERT writes a row marker (so the row exists with only its key)
//! and UPDATE does not; a null writes a cell tombstone; an unset value leaves the column
//! alone; writing a whole non-frozen collection first deletes it (a collection tombstone at
//! timestamp - 1); `USING TTL` (or the table's `default_time_to_live`) makes cells expire;
//! `USING TIMESTAMP` (or the client's default timestamp) replaces the coordinator's.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::WriteType;
use khata_coordinator::catalog::{Mutation, TableSchema};
use khata_types::cell::DeletionTime;
use khata_types::clustering::{end_bound, start_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ColumnDef, ColumnKind, CqlType};
use khata_types::token::{DecoratedKey, serialize_partition_key};
use khata_types::{MAX_TTL_SECONDS, Timestamp};

use super::bind::{self, Bound};
use super::cells::{
    Deferred, WriteTime, add_elements, column_part, field_path, put_cell, put_column_deletion,
    remove_elements, set_column,
};
use super::error::{ExecError, coordinator_consistency};
use super::restrictions::{self, Restrictions};
use super::{Executor, Run, lwt};
use crate::frame::{self, BatchType, ResultBody, Value};
use crate::language::ast::{
    AssignmentOp, Batch as AstBatch, BatchKind, BatchStatement, Delete, ElementSelector, IfClause,
    Insert, InsertValues, IntValue, Literal, Relation, Statement, Term, Update, Using,
};
use crate::server::Session;

fn write_time(
    exec: &Executor,
    run: &Run<'_>,
    t: &TableSchema,
    using: &Using,
    batch_timestamp: Option<Timestamp>,
) -> Result<WriteTime, ExecError> {
    let timestamp = match &using.timestamp {
        Some(v) => bind::int_value(run, v, "timestamp", true)?,
        None => None,
    }
    .or(batch_timestamp)
    .or(run.params.default_timestamp)
    .unwrap_or_else(|| exec.coordinator().timestamp());
    // Cassandra's UpdateParameters: Long.MIN_VALUE stands for "no timestamp" inside it.
    if timestamp == i64::MIN {
        return Err(ExecError::invalid(format!(
            "Out of bound timestamp, must be in [{}, {}]",
            i64::MIN + 1,
            i64::MAX
        )));
    }
    let ttl = match &using.ttl {
        // A null (or empty) TTL is no TTL, even on a table with a default one, and an unset
        // one is the default (Cassandra's Attributes.getTimeToLive).
        Some(IntValue::Marker(m))
            if matches!(run.values.get(m.index), Some(Value::Null))
                || matches!(run.values.get(m.index), Some(Value::Set(b)) if b.is_empty()) =>
        {
            Some(0)
        }
        Some(v) => match bind::int_value(run, v, "ttl", false)? {
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
    // v5's now_in_seconds (for tests) sets the local deletion time of tombstones and TTLs.
    let now = match run.params.now_in_seconds {
        Some(n) if n > 0 => n as u32,
        _ => exec.coordinator().now_seconds(),
    };
    Ok(WriteTime {
        timestamp,
        now,
        ttl,
    })
}

/// What a WHERE clause of a modification names: partition keys, then whole rows (every
/// clustering column by `=`/`IN`) or clustering ranges (a prefix or a slice), or neither
/// (the partition).
struct Target {
    keys: Vec<DecoratedKey>,
    /// Encoded clustering keys of whole rows (one empty key for a table without clustering).
    rows: Option<Vec<Bytes>>,
    /// Clustering byte ranges of a prefix or slice.
    ranges: Option<Vec<(Bytes, Bytes)>>,
    /// Whether a clustering column is restricted by a slice.
    sliced: bool,
}

/// `rows_required`: an UPDATE that writes a row, which must name every clustering column.
/// The checks run in the order of Cassandra's `StatementRestrictions`: the partition key,
/// then the clustering columns, then the columns outside the primary key.
fn target(
    t: &TableSchema,
    run: &Run<'_>,
    where_clause: &[Relation],
    statement: &str,
    rows_required: bool,
) -> Result<Target, ExecError> {
    if where_clause
        .iter()
        .any(|r| matches!(r, Relation::Token { .. }))
    {
        return Err(ExecError::invalid(format!(
            "The token function cannot be used in WHERE clauses for {statement} statements"
        )));
    }
    let r = Restrictions::new(t, run, where_clause)?;
    if !r.has_partition_keys() {
        return Err(ExecError::invalid(format!(
            "Some partition key parts are missing: {}",
            r.unrestricted_partition_key(t).join(", ")
        )));
    }
    if rows_required && !r.names_rows(t) {
        if r.has_clustering_slice() {
            return Err(ExecError::invalid(format!(
                "Slice restrictions are not supported on the clustering columns in {statement} statements"
            )));
        }
        return Err(missing_clustering(t, where_clause));
    }
    if !r.filters.is_empty() {
        // Cassandra's text, its trailing space included.
        let names: Vec<&str> = r.filters.iter().map(|f| f.column.name.as_str()).collect();
        return Err(ExecError::invalid(format!(
            "Non PRIMARY KEY columns found in where clause: {} ",
            names.join(", ")
        )));
    }
    let keys = r.partition_keys()?;
    let (rows, ranges) = if r.names_rows(t) {
        (Some(r.clustering_prefixes(t)?), None)
    } else if r.has_clustering() {
        (None, Some(r.clustering_ranges(t)?))
    } else {
        (None, None)
    };
    Ok(Target {
        keys,
        rows,
        ranges,
        sliced: r.has_clustering_slice(),
    })
}

fn insert_mutations(
    exec: &Executor,
    run: &Run<'_>,
    i: &Insert,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &i.table)?;
    if counter_table(&t.def) {
        return Err(ExecError::invalid(
            "INSERT statements are not allowed on counter tables, use UPDATE instead",
        ));
    }
    let wt = write_time(exec, run, t, &i.using, batch_ts)?;
    // Every named column with its bound value.
    let mut given: BTreeMap<&str, (&ColumnDef, Bound)> = BTreeMap::new();
    match &i.values {
        InsertValues::Columns { columns, values } => {
            if columns.len() != values.len() {
                return Err(ExecError::invalid("Unmatched column names/values"));
            }
            for (name, term) in columns.iter().zip(values) {
                let c = t.def.column(&name.0).ok_or_else(|| {
                    ExecError::invalid(format!("Undefined column name {}", name.0))
                })?;
                let value = bind::value(run, term, &c.ty, &c.name)?;
                if given.insert(c.name.as_str(), (c, value)).is_some() {
                    return Err(ExecError::invalid("The column names contains duplicates"));
                }
            }
        }
        InsertValues::Json {
            value,
            default_unset,
        } => {
            let text = match bind::value(run, value, &CqlType::Text, "[json]")? {
                Bound::Value(b) => String::from_utf8(b.to_vec())
                    .map_err(|_| ExecError::invalid("Invalid JSON: not UTF-8"))?,
                _ => return Err(ExecError::invalid("Got null for INSERT JSON values")),
            };
            let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                ExecError::invalid(format!(
                    "Could not decode JSON string as a map: {e}. (String was: {text})"
                ))
            })?;
            let object = match json {
                serde_json::Value::Object(object) => object,
                // The JSON text `null`, as a bound null is.
                serde_json::Value::Null => {
                    return Err(ExecError::invalid("Got null for INSERT JSON values"));
                }
                _ => {
                    return Err(ExecError::invalid(format!(
                        "Could not decode JSON string as a map: {text}"
                    )));
                }
            };
            for key in object.keys() {
                // A quoted key names a case-sensitive column.
                let name = key
                    .strip_prefix('"')
                    .and_then(|k| k.strip_suffix('"'))
                    .map_or_else(|| key.to_ascii_lowercase(), str::to_string);
                if t.def.column(&name).is_none() {
                    return Err(ExecError::invalid(format!(
                        "JSON values map contains unrecognized column: {key}"
                    )));
                }
            }
            let now_millis = run.now_micros / 1000;
            for c in &t.def.columns {
                let found = object.iter().find(|(k, _)| {
                    k.strip_prefix('"')
                        .and_then(|k| k.strip_suffix('"'))
                        .map_or_else(|| k.eq_ignore_ascii_case(&c.name), |q| q == c.name)
                });
                let value = match found {
                    Some((_, v)) => {
                        match crate::value::json::from_json(&c.ty, v, &c.name, now_millis)
                            .map_err(|e| ExecError::invalid(e.to_string()))?
                        {
                            Some(v) => Bound::Value(Bytes::from(v.to_bytes(&c.ty))),
                            None => Bound::Null,
                        }
                    }
                    None if *default_unset => Bound::Unset,
                    None => Bound::Null,
                };
                given.insert(c.name.as_str(), (c, value));
            }
        }
    }
    let key_value = |c: &ColumnDef| -> Result<&[u8], ExecError> {
        match given.get(c.name.as_str()) {
            Some((_, Bound::Value(b))) => Ok(&b[..]),
            Some((_, Bound::Null)) => Err(ExecError::invalid(format!(
                "Invalid null value in condition for column {}",
                c.name
            ))),
            // A key column bound to UNSET is named, not missing: Cassandra turns the INSERT's
            // key columns into `c = ?` restrictions, which refuse an unset value.
            Some((_, Bound::Unset)) => Err(unset_key(c)),
            // Cassandra's two wordings.
            _ if matches!(c.kind, ColumnKind::PartitionKey { .. }) => Err(ExecError::invalid(
                format!("Some partition key parts are missing: {}", c.name),
            )),
            _ => Err(ExecError::invalid(format!(
                "Some clustering keys are missing: {}",
                c.name
            ))),
        }
    };
    let mut pk = Vec::new();
    for c in t.def.partition_key() {
        pk.push(key_value(c)?);
    }
    // An INSERT that names no clustering column and sets static columns only writes the
    // partition's static row and no row (Cassandra allows it; a regular column needs a row).
    let clustering = t.def.clustering();
    let static_only = !clustering.is_empty()
        && clustering
            .iter()
            .all(|(c, _)| !given.contains_key(c.name.as_str()))
        && given.values().any(|(c, _)| c.kind == ColumnKind::Static)
        && given
            .values()
            .all(|(c, _)| matches!(c.kind, ColumnKind::Static | ColumnKind::PartitionKey { .. }));
    let mut ck = Vec::new();
    if !static_only {
        for (c, _) in &clustering {
            ck.push(key_value(c)?);
        }
    }
    let key = DecoratedKey::new(
        serialize_partition_key(&pk)
            .map_err(|e| ExecError::invalid(format!("Invalid partition key: {e}")))?,
    );
    if key.key.is_empty() {
        return Err(ExecError::invalid("Key may not be empty"));
    }
    let clustering_key = if static_only {
        None
    } else {
        Some(restrictions::encode_refs(t, &ck)?)
    };
    insert_mutation(t, key, clustering_key, &wt, given.into_values())
}

/// An INSERT's one mutation: each `(column, value)` set on the row, which carries the
/// primary-key liveness, or on the static row; no row without a `clustering_key` (an INSERT
/// of static columns only). Key columns among them are skipped.
fn insert_mutation<'c>(
    t: &TableSchema,
    key: DecoratedKey,
    clustering_key: Option<Bytes>,
    wt: &WriteTime,
    cells: impl IntoIterator<Item = (&'c ColumnDef, Bound)>,
) -> Result<Vec<Mutation>, ExecError> {
    let mut row = Row {
        liveness: Some(wt.liveness()),
        ..Row::default()
    };
    let mut static_row = Row::default();
    for (c, value) in cells {
        match c.kind {
            ColumnKind::Regular => set_column(&mut row, c, value, wt)?,
            ColumnKind::Static => set_column(&mut static_row, c, value, wt)?,
            _ => {}
        }
    }
    let mut update = Partition::new();
    if !static_row.is_empty() {
        update.static_row = static_row;
    }
    if let Some(clustering_key) = clustering_key {
        update.add_row(clustering_key, row);
    }
    Ok(vec![Mutation::new(t.def.id, key, update)])
}

/// What an INSERT with a column list needs of its table's schema, worked out once per schema
/// snapshot for a prepared statement (the executor's plan cache): the table, each named
/// column, and where the key columns are among them. Every check of the schema alone (counter
/// table, column count, unknown or repeated columns, missing key columns) has passed.
#[derive(Debug)]
pub(crate) struct InsertShape {
    table: Arc<TableSchema>,
    /// The column of each value, in the statement's order (indexes into the table's columns).
    columns: Vec<usize>,
    /// Positions in `columns` of the partition key columns, in key order.
    pk: Vec<usize>,
    /// Positions in `columns` of the clustering columns, in order (empty: static columns only).
    ck: Vec<usize>,
    /// An INSERT of static columns only: no row, the partition's static row.
    static_only: bool,
    /// Positions in `columns` in the order of the columns' names (the order cells are set).
    by_name: Vec<usize>,
}

impl InsertShape {
    /// The shape of `i`, or `None` when a run of it would fail on the schema alone or it is
    /// not one this plans (INSERT JSON): such statements take the unplanned path every time.
    pub(crate) fn new(
        schema: &khata_coordinator::catalog::Schema,
        run: &Run<'_>,
        i: &Insert,
    ) -> Option<InsertShape> {
        let InsertValues::Columns { columns, values } = &i.values else {
            return None;
        };
        let table = run.table(schema, &i.table).ok()?.clone();
        let def = &table.def;
        if columns.len() != values.len() || counter_table(def) {
            return None;
        }
        let mut indexes = Vec::with_capacity(columns.len());
        for name in columns {
            let index = def.columns.iter().position(|c| c.name == name.0)?;
            if indexes.contains(&index) {
                return None;
            }
            indexes.push(index);
        }
        let position = |c: &ColumnDef| {
            indexes
                .iter()
                .position(|&index| def.columns[index].name == c.name)
        };
        let pk = def
            .partition_key()
            .into_iter()
            .map(position)
            .collect::<Option<Vec<usize>>>()?;
        let clustering = def.clustering();
        let named = |kind: fn(&ColumnKind) -> bool| {
            indexes.iter().any(|&index| kind(&def.columns[index].kind))
        };
        let static_only = !clustering.is_empty()
            && clustering.iter().all(|(c, _)| position(c).is_none())
            && named(|k| *k == ColumnKind::Static)
            && !named(|k| matches!(k, ColumnKind::Regular | ColumnKind::Clustering { .. }));
        let ck = if static_only {
            Vec::new()
        } else {
            clustering
                .iter()
                .map(|(c, _)| position(c))
                .collect::<Option<Vec<usize>>>()?
        };
        let mut by_name: Vec<usize> = (0..indexes.len()).collect();
        by_name.sort_by(|&a, &b| {
            def.columns[indexes[a]]
                .name
                .cmp(&def.columns[indexes[b]].name)
        });
        Some(InsertShape {
            table,
            columns: indexes,
            pk,
            ck,
            static_only,
            by_name,
        })
    }
}

/// An INSERT's mutation through its [`InsertShape`]: what [`insert_mutations`] does, without
/// looking anything up in the schema.
fn shaped_insert_mutations(
    exec: &Executor,
    run: &Run<'_>,
    i: &Insert,
    shape: &InsertShape,
    batch_ts: Option<Timestamp>,
) -> Result<Vec<Mutation>, ExecError> {
    let t = &shape.table;
    let InsertValues::Columns { values, .. } = &i.values else {
        return insert_mutations(exec, run, i, batch_ts);
    };
    let wt = write_time(exec, run, t, &i.using, batch_ts)?;
    let columns: Vec<&ColumnDef> = shape.columns.iter().map(|&c| &t.def.columns[c]).collect();
    let mut bound = Vec::with_capacity(values.len());
    for (c, term) in columns.iter().zip(values) {
        bound.push(bind::value(run, term, &c.ty, &c.name)?);
    }
    let key_value = |position: usize| -> Result<&[u8], ExecError> {
        let c = columns[position];
        match &bound[position] {
            Bound::Value(b) => Ok(&b[..]),
            Bound::Null => Err(ExecError::invalid(format!(
                "Invalid null value in condition for column {}",
                c.name
            ))),
            Bound::Unset => Err(unset_key(c)),
        }
    };
    let pk = shape
        .pk
        .iter()
        .map(|&p| key_value(p))
        .collect::<Result<Vec<&[u8]>, ExecError>>()?;
    let ck = shape
        .ck
        .iter()
        .map(|&p| key_value(p))
        .collect::<Result<Vec<&[u8]>, ExecError>>()?;
    let key = DecoratedKey::new(
        serialize_partition_key(&pk)
            .map_err(|e| ExecError::invalid(format!("Invalid partition key: {e}")))?,
    );
    if key.key.is_empty() {
        return Err(ExecError::invalid("Key may not be empty"));
    }
    let clustering_key = if shape.static_only {
        None
    } else {
        Some(restrictions::encode_refs(t, &ck)?)
    };
    let mut bound: Vec<Option<Bound>> = bound.into_iter().map(Some).collect();
    let cells = shape
        .by_name
        .iter()
        .filter_map(|&position| Some((columns[position], bound[position].take()?)));
    insert_mutation(t, key, clustering_key, &wt, cells)
}

/// The key of `m[key]` in an UPDATE or DELETE, in Cassandra's words when it is null or unset
/// (Maps.SetterByKey, DiscarderByKey).
fn map_key(run: &Run<'_>, term: &Term, ty: &CqlType, column: &str) -> Result<Bytes, ExecError> {
    match bind::value(run, term, ty, column)? {
        Bound::Value(k) => Ok(k),
        Bound::Null => Err(ExecError::invalid("Invalid null map key")),
        Bound::Unset => Err(ExecError::invalid("Invalid unset map key")),
    }
}

/// The index of `l[index]` in an UPDATE or DELETE; `None` when it is unset, which an UPDATE
/// refuses and a DELETE ignores (Cassandra's Lists.SetterByIndex, DiscarderByIndex).
fn list_index(run: &Run<'_>, term: &Term, column: &str) -> Result<Option<i32>, ExecError> {
    match bind::value(run, term, &CqlType::Int, column)? {
        Bound::Value(index) => <[u8; 4]>::try_from(&index[..])
            .map(|b| Some(i32::from_be_bytes(b)))
            .map_err(|_| ExecError::invalid("Invalid list index")),
        Bound::Null => Err(ExecError::invalid("Invalid null value for list index")),
        Bound::Unset => Ok(None),
    }
}

/// An INSERT's key column bound to UNSET (Cassandra's `EQRestriction.appendTo` words).
fn unset_key(c: &ColumnDef) -> ExecError {
    ExecError::invalid(format!("Invalid unset value for column {}", c.name))
}

/// A counter table: flagged so (it stays one once its counter columns are dropped, as in
/// Cassandra), or with a counter column.
fn counter_table(def: &khata_types::schema::TableDef) -> bool {
    def.options.counter || def.columns.iter().any(|c| c.ty == CqlType::Counter)
}

/// Counters take the coordinator's time and never expire (Cassandra's messages).
fn refuse_counter_using(t: &TableSchema, using: &Using) -> Result<(), ExecError> {
    if !counter_table(&t.def) {
        return Ok(());
    }
    if using.timestamp.is_some() {
        return Err(ExecError::invalid(
            "Cannot provide custom timestamp for counter updates",
        ));
    }
    if using.ttl.is_some() {
        return Err(ExecError::invalid(
            "Cannot provide custom TTL for counter updates",
        ));
    }
    Ok(())
}

fn update_mutations(
    exec: &Executor,
    run: &Run<'_>,
    u: &Update,
    batch_ts: Option<Timestamp>,
) -> Result<Planned, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &u.table)?;
    refuse_counter_using(t, &u.using)?;
    let wt = write_time(exec, run, t, &u.using, batch_ts)?;
    // An UPDATE that names no clustering column and sets static columns only writes the
    // partition's static row (Cassandra allows it; a regular column needs a row). The empty
    // clustering stands for "no row" below: no row is added, and deferred operations on
    // static columns read the partition's static row.
    let static_only = !u.assignments.is_empty()
        && u.assignments.iter().all(|a| {
            t.def
                .column(&a.column.0)
                .is_some_and(|c| c.kind == ColumnKind::Static)
        });
    let target = target(t, run, &u.where_clause, "UPDATE", !static_only)?;
    let names_clustering = target.rows.is_some() || target.ranges.is_some();
    if static_only && names_clustering && conditions_static_only(t, u.if_clause.as_ref()) {
        return Err(ExecError::invalid(
            "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns",
        ));
    }
    // A condition on a regular column needs the row the whole key names.
    if static_only && !names_clustering && conditions_on_regular(t, u.if_clause.as_ref()) {
        return Err(missing_clustering(t, &u.where_clause));
    }
    let target_rows = match target.rows.clone() {
        Some(rows) => rows,
        None if static_only && target.ranges.is_none() => vec![Bytes::new()],
        None if static_only => {
            return Err(ExecError::invalid(
                "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns",
            ));
        }
        None if target.sliced => {
            return Err(ExecError::invalid(
                "Slice restrictions are not supported on the clustering columns in UPDATE statements",
            ));
        }
        None => return Err(missing_clustering(t, &u.where_clause)),
    };
    let mut row = Row::default();
    let mut static_row = Row::default();
    let mut deferred = Vec::new();
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
        let counter = c.ty == CqlType::Counter;
        let multi_cell_collection = c.ty.is_multi_cell()
            && matches!(
                c.ty,
                CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }
            );
        match &a.op {
            AssignmentOp::Set(term) => {
                set_column(target_row, c, bind::value(run, term, &c.ty, &c.name)?, &wt)?
            }
            AssignmentOp::Add(_) | AssignmentOp::Subtract(_)
                if counter && u.using.timestamp.is_some() =>
            {
                return Err(ExecError::invalid(
                    "Cannot provide custom timestamp for counter updates",
                ));
            }
            AssignmentOp::Add(term) | AssignmentOp::Subtract(term) if counter => {
                let bytes = match bind::value(run, term, &CqlType::Bigint, &c.name)? {
                    Bound::Value(bytes) => bytes,
                    // An unset increment leaves the counter alone (Cassandra's Constants.Adder).
                    Bound::Unset => continue,
                    // A literal null is refused when Cassandra prepares the statement, a bound
                    // one when it runs it: two wordings.
                    Bound::Null if matches!(term, Term::Literal(Literal::Null)) => {
                        return Err(ExecError::invalid(
                            "Invalid null value for counter increment/decrement",
                        ));
                    }
                    Bound::Null => {
                        return Err(ExecError::invalid(
                            "Invalid null value for counter increment",
                        ));
                    }
                };
                let delta = <[u8; 8]>::try_from(&bytes[..])
                    .map(i64::from_be_bytes)
                    .map_err(|_| ExecError::invalid("Invalid counter increment"))?;
                let delta = match a.op {
                    AssignmentOp::Subtract(_) => delta.checked_neg().ok_or_else(|| {
                        ExecError::invalid(format!(
                            "The negation of {delta} overflows supported counter precision (signed 8 bytes integer)"
                        ))
                    })?,
                    _ => delta,
                };
                deferred.push(Deferred::CounterAdd {
                    column: c.clone(),
                    delta,
                });
            }
            // Only collections take `+`/`-`: a non-frozen UDT is multi-cell too, but Cassandra
            // refuses `u = u + {a: 1}` as for any non counter column.
            AssignmentOp::Add(term) | AssignmentOp::Prepend(term) if multi_cell_collection => {
                if let Bound::Value(bytes) = bind::value(run, term, &c.ty, &c.name)? {
                    let prepend = matches!(a.op, AssignmentOp::Prepend(_));
                    if prepend && !matches!(c.ty, CqlType::List { .. }) {
                        return Err(invalid_operation(c, &a.op));
                    }
                    add_elements(target_row, c, &bytes, &wt, prepend)?;
                }
            }
            AssignmentOp::Subtract(term) if multi_cell_collection => {
                // `m = m - {k, ...}` takes a set of keys.
                let operand_ty = match &c.ty {
                    CqlType::Map { key, .. } => CqlType::Set {
                        element: key.clone(),
                        frozen: false,
                    },
                    other => other.clone(),
                };
                if let Bound::Value(bytes) = bind::value(run, term, &operand_ty, &c.name)? {
                    let removed = ColumnDef {
                        ty: operand_ty.clone(),
                        ..c.clone()
                    };
                    if let CqlType::List { element, .. } = &c.ty {
                        let values = match crate::value::CqlValue::deserialize(&c.ty, &bytes) {
                            Ok(crate::value::CqlValue::List(items)) => items
                                .into_iter()
                                .map(|v| Bytes::from(v.to_bytes(element)))
                                .collect(),
                            _ => Vec::new(),
                        };
                        deferred.push(Deferred::ListRemove {
                            column: c.clone(),
                            values,
                            earlier: column_part(target_row, c.id),
                        });
                    } else {
                        remove_elements(target_row, &removed, &bytes, &wt)?;
                    }
                }
            }
            AssignmentOp::SetElement { key, value } if c.ty.is_multi_cell() => match &c.ty {
                CqlType::Map {
                    key: key_ty,
                    value: value_ty,
                    ..
                } => {
                    let k = map_key(run, key, key_ty, &c.name)?;
                    let cell = match bind::value(run, value, value_ty, &c.name)? {
                        Bound::Value(v) => wt.cell(v),
                        Bound::Null => wt.tombstone(),
                        Bound::Unset => continue,
                    };
                    put_cell(target_row, CellKey::element(c.id, k), cell);
                }
                CqlType::List { element, .. } => {
                    let index = match list_index(run, key, &c.name)? {
                        Some(index) => index,
                        None => {
                            return Err(ExecError::invalid("Invalid unset value for list index"));
                        }
                    };
                    let value = match bind::value(run, value, element, &c.name)? {
                        Bound::Value(v) => Some(v),
                        Bound::Null => None,
                        Bound::Unset => continue,
                    };
                    deferred.push(Deferred::ListSet {
                        column: c.clone(),
                        index,
                        value,
                        earlier: column_part(target_row, c.id),
                    });
                }
                _ => return Err(invalid_operation(c, &a.op)),
            },
            AssignmentOp::SetField { field, value } => {
                let CqlType::Udt {
                    fields,
                    frozen: false,
                    ..
                } = &c.ty
                else {
                    let what = if matches!(c.ty, CqlType::Udt { .. }) {
                        "frozen UDT"
                    } else {
                        "non-UDT"
                    };
                    return Err(ExecError::invalid(format!(
                        "Invalid operation ({}.{} = {value}) for {what} column {}",
                        c.name, field.0, c.name
                    )));
                };
                let Some(index) = fields.iter().position(|(n, _)| *n == field.0) else {
                    return Err(ExecError::invalid(format!(
                        "UDT column {} does not have a field named {}",
                        c.name, field.0
                    )));
                };
                let cell = match bind::value(run, value, &fields[index].1, &c.name)? {
                    Bound::Value(v) => wt.cell(v),
                    Bound::Null => wt.tombstone(),
                    Bound::Unset => continue,
                };
                put_cell(target_row, CellKey::element(c.id, field_path(index)), cell);
            }
            _ => return Err(invalid_operation(c, &a.op)),
        }
    }
    // The statement's own deletions shadow its cells they cover (`DELETE m, m[1]`).
    row.shadow(None);
    static_row.shadow(None);
    let mut planned = Planned::default();
    if static_only && !conditions_static_only(t, u.if_clause.as_ref()) {
        planned.named_row = target_rows.first().filter(|c| !c.is_empty()).cloned();
    }
    for key in target.keys {
        let mut update = Partition::new();
        if !static_row.is_empty() {
            update.static_row = static_row.clone();
        }
        for clustering in &target_rows {
            if !row.is_empty() {
                update.add_row(clustering.clone(), row.clone());
            }
            if !deferred.is_empty() {
                planned.deferred.push(DeferredWrite {
                    table: t.def.id,
                    key: key.clone(),
                    clustering: clustering.clone(),
                    ops: deferred.clone(),
                    wt,
                });
            }
        }
        planned.mutations.push(Mutation::new(t.def.id, key, update));
    }
    Ok(planned)
}

/// An UPDATE that names no row: Cassandra's refusal, naming every clustering column.
pub(crate) fn missing_clustering(t: &TableSchema, where_clause: &[Relation]) -> ExecError {
    // Cassandra's `getUnrestrictedClusteringColumns`: the columns the clause leaves alone.
    let restricted = |name: &str| {
        where_clause.iter().any(|r| match r {
            Relation::Column { column, .. }
            | Relation::In { column, .. }
            | Relation::Between { column, .. } => column.0 == name,
            Relation::MultiColumn { columns, .. } | Relation::MultiColumnIn { columns, .. } => {
                columns.iter().any(|c| c.0 == name)
            }
            _ => false,
        })
    };
    let names: Vec<&str> = t
        .def
        .clustering()
        .iter()
        .map(|(c, _)| c.name.as_str())
        .filter(|name| !restricted(name))
        .collect();
    ExecError::invalid(format!(
        "Some clustering keys are missing: {}",
        names.join(", ")
    ))
}

/// Whether a statement's conditions leave it about static columns only (Cassandra's
/// `appliesOnlyToStaticColumns` over its conditions): none, or each on a static column.
/// `IF EXISTS` is taken as about the row.
fn conditions_static_only(t: &TableSchema, clause: Option<&IfClause>) -> bool {
    !matches!(clause, Some(IfClause::Exists)) && !conditions_on_regular(t, clause)
}

/// Whether a statement has a condition on a column that is not static.
fn conditions_on_regular(t: &TableSchema, clause: Option<&IfClause>) -> bool {
    matches!(clause, Some(IfClause::Conditions(conditions)) if conditions.iter().any(|c| {
        t.def
            .column(&c.column.0)
            .is_none_or(|c| c.kind != ColumnKind::Static)
    }))
}

fn delete_mutations(
    exec: &Executor,
    run: &Run<'_>,
    d: &Delete,
    batch_ts: Option<Timestamp>,
) -> Result<Planned, ExecError> {
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, &d.table)?;
    let using = Using {
        ttl: None,
        timestamp: d.timestamp.clone(),
    };
    refuse_counter_using(t, &using)?;
    let wt = write_time(exec, run, t, &using, batch_ts)?;
    let deletion = DeletionTime::new(wt.timestamp, wt.now);
    let target = target(t, run, &d.where_clause, "DELETE", false)?;
    let no_clustering = t.def.clustering().is_empty();
    let mut planned = Planned::default();
    let statics_only_targets = !d.targets.is_empty()
        && d.targets.iter().all(|tc| {
            t.def
                .column(&tc.column.0)
                .is_some_and(|c| c.kind == ColumnKind::Static)
        });
    if statics_only_targets
        && !conditions_static_only(t, d.if_clause.as_ref())
        && let Some(rows) = &target.rows
    {
        planned.named_row = rows.first().cloned();
    }
    if !d.targets.is_empty() && !no_clustering {
        // Static columns belong to the partition: the partition key is enough, and a
        // clustering restriction is refused (unless a condition needs the row, which then
        // must be named).
        let names_clustering = target.rows.is_some() || target.ranges.is_some();
        if statics_only_targets
            && names_clustering
            && conditions_static_only(t, d.if_clause.as_ref())
        {
            return Err(ExecError::invalid(
                "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns",
            ));
        }
        if statics_only_targets
            && !names_clustering
            && conditions_on_regular(t, d.if_clause.as_ref())
        {
            return Err(ExecError::invalid(
                "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns",
            ));
        }
        let static_ok = statics_only_targets && !names_clustering;
        if target.rows.is_none() && !static_ok {
            // Cassandra refuses a conditional one when it prepares it, any other when it makes
            // the deletion a range tombstone (`DeleteStatement.addUpdateForKey`).
            return Err(ExecError::invalid(if d.if_clause.is_some() {
                "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns"
            } else {
                "Range deletions are not supported for specific columns"
            }));
        }
    }
    for key in target.keys {
        let mut update = Partition::new();
        let mut deferred = Vec::new();
        if !d.targets.is_empty() {
            let mut row = Row::default();
            let mut static_row = Row::default();
            for target_col in &d.targets {
                let c = t.def.column(&target_col.column.0).ok_or_else(|| {
                    ExecError::invalid(format!("Undefined column name {}", target_col.column.0))
                })?;
                if matches!(
                    c.kind,
                    ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
                ) {
                    return Err(ExecError::invalid(format!(
                        "Invalid identifier {} for deletion (should not be a PRIMARY KEY part)",
                        c.name
                    )));
                }
                let r = if c.kind == ColumnKind::Static {
                    &mut static_row
                } else {
                    &mut row
                };
                match (&target_col.selector, &c.ty) {
                    (None, ty) if ty.is_multi_cell() => {
                        put_column_deletion(r, c.id, deletion);
                    }
                    (None, _) => {
                        put_cell(r, CellKey::simple(c.id), wt.tombstone());
                    }
                    (
                        Some(ElementSelector::Element(term)),
                        CqlType::Map {
                            key, frozen: false, ..
                        },
                    ) => {
                        let k = map_key(run, term, key, &c.name)?;
                        put_cell(r, CellKey::element(c.id, k), wt.tombstone());
                    }
                    (
                        Some(ElementSelector::Element(term)),
                        CqlType::Set {
                            element,
                            frozen: false,
                        },
                    ) => {
                        let k = match bind::value(run, term, element, &c.name)? {
                            Bound::Value(k) => k,
                            Bound::Null => {
                                return Err(ExecError::invalid("Invalid null set element"));
                            }
                            Bound::Unset => {
                                return Err(ExecError::invalid(format!(
                                    "Invalid unset value for column {}",
                                    c.name
                                )));
                            }
                        };
                        put_cell(r, CellKey::element(c.id, k), wt.tombstone());
                    }
                    (Some(ElementSelector::Element(term)), CqlType::List { frozen: false, .. }) => {
                        // An unset index deletes nothing (Cassandra's Lists.DiscarderByIndex).
                        let Some(index) = list_index(run, term, &c.name)? else {
                            continue;
                        };
                        deferred.push(Deferred::ListDelete {
                            column: c.clone(),
                            index,
                            earlier: column_part(r, c.id),
                        });
                    }
                    (
                        Some(ElementSelector::Field(f)),
                        CqlType::Udt {
                            fields,
                            frozen: false,
                            ..
                        },
                    ) => {
                        let Some(index) = fields.iter().position(|(n, _)| *n == f.0) else {
                            return Err(ExecError::invalid(format!(
                                "UDT column {} does not have a field named {}",
                                c.name, f.0
                            )));
                        };
                        put_cell(r, CellKey::element(c.id, field_path(index)), wt.tombstone());
                    }
                    // Cassandra's words (Operation.FieldDeletion, ElementDeletion).
                    (Some(ElementSelector::Field(_)), CqlType::Udt { .. }) => {
                        return Err(ExecError::invalid(format!(
                            "Frozen UDT column {} does not support field deletions",
                            c.name
                        )));
                    }
                    (Some(ElementSelector::Field(_)), _) => {
                        return Err(ExecError::invalid(format!(
                            "Invalid field deletion operation for non-UDT column {}",
                            c.name
                        )));
                    }
                    (_, CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }) => {
                        return Err(ExecError::invalid(format!(
                            "Invalid deletion operation for frozen collection column {}",
                            c.name
                        )));
                    }
                    _ => {
                        return Err(ExecError::invalid(format!(
                            "Invalid deletion operation for non collection column {}",
                            c.name
                        )));
                    }
                }
            }
            row.shadow(None);
            static_row.shadow(None);
            update.static_row = static_row;
            let rows = target.rows.clone().unwrap_or_else(|| vec![Bytes::new()]);
            for clustering in rows {
                if !row.is_empty() {
                    update.add_row(clustering.clone(), row.clone());
                }
                if !deferred.is_empty() {
                    planned.deferred.push(DeferredWrite {
                        table: t.def.id,
                        key: key.clone(),
                        clustering,
                        ops: deferred.clone(),
                        wt,
                    });
                }
            }
        } else if no_clustering {
            update.deletion = Some(deletion);
        } else if let Some(rows) = &target.rows {
            for clustering in rows {
                update.add_row(
                    clustering.clone(),
                    Row {
                        deletion: Some(deletion),
                        ..Row::default()
                    },
                );
            }
        } else if let Some(ranges) = &target.ranges {
            for (start, end) in ranges {
                update
                    .range_tombstones
                    .add(start.clone(), end.clone(), deletion);
            }
        } else {
            update.deletion = Some(deletion);
        }
        planned.mutations.push(Mutation::new(t.def.id, key, update));
    }
    Ok(planned)
}

/// What a statement writes: mutations, and operations that need the stored row first.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    pub mutations: Vec<Mutation>,
    pub deferred: Vec<DeferredWrite>,
    /// The row a statement names by its whole key but writes nothing to (it changes static
    /// columns only): what a condition on a regular column checks.
    pub named_row: Option<Bytes>,
}

/// Operations on one row that run on the row as stored.
#[derive(Clone, Debug)]
pub(crate) struct DeferredWrite {
    pub table: uuid::Uuid,
    pub key: DecoratedKey,
    pub clustering: Bytes,
    pub ops: Vec<Deferred>,
    pub wt: WriteTime,
}

fn mutations_of(
    exec: &Executor,
    run: &Run<'_>,
    statement: &Statement,
    batch_ts: Option<Timestamp>,
) -> Result<Planned, ExecError> {
    match statement {
        Statement::Insert(i) => insert_mutations(exec, run, i, batch_ts).map(|mutations| Planned {
            mutations,
            ..Planned::default()
        }),
        Statement::Update(u) => update_mutations(exec, run, u, batch_ts),
        Statement::Delete(d) => delete_mutations(exec, run, d, batch_ts),
        _ => Err(ExecError::invalid(
            "Only INSERT, UPDATE and DELETE can be batched",
        )),
    }
}

/// What PREPARE checks of an INSERT, UPDATE, DELETE or BATCH, as Cassandra validates a
/// modification when it prepares it: its conditions and its mutations, built with `run`'s
/// sample values and dropped. An INSERT JSON is left to its run (its one value is the row).
pub(crate) fn check(
    exec: &Executor,
    run: &Run<'_>,
    statement: &Statement,
) -> Result<(), ExecError> {
    let json = |s: &Statement| matches!(s, Statement::Insert(i) if matches!(i.values, InsertValues::Json { .. }));
    match statement {
        Statement::Batch(b) => {
            for s in &b.statements {
                let s = as_statement(s);
                if !json(&s) {
                    mutations_of(exec, run, &s, None)?;
                }
            }
            Ok(())
        }
        s if json(s) => Ok(()),
        s => {
            condition(exec, run, s)?;
            mutations_of(exec, run, s, None).map(drop)
        }
    }
}

/// A statement of a text batch as the statement it is on its own.
fn as_statement(s: &BatchStatement) -> Statement {
    match s {
        BatchStatement::Insert(i) => Statement::Insert(Box::new(i.clone())),
        BatchStatement::Update(u) => Statement::Update(Box::new(u.clone())),
        BatchStatement::Delete(d) => Statement::Delete(Box::new(d.clone())),
    }
}

/// The condition of a conditional statement, if it is one.
fn condition(
    exec: &Executor,
    run: &Run<'_>,
    statement: &Statement,
) -> Result<Option<(std::sync::Arc<TableSchema>, lwt::Check)>, ExecError> {
    let schema = exec.coordinator().schema();
    let (table, check, timestamp) = match statement {
        Statement::Insert(i) if i.if_not_exists => {
            (&i.table, lwt::Check::NotExists, i.using.timestamp.is_some())
        }
        Statement::Update(u) => match &u.if_clause {
            Some(c) => {
                let t = run.table(&schema, &u.table)?;
                (
                    &u.table,
                    lwt::bind_check(t, run, c)?,
                    u.using.timestamp.is_some(),
                )
            }
            None => return Ok(None),
        },
        Statement::Delete(d) => match &d.if_clause {
            Some(c) => {
                let t = run.table(&schema, &d.table)?;
                (&d.table, lwt::bind_check(t, run, c)?, d.timestamp.is_some())
            }
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    if timestamp {
        return Err(ExecError::invalid(
            "Cannot provide custom timestamp for conditional updates",
        ));
    }
    let t = run.table(&schema, table)?.clone();
    let (where_clause, kind): (&[Relation], &str) = match statement {
        Statement::Update(u) => (&u.where_clause, "updates"),
        Statement::Delete(d) => (&d.where_clause, "deletions"),
        _ => (&[], ""),
    };
    refuse_conditional_in(&t, where_clause, kind)?;
    Ok(Some((t, check)))
}

/// A conditional write names one row: Cassandra refuses `IN` on its key.
fn refuse_conditional_in(
    t: &TableSchema,
    where_clause: &[Relation],
    kind: &str,
) -> Result<(), ExecError> {
    for relation in where_clause {
        let on = match relation {
            Relation::In { column, .. } => match t.def.column(&column.0).map(|c| c.kind) {
                Some(ColumnKind::PartitionKey { .. }) => "the partition key",
                Some(ColumnKind::Clustering { .. }) => "the clustering key columns",
                _ => continue,
            },
            Relation::MultiColumnIn { .. } => "the clustering key columns",
            _ => continue,
        };
        return Err(ExecError::invalid(format!(
            "IN on {on} is not supported with conditional {kind}"
        )));
    }
    Ok(())
}

/// Run one INSERT, UPDATE or DELETE (`shape`: a prepared INSERT's, for the current schema).
pub(crate) async fn run_single(
    exec: &Executor,
    statement: &Statement,
    run: &mut Run<'_>,
    shape: Option<&InsertShape>,
) -> Result<ResultBody, ExecError> {
    if let Some((t, check)) = condition(exec, run, statement)? {
        // A conditional write takes the coordinator's timestamp, as Cassandra's ballot does.
        let ts = exec.coordinator().timestamp();
        let planned = mutations_of(exec, run, statement, Some(ts))?;
        return lwt::run(exec, &t, run, planned, check).await;
    }
    let planned = match (statement, shape) {
        (Statement::Insert(i), Some(shape)) => Planned {
            mutations: shaped_insert_mutations(exec, run, i, shape, None)?,
            ..Planned::default()
        },
        _ => mutations_of(exec, run, statement, None)?,
    };
    let write_type = if planned.deferred.iter().any(|d| {
        d.ops
            .iter()
            .any(|o| matches!(o, Deferred::CounterAdd { .. }))
    }) {
        WriteType::Counter
    } else {
        WriteType::Simple
    };
    write_planned(exec, planned, run.params.consistency, write_type).await?;
    Ok(ResultBody::Void)
}

/// SERIAL and LOCAL_SERIAL are for conditional writes only, as in Cassandra.
fn refuse_serial_write(consistency: frame::Consistency) -> Result<(), ExecError> {
    if matches!(
        consistency,
        frame::Consistency::Serial | frame::Consistency::LocalSerial
    ) {
        return Err(ExecError::invalid(
            "You must use conditional updates for serializable writes",
        ));
    }
    Ok(())
}

/// Counter writes at ANY or a serial level, refused as Cassandra's
/// `ConsistencyLevel.validateCounterForWrite` refuses them.
fn refuse_counter_consistency(
    exec: &Executor,
    planned: &Planned,
    consistency: frame::Consistency,
) -> Result<(), ExecError> {
    match consistency {
        frame::Consistency::Any => {
            let schema = exec.coordinator().schema();
            let name = planned
                .mutations
                .first()
                .and_then(|m| schema.table_by_id(m.table))
                .map(|t| t.def.name.clone())
                .unwrap_or_default();
            Err(ExecError::invalid(format!(
                "Consistency level ANY is not yet supported for counter table {name}"
            )))
        }
        frame::Consistency::Serial | frame::Consistency::LocalSerial => Err(ExecError::invalid(
            "Counter operations are inherently non-serializable",
        )),
        _ => Ok(()),
    }
}

/// Write what a statement (or an unlogged batch) planned: the plain mutations at once, and
/// each row with deferred operations as a read-modify-write of its partition.
async fn write_planned(
    exec: &Executor,
    planned: Planned,
    consistency: frame::Consistency,
    write_type: WriteType,
) -> Result<(), ExecError> {
    if write_type == WriteType::Counter {
        refuse_counter_consistency(exec, &planned, consistency)?;
    }
    refuse_serial_write(consistency)?;
    let cl = coordinator_consistency(consistency);
    let Planned {
        mut mutations,
        deferred,
        ..
    } = planned;
    let mut rmw = Vec::new();
    for d in deferred {
        // The row's own plain changes go with its deferred ones, in one write (a statement's
        // other rows, which share its partition's mutation, with none).
        let own = mutations
            .iter()
            .position(|m| m.table == d.table && m.key == d.key)
            .map(|i| mutations.remove(i))
            .unwrap_or_else(|| Mutation::new(d.table, d.key.clone(), Partition::new()));
        rmw.push((d, Some(own)));
    }
    if !mutations.is_empty() {
        exec.coordinator().write(mutations, cl, write_type).await?;
    }
    for (d, own) in rmw {
        let table = d.table;
        let now = exec.coordinator().now_seconds();
        let ranges = if d.clustering.is_empty() {
            vec![khata_types::clustering::full_range()]
        } else {
            vec![(
                start_bound(&d.clustering, true),
                end_bound(&d.clustering, true),
            )]
        };
        let failure = std::sync::Arc::new(parking_lot::Mutex::new(None::<String>));
        let failed = failure.clone();
        exec.coordinator()
            .read_modify_write(
                table,
                d.key.clone(),
                ranges,
                now,
                cl,
                write_type,
                move |read| match apply_deferred(&d, own?, &read.partition, now) {
                    Ok(mutation) => Some(vec![mutation]),
                    Err(e) => {
                        *failed.lock() = Some(e);
                        None
                    }
                },
            )
            .await?;
        if let Some(e) = failure.lock().take() {
            return Err(ExecError::invalid(e));
        }
    }
    Ok(())
}

/// A row's deferred operations applied on what was read of its partition, into the row's own
/// mutation.
pub(crate) fn apply_deferred(
    d: &DeferredWrite,
    mut mutation: Mutation,
    read: &Partition,
    now: u32,
) -> Result<Mutation, String> {
    let empty = Row::default();
    let current_row = read.rows.get(&d.clustering).unwrap_or(&empty);
    let mut row = mutation
        .update
        .rows
        .get(&d.clustering)
        .cloned()
        .unwrap_or_default();
    let mut static_row = mutation.update.static_row.clone();
    // What the deferred operations write, kept apart from the statement's other writes: an
    // operation sees the statement's writes before it only (its `earlier` and these).
    let mut done = Row::default();
    let mut done_static = Row::default();
    for op in &d.ops {
        let (current, out) = if op.column().kind == ColumnKind::Static {
            (&read.static_row, &mut done_static)
        } else {
            (current_row, &mut done)
        };
        op.apply(current, out, &d.wt, now)?;
    }
    row.merge(done);
    static_row.merge(done_static);
    mutation.update.static_row = static_row;
    if !row.is_empty() {
        mutation.update.rows.remove(&d.clustering);
        mutation.update.add_row(d.clustering.clone(), row);
    }
    Ok(mutation)
}

/// A logged batch's list operations by index or value, resolved as Cassandra resolves them:
/// each row read before the batch is written (not atomic with concurrent changes to the same
/// list), so that the whole batch is still one commit-log record.
async fn resolve_by_reads(
    exec: &Executor,
    planned: Planned,
    cl: khata_coordinator::Consistency,
) -> Result<Planned, ExecError> {
    let Planned {
        mut mutations,
        deferred,
        ..
    } = planned;
    for d in deferred {
        let Some(i) = mutations
            .iter()
            .position(|m| m.table == d.table && m.key == d.key)
        else {
            continue;
        };
        let own = mutations.remove(i);
        let ranges = if d.clustering.is_empty() {
            vec![khata_types::clustering::full_range()]
        } else {
            vec![(
                start_bound(&d.clustering, true),
                end_bound(&d.clustering, true),
            )]
        };
        let now = exec.coordinator().now_seconds();
        let read = exec
            .coordinator()
            .read(
                khata_coordinator::ReadCommand {
                    table: own.table,
                    key: d.key.clone(),
                    ranges,
                    reversed: false,
                    row_limit: None,
                    one_row: false,
                    now,
                },
                cl,
            )
            .await?;
        let mutation = apply_deferred(&d, own, &read.partition, now).map_err(ExecError::invalid)?;
        mutations.insert(i, mutation);
    }
    Ok(Planned {
        mutations,
        ..Planned::default()
    })
}

/// The data size of an update as Cassandra's `PartitionUpdate.dataSize()` counts it (for the
/// batch size thresholds): clustering bytes, timestamps, TTLs, cell values and paths.
fn data_size(update: &Partition) -> usize {
    let row_size = |clustering: usize, row: &Row| {
        let cells: usize = row
            .cells
            .iter()
            .map(|(k, c)| {
                let expiring = matches!(c.kind, khata_types::cell::CellKind::Expiring { .. });
                c.value_len()
                    + 8
                    + if expiring { 8 } else { 0 }
                    + k.path.as_ref().map_or(0, |p| p.len())
            })
            .sum();
        clustering
            + row.liveness.map_or(0, |_| 8)
            + row.deletion.map_or(0, |_| 12)
            + row.column_deletions.len() * 12
            + cells
    };
    update.deletion.map_or(0, |_| 12)
        + update
            .range_tombstones
            .iter()
            .map(|rt| rt.start.len() + rt.end.len() + 12)
            .sum::<usize>()
        + row_size(0, &update.static_row)
        + update
            .rows
            .iter()
            .map(|(ck, row)| row_size(ck.len(), row))
            .sum::<usize>()
}

/// Partitions at or below which an unlogged batch draws no warning
/// (`unlogged_batch_across_partitions_warn_threshold`).
const UNLOGGED_BATCH_ACROSS_PARTITIONS_WARN_THRESHOLD: usize = 10;

/// Check a batch's kind against its statements and its size against the thresholds, then
/// write it: a logged batch in one commit-log record (all or nothing).
async fn write_batch(
    exec: &Executor,
    planned: Planned,
    kind: BatchKind,
    consistency: frame::Consistency,
    warnings: &mut Vec<String>,
) -> Result<(), ExecError> {
    refuse_serial_write(consistency)?;
    let is_counter = |d: &DeferredWrite| {
        d.ops
            .iter()
            .any(|o| matches!(o, Deferred::CounterAdd { .. }))
    };
    let counters = planned.deferred.iter().any(is_counter);
    let schema = exec.coordinator().schema();
    let table_name = |id| {
        schema.table_by_id(id).map_or_else(
            || id.to_string(),
            |t| format!("{}.{}", t.def.keyspace, t.def.name),
        )
    };
    let of_counter_table = |id| {
        schema
            .table_by_id(id)
            .is_some_and(|t| counter_table(&t.def))
    };
    let non_counters = planned.mutations.iter().any(|m| !of_counter_table(m.table));
    match kind {
        BatchKind::Logged if counters => {
            return Err(ExecError::invalid(
                "Cannot include a counter statement in a logged batch",
            ));
        }
        BatchKind::Counter if non_counters => {
            return Err(ExecError::invalid(
                "Cannot include non-counter statement in a counter batch",
            ));
        }
        BatchKind::Unlogged if counters && non_counters => {
            return Err(ExecError::invalid(
                "Counter and non-counter mutations cannot exist in the same batch",
            ));
        }
        _ => {}
    }
    let planned = if kind == BatchKind::Logged && !planned.deferred.is_empty() {
        resolve_by_reads(exec, planned, coordinator_consistency(consistency)).await?
    } else {
        planned
    };
    let partitions: std::collections::BTreeSet<_> = planned
        .mutations
        .iter()
        .map(|m| (m.table, m.key.key.clone()))
        .collect();
    // As Cassandra, only batches spanning several partitions are checked (CASSANDRA-10876).
    if partitions.len() > 1 {
        let size: usize = planned.mutations.iter().map(|m| data_size(&m.update)).sum();
        let config = exec.config();
        let tables: std::collections::BTreeSet<String> = planned
            .mutations
            .iter()
            .map(|m| table_name(m.table))
            .collect();
        let tables = format!("[{}]", tables.into_iter().collect::<Vec<_>>().join(", "));
        // Cassandra's client warning carries plain byte counts; its failure says only this.
        if size > config.batch_size_fail_threshold_bytes {
            return Err(ExecError::invalid("Batch too large"));
        }
        let warn = config.batch_size_warn_threshold_bytes;
        if size > warn {
            warnings.push(format!(
                "Batch for {tables} is of size {size}, exceeding specified threshold of {warn} by {}.",
                size - warn
            ));
        }
        if kind == BatchKind::Unlogged {
            let mut per_table: std::collections::BTreeMap<uuid::Uuid, usize> = Default::default();
            for (table, _) in &partitions {
                *per_table.entry(*table).or_default() += 1;
            }
            let wide: Vec<String> = per_table
                .iter()
                .filter(|(_, n)| **n > UNLOGGED_BATCH_ACROSS_PARTITIONS_WARN_THRESHOLD)
                .map(|(t, _)| table_name(*t))
                .collect();
            if !wide.is_empty() {
                warnings.push(format!(
                    "Unlogged batch covering {} partitions detected against table{} [{}]. You should use a logged batch for atomicity, or asynchronous writes for performance.",
                    partitions.len(),
                    if wide.len() > 1 { "s" } else { "" },
                    wide.join(", ")
                ));
            }
        }
    }
    let write_type = match kind {
        BatchKind::Logged => WriteType::Batch,
        BatchKind::Unlogged => WriteType::UnloggedBatch,
        BatchKind::Counter => WriteType::Counter,
    };
    write_planned(exec, planned, consistency, write_type).await
}

/// `BEGIN BATCH ... APPLY BATCH` sent as one statement.
pub(crate) async fn run_text_batch(
    exec: &Executor,
    batch: &AstBatch,
    run: &mut Run<'_>,
) -> Result<ResultBody, ExecError> {
    // Cassandra's checks of a batch's own USING (BatchStatement.validate).
    if batch.using.ttl.is_some() {
        return Err(ExecError::invalid(
            "Global TTL on the BATCH statement is not supported.",
        ));
    }
    if batch.using.timestamp.is_some() {
        if batch.kind == BatchKind::Counter {
            return Err(ExecError::invalid(
                "Cannot provide custom timestamp for counter BATCH",
            ));
        }
        let own_timestamp = batch.statements.iter().any(|s| match s {
            BatchStatement::Insert(i) => i.using.timestamp.is_some(),
            BatchStatement::Update(u) => u.using.timestamp.is_some(),
            BatchStatement::Delete(d) => d.timestamp.is_some(),
        });
        if own_timestamp {
            return Err(ExecError::invalid(
                "Timestamp must be set either on BATCH or individual statements",
            ));
        }
    }
    let ts = match &batch.using.timestamp {
        Some(v) => bind::int_value(run, v, "timestamp", true)?,
        None => None,
    }
    .or(run.params.default_timestamp)
    .unwrap_or_else(|| exec.coordinator().timestamp());
    let statements: Vec<Statement> = batch.statements.iter().map(as_statement).collect();
    let conditions = statements
        .iter()
        .map(|statement| condition(exec, run, statement))
        .collect::<Result<Vec<_>, _>>()?;
    let conditional = conditions.iter().any(Option::is_some);
    let mut items = Vec::new();
    for (statement, check) in statements.iter().zip(conditions) {
        let statement = if conditional {
            in_conditional_batch(exec, run, statement)?
        } else {
            std::borrow::Cow::Borrowed(statement)
        };
        items.push((check, mutations_of(exec, run, &statement, Some(ts))?));
    }
    if conditional {
        if batch.using.timestamp.is_some() {
            return Err(ExecError::invalid(
                "Cannot provide custom timestamp for conditional BATCH",
            ));
        }
        return conditional_batch(exec, run, items).await;
    }
    let mut planned = Planned::default();
    for (_, p) in items {
        planned.append(p);
    }
    let mut warnings = Vec::new();
    write_batch(
        exec,
        planned,
        batch.kind,
        run.params.consistency,
        &mut warnings,
    )
    .await?;
    run.warnings.extend(warnings);
    Ok(ResultBody::Void)
}

/// A statement of a conditional batch as it is written: Paxos commits every cell at the
/// ballot's time, so a statement's own `USING TIMESTAMP` gives way to the batch's (Cassandra
/// rewrites the proposal's timestamps), and it may not name several rows by `IN` on the
/// clustering key (`BatchStatement.makeCasRequest`).
fn in_conditional_batch<'s>(
    exec: &Executor,
    run: &Run<'_>,
    statement: &'s Statement,
) -> Result<std::borrow::Cow<'s, Statement>, ExecError> {
    let (table, relations) = match statement {
        Statement::Update(u) => (&u.table, &u.where_clause),
        Statement::Delete(d) => (&d.table, &d.where_clause),
        _ => return Ok(without_timestamp(statement)),
    };
    let schema = exec.coordinator().schema();
    let t = run.table(&schema, table)?;
    let clustering_in = relations.iter().any(|r| match r {
        Relation::In { column, .. } => t
            .def
            .column(&column.0)
            .is_some_and(|c| matches!(c.kind, ColumnKind::Clustering { .. })),
        Relation::MultiColumnIn { .. } => true,
        _ => false,
    });
    if clustering_in {
        return Err(ExecError::invalid(
            "IN on the clustering key columns is not supported with conditional updates",
        ));
    }
    Ok(without_timestamp(statement))
}

/// `statement` without its own `USING TIMESTAMP` (a copy only when it has one).
fn without_timestamp(statement: &Statement) -> std::borrow::Cow<'_, Statement> {
    let has = match statement {
        Statement::Insert(i) => i.using.timestamp.is_some(),
        Statement::Update(u) => u.using.timestamp.is_some(),
        Statement::Delete(d) => d.timestamp.is_some(),
        _ => false,
    };
    if !has {
        return std::borrow::Cow::Borrowed(statement);
    }
    let mut owned = statement.clone();
    match &mut owned {
        Statement::Insert(i) => i.using.timestamp = None,
        Statement::Update(u) => u.using.timestamp = None,
        Statement::Delete(d) => d.timestamp = None,
        _ => {}
    }
    std::borrow::Cow::Owned(owned)
}

/// A statement of a batch: its condition (if any, with its table) and its planned writes.
type BatchItem = (Option<(std::sync::Arc<TableSchema>, lwt::Check)>, Planned);

/// A batch with conditions: one compare-and-set over one partition of one table, with every
/// statement's changes applied only if every condition holds (Cassandra's rules and messages).
async fn conditional_batch(
    exec: &Executor,
    run: &Run<'_>,
    items: Vec<BatchItem>,
) -> Result<ResultBody, ExecError> {
    let mut table: Option<std::sync::Arc<TableSchema>> = None;
    let schema = exec.coordinator().schema();
    let mut merged: Option<Mutation> = None;
    let mut checks = Vec::new();
    let mut deferred = Vec::new();
    for (condition, planned) in items {
        lwt::conditional_deferred(&planned.deferred)?;
        for m in &planned.mutations {
            let t = match &condition {
                Some((t, _)) => t.clone(),
                None => schema
                    .table_by_id(m.table)
                    .cloned()
                    .ok_or_else(|| ExecError::invalid("table dropped during the batch"))?,
            };
            match &table {
                Some(first) if first.def.id != t.def.id => {
                    return Err(ExecError::invalid(
                        "Batch with conditions cannot span multiple tables",
                    ));
                }
                Some(_) => {}
                None => table = Some(t),
            }
        }
        if let Some((t, check)) = &condition {
            let [mutation] = planned.mutations.as_slice() else {
                return Err(ExecError::invalid(
                    "Batch with conditions cannot span multiple partitions (you cannot use IN on the partition key)",
                ));
            };
            let clustering = lwt::checked_clustering(t, mutation, &planned, check)?;
            // One row's conditions must agree (Cassandra's CQL3CasRequest): IF EXISTS goes
            // with IF conditions, IF NOT EXISTS with neither.
            for (other, at) in &checks {
                if *at != clustering {
                    continue;
                }
                match (check, other) {
                    (lwt::Check::Exists, lwt::Check::NotExists)
                    | (lwt::Check::NotExists, lwt::Check::Exists) => {
                        return Err(ExecError::invalid(
                            "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row",
                        ));
                    }
                    (lwt::Check::NotExists, lwt::Check::Conditions(_))
                    | (lwt::Check::Conditions(_), lwt::Check::NotExists) => {
                        return Err(ExecError::invalid(
                            "Cannot mix IF conditions and IF NOT EXISTS for the same row",
                        ));
                    }
                    _ => {}
                }
            }
            checks.push((check.clone(), clustering));
        }
        deferred.extend(planned.deferred);
        for m in planned.mutations {
            match &mut merged {
                Some(all) if all.key != m.key => {
                    return Err(ExecError::invalid(
                        "Batch with conditions cannot span multiple partitions",
                    ));
                }
                Some(all) => all.update.merge(m.update),
                None => merged = Some(m),
            }
        }
    }
    let (Some(table), Some(mutation)) = (table, merged) else {
        return Err(ExecError::invalid(
            "Unrestricted partition key in a conditional BATCH",
        ));
    };
    lwt::run_checks(exec, &table, run, mutation, deferred, checks, true).await
}

/// The BATCH message: statements by text or by prepared id, each with its values.
pub(crate) async fn run_batch(
    exec: &Executor,
    session: &Session,
    batch: &frame::Batch,
) -> Result<(ResultBody, Vec<String>), ExecError> {
    let ts = batch
        .default_timestamp
        .unwrap_or_else(|| exec.coordinator().timestamp());
    let mut params = frame::QueryParameters::new(batch.consistency);
    params.default_timestamp = Some(ts);
    params.serial_consistency = batch.serial_consistency;
    params.now_in_seconds = batch.now_in_seconds;
    let keyspace = batch.keyspace.clone().or_else(|| session.keyspace());
    let mut statements = Vec::new();
    for s in &batch.statements {
        let (parsed, values, ks, specs, binding) = match s {
            frame::BatchStatement::Query { query, values } => {
                let parsed = crate::language::parse_statement(query)
                    .map_err(|e| ExecError::Body(super::error::parse_error(&e)))?;
                let parsed = std::sync::Arc::new(parsed);
                (
                    parsed,
                    values,
                    keyspace.clone(),
                    None,
                    super::Binding::Query,
                )
            }
            frame::BatchStatement::Prepared { id, values } => {
                let p = exec.prepared_statement(id)?;
                let ks = p.keyspace.clone().or_else(|| keyspace.clone());
                let parsed = std::sync::Arc::new(p.parsed.clone());
                (parsed, values, ks, Some(p), super::Binding::Execute)
            }
        };
        let names = || match specs {
            Some(prepared) => Ok(prepared.bind_specs.iter().map(|s| s.name.clone()).collect()),
            None => super::bind::describe(&exec.coordinator().schema(), ks.as_deref(), &parsed)
                .map(|d| d.bind_specs.into_iter().map(|s| s.name).collect()),
        };
        let values: Vec<Value> = super::bind_values(&parsed, values, binding, names)?;
        let run = Run {
            session,
            coordinator: exec.coordinator().clone(),
            now_micros: ts,
            keyspace: ks,
            values,
            params: &params,
            warnings: Vec::new(),
        };
        let check = condition(exec, &run, &parsed.statement)?;
        statements.push((parsed, run, check));
    }
    let conditional = statements.iter().any(|(_, _, check)| check.is_some());
    let mut items = Vec::new();
    for (parsed, run, check) in &statements {
        let statement = if conditional {
            in_conditional_batch(exec, run, &parsed.statement)?
        } else {
            std::borrow::Cow::Borrowed(&parsed.statement)
        };
        items.push((
            check.clone(),
            mutations_of(exec, run, &statement, Some(ts))?,
        ));
    }
    if conditional && let Some((_, run, _)) = statements.first() {
        let result = conditional_batch(exec, run, items).await?;
        return Ok((result, Vec::new()));
    }
    let mut planned = Planned::default();
    for (_, p) in items {
        planned.append(p);
    }
    let kind = match batch.batch_type {
        BatchType::Logged => BatchKind::Logged,
        BatchType::Unlogged => BatchKind::Unlogged,
        BatchType::Counter => BatchKind::Counter,
    };
    let mut warnings = Vec::new();
    write_batch(exec, planned, kind, batch.consistency, &mut warnings).await?;
    Ok((ResultBody::Void, warnings))
}

impl Planned {
    fn append(&mut self, other: Planned) {
        self.mutations.extend(other.mutations);
        self.deferred.extend(other.deferred);
    }
}

/// Cassandra's refusal of an assignment the column's type does not take, with the assignment
/// as Cassandra writes it back (`Invalid operation (a = a + 1) for non counter column a`).
fn invalid_operation(c: &ColumnDef, op: &AssignmentOp) -> ExecError {
    let n = &c.name;
    let collection = matches!(
        c.ty,
        CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }
    );
    let message = match op {
        AssignmentOp::Add(v) | AssignmentOp::Subtract(v) => {
            let sign = if matches!(op, AssignmentOp::Add(_)) {
                '+'
            } else {
                '-'
            };
            // Cassandra's `Operation.Addition` names a tuple column as such.
            let what = if collection {
                "frozen collection"
            } else if matches!(op, AssignmentOp::Add(_)) && matches!(c.ty, CqlType::Tuple(..)) {
                "tuple"
            } else {
                "non counter"
            };
            format!("Invalid operation ({n} = {n} {sign} {v}) for {what} column {n}")
        }
        AssignmentOp::Prepend(v) => {
            let what = if matches!(c.ty, CqlType::List { .. }) {
                "frozen list"
            } else {
                "non list"
            };
            format!("Invalid operation ({n} = {v} + {n}) for {what} column {n}")
        }
        AssignmentOp::SetElement { key, value } => {
            let what = match &c.ty {
                CqlType::Set { .. } if c.ty.is_multi_cell() => "set",
                _ if collection => "frozen collection",
                _ => "non collection",
            };
            format!("Invalid operation ({n}[{key}] = {value}) for {what} column {n}")
        }
        _ => format!(
            "Invalid operation for column {n} of type {}",
            khata_types::type_text::type_text(&c.ty)
        ),
    };
    ExecError::invalid(message)
}
