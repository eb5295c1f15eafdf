//! `SELECT ... ORDER BY v ANN OF <vector> LIMIT k`: Cassandra 5.0's vector search, answered
//! exactly.
//!
//! The column needs a Storage-Attached Index (`sai.rs`), whose `similarity_function` scores
//! rows as Cassandra's `similarity_*` functions do (cosine `(1 + cos) / 2`, euclidean
//! `1 / (1 + d²)`, dot product `(1 + a·b) / 2`). khata keeps no vector graph: the query reads
//! the rows its WHERE clause allows (a scan of the token range, or the partitions named by
//! key) through the coordinator a chunk at a time, and keeps the best `k` in a bounded heap, so
//! memory holds `k` result rows and one chunk, never the table. An exact search is a valid ANN
//! answer (recall 1).
//!
//! Rows rank by score, best first; equal scores by token, partition key and clustering, so the
//! order is total and a page can resume after the last row it returned: the paging state
//! holds that row's rank and the rows returned so far, and the next page searches again among
//! the rows ranked after it. Rows without a vector (null) are left out, as are rows whose
//! vector cannot be scored (NaN, or all zeros under cosine).
//!
//! Refusals are Cassandra 5.0's (`StatementRestrictions`, `StorageAttachedIndex`), checked in
//! its order: the ordering, the column and its index, the other restrictions (only indexed
//! columns, a whole partition key, or clustering restrictions that select slices), then at
//! execution the LIMIT (at most 1000) and the query vector (its dimension, not null).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::ops::Bound as RangeBound;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use khata_coordinator::catalog::{ScanPosition, TableSchema};
use khata_coordinator::{ReadCommand, ScanCommand};
use khata_types::clustering::start_bound;
use khata_types::partition::Partition;
use khata_types::row::Row;
use khata_types::schema::{ColumnDef, ColumnKind, CqlType};
use khata_types::token::{DecoratedKey, Token};

use super::super::bind::{self, Bound};
use super::super::error::{ExecError, coordinator_consistency};
use super::super::native_scalars::{Similarity, similarity_score};
use super::super::restrictions::{Filter, Restrictions};
use super::super::sai;
use super::super::{Executor, Run};
use super::{Output, RowAt, SelectShape, cell_value, json_row, split_key};
use crate::frame::{ResultBody, Rows, RowsMetadata};
use crate::language::ast::{OrderDirection, Select, Term};

/// Cassandra's `SAI_VECTOR_SEARCH_MAX_TOP_K` default: the largest LIMIT of an ANN query.
const MAX_TOP_K: u64 = 1000;

/// Rows read from storage per round.
const CHUNK_ROWS: usize = 5000;

const ANN_REQUIRES_INDEX: &str = "ANN ordering by vector requires the column to be indexed";
const ANN_ONLY_ON_VECTOR: &str = "ANN ordering is only supported on float vector indexes";
const ANN_REQUIRES_INDEXED_FILTERING: &str =
    "ANN ordering by vector requires all restricted column(s) to be indexed";

/// Whether `s` orders by `ANN OF`.
pub(super) fn is_ann(s: &Select) -> bool {
    s.order_by.iter().any(|o| o.ann_of.is_some())
}

/// What an ANN query reads, checked against the schema and the WHERE clause.
struct AnnPlan<'s> {
    column: ColumnDef,
    dimension: usize,
    similarity: Similarity,
    query: &'s Term,
    source: AnnSource,
    ranges: Vec<(Bytes, Bytes)>,
    filters: Vec<Filter>,
}

/// Where an ANN query's rows come from.
enum AnnSource {
    /// The partitions a WHERE clause names by key, in key order.
    Partitions(Vec<DecoratedKey>),
    /// A token range (the whole ring unless `token(...)` restricts it).
    Scan(RangeBound<Token>, RangeBound<Token>),
}

/// Cassandra's checks of an ANN query that need no values, in its order (PREPARE runs them
/// with sample values bound).
fn plan<'s>(t: &TableSchema, s: &'s Select, run: &Run<'_>) -> Result<AnnPlan<'s>, ExecError> {
    let anns: Vec<_> = s.order_by.iter().filter(|o| o.ann_of.is_some()).collect();
    if anns.len() > 1 {
        return Err(ExecError::invalid(
            "Cannot specify more than one ANN ordering",
        ));
    }
    let Some(ordering) = anns.first() else {
        return Err(ExecError::invalid("ANN OF was expected in ORDER BY"));
    };
    let Some(query) = ordering.ann_of.as_ref() else {
        return Err(ExecError::invalid("ANN OF was expected in ORDER BY"));
    };
    if s.order_by.len() > 1 {
        return Err(ExecError::invalid(
            "ANN ordering does not support any other ordering",
        ));
    }
    if ordering.direction == OrderDirection::Desc {
        return Err(ExecError::invalid(
            "Descending ANN ordering is not supported",
        ));
    }
    let column = t.def.column(&ordering.column.0).ok_or_else(|| {
        ExecError::invalid(format!(
            "Undefined column name {} in table {}.{}",
            ordering.column.0, t.def.keyspace, t.def.name
        ))
    })?;
    let dimension = match &column.ty {
        CqlType::Vector { element, dimension } if **element == CqlType::Float => *dimension,
        _ => return Err(ExecError::invalid(ANN_ONLY_ON_VECTOR)),
    };
    let Some((_, similarity)) = sai::vector_index(t, &column.name) else {
        return Err(ExecError::invalid(ANN_REQUIRES_INDEX));
    };
    if s.distinct || !s.group_by.is_empty() || s.per_partition_limit.is_some() {
        return Err(ExecError::invalid(
            "ANN ordering cannot be used with DISTINCT, GROUP BY or PER PARTITION LIMIT",
        ));
    }
    // Every restriction is applied to every row read (the scan is exact); Cassandra allows
    // the ones an index serves, the partition key, and clustering slices within a partition.
    let r = Restrictions::for_select(t, run, &s.where_clause, true)?;
    if r.partial_partition_key()
        || (r.has_clustering() && (!r.has_partition_keys() || r.clustering_needs_filtering()))
    {
        return Err(ExecError::invalid(ANN_REQUIRES_INDEXED_FILTERING));
    }
    let indexed = |c: &ColumnDef| {
        t.indexes
            .iter()
            .any(|i| i.has_storage(&t.def) && i.column().0 == c.name)
    };
    if r.filters.iter().any(|f| {
        matches!(f.column.kind, ColumnKind::Regular | ColumnKind::Static) && !indexed(&f.column)
    }) {
        return Err(ExecError::invalid(ANN_REQUIRES_INDEXED_FILTERING));
    }
    let ranges = r.clustering_ranges(t)?;
    let source = if r.has_partition_keys() {
        AnnSource::Partitions(super::in_key_order(t, r.partition_keys()?))
    } else {
        AnnSource::Scan(r.token_low, r.token_high)
    };
    Ok(AnnPlan {
        column: column.clone(),
        dimension: dimension as usize,
        similarity,
        query,
        source,
        ranges,
        filters: r.filters,
    })
}

/// PREPARE's checks of an ANN query.
pub(super) fn check(shape: &SelectShape, s: &Select, run: &Run<'_>) -> Result<(), ExecError> {
    check_selection(shape)?;
    plan(&shape.table, s, run).map(|_| ())
}

fn check_selection(shape: &SelectShape) -> Result<(), ExecError> {
    if shape.outs.iter().any(|(_, o)| o.aggregates()) {
        return Err(ExecError::invalid(
            "ANN ordering cannot be used with aggregate functions",
        ));
    }
    Ok(())
}

/// A row's place in the ranking: higher scores first, then token, partition key and
/// clustering ascending.
#[derive(Clone, Debug, PartialEq)]
struct Rank {
    score: f32,
    token: i64,
    key: Bytes,
    clustering: Bytes,
}

impl Rank {
    /// `Less` when `self` ranks before (is better than) `other`.
    fn cmp_rank(&self, other: &Rank) -> CmpOrdering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.token.cmp(&other.token))
            .then_with(|| self.key.cmp(&other.key))
            .then_with(|| self.clustering.cmp(&other.clustering))
    }
}

/// A row kept in the heap, the worst on top.
struct Candidate {
    rank: Rank,
    values: Vec<Option<Bytes>>,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.rank.cmp_rank(&other.rank) == CmpOrdering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.rank.cmp_rank(&other.rank)
    }
}

/// The paging state of an ANN query: rows returned so far, and the rank of the last.
fn encode_paging(returned: u64, last: &Rank) -> Bytes {
    let mut b = BytesMut::new();
    b.put_u8(0xA7);
    b.put_u64(returned);
    b.put_u32(last.score.to_bits());
    b.put_i64(last.token);
    for part in [&last.key, &last.clustering] {
        b.put_u32(part.len() as u32);
        b.put_slice(part);
    }
    b.freeze()
}

fn decode_paging(bytes: &[u8]) -> Result<(u64, Rank), ExecError> {
    let bad = || ExecError::invalid("Invalid value for the paging state");
    let mut r = bytes;
    if r.remaining() < 1 + 8 + 4 + 8 || r.get_u8() != 0xA7 {
        return Err(bad());
    }
    let returned = r.get_u64();
    let score = f32::from_bits(r.get_u32());
    let token = r.get_i64();
    let mut part = || -> Result<Bytes, ExecError> {
        if r.remaining() < 4 {
            return Err(bad());
        }
        let len = r.get_u32() as usize;
        if r.remaining() < len {
            return Err(bad());
        }
        let v = Bytes::copy_from_slice(&r[..len]);
        r.advance(len);
        Ok(v)
    };
    let key = part()?;
    let clustering = part()?;
    if !r.is_empty() {
        return Err(bad());
    }
    Ok((
        returned,
        Rank {
            score,
            token,
            key,
            clustering,
        },
    ))
}

/// The floats of a `vector<float, n>` value (`n` big-endian floats), if it has `dimension`.
fn floats(bytes: &[u8], dimension: usize) -> Option<Vec<f32>> {
    if bytes.len() != dimension * 4 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Run an ANN query (see the module doc).
pub(super) async fn run(
    exec: &Executor,
    s: &Select,
    run: &mut Run<'_>,
    shape: &SelectShape,
) -> Result<ResultBody, ExecError> {
    let t = &shape.table;
    check_selection(shape)?;
    let plan = plan(t, s, run)?;
    let limit = match &s.limit {
        Some(v) => match bind::int_value(run, v, "limit", false)? {
            Some(l) if l <= 0 => return Err(ExecError::invalid("LIMIT must be strictly positive")),
            Some(l) => Some(l as u64),
            None => None,
        },
        None => None,
    };
    let k = match limit {
        Some(l) if l <= MAX_TOP_K => l,
        other => {
            return Err(ExecError::invalid(format!(
                "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than {MAX_TOP_K}. LIMIT was {}",
                other.map_or("NO LIMIT".to_string(), |l| l.to_string())
            )));
        }
    };
    let column = &plan.column;
    let query = match bind::value(run, plan.query, &column.ty, &column.name)? {
        Bound::Value(v) => v,
        Bound::Null | Bound::Unset => {
            return Err(ExecError::invalid(format!(
                "Unsupported null value for column {}",
                column.name
            )));
        }
    };
    let query = floats(&query, plan.dimension).ok_or_else(|| {
        ExecError::invalid(format!(
            "Invalid vector for column {}: expected {} dimensions",
            column.name, plan.dimension
        ))
    })?;
    khata_coordinator::catalog::check_indexable_vector(
        &query,
        plan.similarity == Similarity::Cosine,
    )
    .map_err(ExecError::invalid)?;
    let (returned, after) = match &run.params.paging_state {
        Some(b) => {
            let (returned, rank) = decode_paging(b)?;
            (returned, Some(rank))
        }
        None => (0, None),
    };
    let page_size = run.params.page_size.filter(|p| *p > 0).map(|p| p as u64);
    let wanted = k.saturating_sub(returned);
    let take = page_size.map_or(wanted, |p| p.min(wanted)) as usize;

    // Bound selector terms (`similarity_cosine(v, [...])`) once.
    let bound_outs: Vec<(String, Output)>;
    let outs: &[(String, Output)] = if shape.outs.iter().any(|(_, o)| o.has_args()) {
        bound_outs = shape
            .outs
            .iter()
            .map(|(name, o)| Ok((name.clone(), o.bind(run)?)))
            .collect::<Result<_, ExecError>>()?;
        &bound_outs
    } else {
        &shape.outs
    };
    let cl = coordinator_consistency(run.params.consistency);
    let now = match run.params.now_in_seconds {
        Some(n) if n > 0 => n as u32,
        _ => exec.coordinator().now_seconds(),
    };
    let coordinator = std::sync::Arc::clone(&run.coordinator);
    let env = super::super::selector::Env {
        coordinator: &coordinator,
        now_micros: run.now_micros,
        inputs: &[],
    };
    let mut heap: BinaryHeap<Candidate> = BinaryHeap::with_capacity(take + 1);
    let mut failure: Option<ExecError> = None;
    // A scan reads whole partitions: rows outside the clustering ranges are skipped here
    // rather than copied out of each partition first.
    let whole_partitions = plan.ranges.len() == 1 && plan.ranges[0] == full_range();
    let mut consider = |key: &DecoratedKey, partition: &Partition| {
        if take == 0 {
            return;
        }
        let pk_values = split_key(t, key);
        for (ck, row) in partition.live_rows(now) {
            if !whole_partitions && !plan.ranges.iter().any(|(lo, hi)| ck >= lo && ck < hi) {
                continue;
            }
            let ck_values = khata_types::clustering::decode_key(&shape.clustering_types, ck)
                .unwrap_or_default();
            let value_of = |c: &ColumnDef, row: &Row| match c.kind {
                ColumnKind::PartitionKey { position } => pk_values.get(position as usize).cloned(),
                ColumnKind::Clustering { position, .. } => {
                    ck_values.get(position as usize).cloned()
                }
                ColumnKind::Static => cell_value(c, &partition.static_row, now),
                ColumnKind::Regular => cell_value(c, row, now),
            };
            if !plan
                .filters
                .iter()
                .all(|f| f.passes(value_of(&f.column, row).as_ref()))
            {
                continue;
            }
            let Some(vector) = value_of(column, row).and_then(|v| floats(&v, plan.dimension))
            else {
                continue;
            };
            let Some(score) = similarity_score(plan.similarity, &vector, &query) else {
                continue;
            };
            if score.is_nan() {
                continue;
            }
            let rank = Rank {
                score,
                token: key.token.0,
                key: key.key.clone(),
                clustering: ck.clone(),
            };
            if after
                .as_ref()
                .is_some_and(|a| rank.cmp_rank(a) != CmpOrdering::Greater)
            {
                continue;
            }
            if heap.len() >= take
                && heap
                    .peek()
                    .is_some_and(|worst| rank.cmp_rank(&worst.rank) != CmpOrdering::Less)
            {
                continue;
            }
            let at = RowAt {
                key,
                pk_values: &pk_values,
                ck_values: &ck_values,
                row,
                statics: &partition.static_row,
                now,
                env,
            };
            let mut values = Vec::with_capacity(outs.len());
            for (_, o) in outs {
                match at.value(o) {
                    Ok(v) => values.push(v),
                    Err(e) => {
                        failure.get_or_insert(e);
                        values.push(None);
                    }
                }
            }
            heap.push(Candidate { rank, values });
            if heap.len() > take {
                heap.pop();
            }
        }
    };
    match &plan.source {
        AnnSource::Partitions(keys) => {
            for key in keys {
                let mut ranges = plan.ranges.clone();
                loop {
                    let result = exec
                        .coordinator()
                        .read(
                            ReadCommand {
                                table: t.def.id,
                                key: key.clone(),
                                ranges: ranges.clone(),
                                reversed: false,
                                row_limit: Some(CHUNK_ROWS),
                                one_row: false,
                                now,
                            },
                            cl,
                        )
                        .await?;
                    run.warnings.extend(result.warnings.iter().cloned());
                    consider(key, &result.partition);
                    let last = result.partition.rows.keys().next_back().cloned();
                    match last {
                        Some(last) if result.limit_reached => {
                            let start = start_bound(&last, false);
                            ranges.retain(|r| r.1 > start);
                            for r in &mut ranges {
                                r.0 = r.0.clone().max(start.clone());
                            }
                            if ranges.is_empty() {
                                break;
                            }
                        }
                        _ => break,
                    }
                }
            }
        }
        AnnSource::Scan(low, high) => {
            let mut resume: Option<ScanPosition> = None;
            loop {
                let page = exec
                    .coordinator()
                    .scan(
                        ScanCommand {
                            table: t.def.id,
                            start: *low,
                            end: *high,
                            resume: resume.clone(),
                            row_limit: CHUNK_ROWS,
                            now,
                        },
                        cl,
                    )
                    .await?;
                run.warnings.extend(page.warnings.iter().cloned());
                for (key, partition) in &page.partitions {
                    consider(key, partition);
                }
                match page.resume {
                    Some(r) => resume = Some(r),
                    None => break,
                }
            }
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let best = heap.into_sorted_vec();
    let last = best.last().map(|c| c.rank.clone());
    let got = best.len() as u64;
    let mut rows: Vec<Vec<Option<Bytes>>> = best.into_iter().map(|c| c.values).collect();
    if s.json {
        rows = rows.iter().map(|r| vec![json_row(outs, r)]).collect();
    }
    let mut metadata = RowsMetadata::new(shape.specs.clone());
    if let Some(last) = last
        && page_size.is_some_and(|p| got == p)
        && returned + got < k
    {
        metadata.paging_state = Some(encode_paging(returned + got, &last));
    }
    let rows = Rows::from_cells(metadata, &rows)
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
    Ok(ResultBody::Rows(rows))
}

/// The clustering range of a whole partition.
fn full_range() -> (Bytes, Bytes) {
    khata_types::clustering::full_range()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(score: f32, token: i64) -> Rank {
        Rank {
            score,
            token,
            key: Bytes::from_static(b"k"),
            clustering: Bytes::new(),
        }
    }

    #[test]
    fn ranks_by_score_then_position() {
        assert_eq!(rank(0.9, 5).cmp_rank(&rank(0.5, 1)), CmpOrdering::Less);
        assert_eq!(rank(0.5, 1).cmp_rank(&rank(0.5, 2)), CmpOrdering::Less);
        assert_eq!(rank(0.5, 2).cmp_rank(&rank(0.5, 2)), CmpOrdering::Equal);
    }

    #[test]
    fn paging_state_round_trips() {
        let r = Rank {
            score: 0.25,
            token: -7,
            key: Bytes::from_static(b"key"),
            clustering: Bytes::from_static(b"\x00\x01"),
        };
        let (returned, back) = decode_paging(&encode_paging(3, &r)).unwrap();
        assert_eq!((returned, back), (3, r));
        assert!(decode_paging(b"\xA7").is_err());
        assert!(decode_paging(&[]).is_err());
    }
}
