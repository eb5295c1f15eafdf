//! The Streams API (`DynamoDBStreams_20120810.*`): ListStreams, DescribeStream,
//! GetShardIterator and GetRecords, with DynamoDB Streams' limits (ListStreams and
//! DescribeStream pages of 1-100, GetRecords of 1-1000 records and at most 1 MB).
//!
//! A shard iterator is `<stream ARN>|1|<shard id>|<21-digit sequence number>|<issued at, µs>`:
//! GetRecords returns the shard's records from that number on, below the stream's in-flight
//! watermark ([`super::state`]). It expires 15 minutes after it was issued
//! (`ExpiredIteratorException`); every GetRecords answers a fresh one, except at the end of
//! a closed shard, where `NextShardIterator` is left out. A position older than the 24-hour
//! retention is `TrimmedDataAccessException`.

use serde_json::{Value, json};

use super::state::{ShardEntry, format_sequence, parse_sequence, trim_point};
use super::{Stream, parse_arn};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::ops::input::{self, Object, Violations};
use crate::ops::{Operations, RequestInfo};
use std::sync::Arc;

/// How long a shard iterator may be used: 15 minutes.
pub const ITERATOR_LIFETIME_MICROS: i64 = 15 * 60 * 1_000_000;
/// The most records one GetRecords returns.
pub const MAX_RECORDS: i64 = 1000;
/// The most bytes of records one GetRecords returns.
pub const MAX_RECORDS_BYTES: usize = 1024 * 1024;
/// ListStreams' and DescribeStream's largest page.
pub const MAX_PAGE: i64 = 100;

const ITERATOR_TYPES: &[&str] = &[
    "TRIM_HORIZON",
    "LATEST",
    "AT_SEQUENCE_NUMBER",
    "AFTER_SEQUENCE_NUMBER",
];

fn stream_not_found(arn: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ResourceNotFound,
        format!("Requested resource not found: Stream: {arn} not found"),
    )
}

/// A stream ARN that is not one (`arn:aws:dynamodb:<region>:<account>:table/<t>/stream/<l>`):
/// DynamoDB refuses it as a bad parameter, not as a stream it does not have.
fn invalid_arn(arn: &str) -> DynamoError {
    DynamoError::validation(format!("Invalid StreamArn: {arn}"))
}

fn shard_not_found(arn: &str, shard: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ResourceNotFound,
        format!("Requested resource not found: Shard: {shard} in Stream: {arn} not found"),
    )
}

fn trimmed() -> DynamoError {
    DynamoError::new(
        ErrorKind::TrimmedDataAccess,
        "The operation attempted to read past the oldest stream record in a shard.",
    )
}

/// A length constraint, as DynamoDB words it.
fn length(v: &mut Violations, value: Option<&str>, path: &str, min: usize, max: usize) {
    if let Some(s) = value {
        let n = s.chars().count();
        if n < min {
            v.push(
                &format!("'{s}'"),
                path,
                &format!("must have length greater than or equal to {min}"),
            );
        }
        if n > max {
            v.push(
                &format!("'{s}'"),
                path,
                &format!("must have length less than or equal to {max}"),
            );
        }
    }
}

fn limit(v: &mut Violations, value: Option<i64>, max: i64) {
    if let Some(l) = value {
        if l < 1 {
            v.push(
                &format!("'{l}'"),
                "limit",
                "must have value greater than or equal to 1",
            );
        }
        if l > max {
            v.push(
                &format!("'{l}'"),
                "limit",
                &format!("must have value less than or equal to {max}"),
            );
        }
    }
}

/// The stream an ARN names, with its table (`None` when the table was deleted and the
/// stream is kept), or `ResourceNotFoundException`.
async fn find_stream(
    ops: &Operations,
    arn: &str,
) -> Result<(Option<crate::tables::Table>, Arc<Stream>)> {
    let (table_name, label) = parse_arn(arn).ok_or_else(|| invalid_arn(arn))?;
    let (table, stream) = match crate::tables::find(&ops.coordinator.schema(), table_name) {
        Ok(Some(t)) => {
            let stream = ops.streams.stream(&ops.coordinator, &t, label).await?;
            (Some(t), stream)
        }
        Ok(None) => {
            let stream = ops
                .streams
                .deleted(&ops.coordinator, table_name, label)
                .await?;
            (None, stream)
        }
        Err(e) => return Err(DynamoError::internal(e)),
    };
    Ok((table, stream.ok_or_else(|| stream_not_found(arn))?))
}

pub async fn list_streams(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let table_name = input::string(body, "TableName")?;
    let max = input::integer(body, "Limit")?;
    let start = input::string(body, "ExclusiveStartStreamArn")?;
    let mut v = Violations::default();
    if table_name.is_some() {
        v.name(table_name, "tableName");
    }
    limit(&mut v, max, MAX_PAGE);
    length(&mut v, start, "exclusiveStartStreamArn", 37, 1024);
    v.finish()?;
    let max = max.unwrap_or(MAX_PAGE) as usize;
    let coordinator = &ops.coordinator;
    // (table, label) of every stream listed: the tables' and those kept after a DeleteTable.
    let mut found: Vec<(String, String)> = Vec::new();
    let live = match table_name {
        Some(n) => match ops.table(n) {
            Ok(t) => vec![t.meta.table_name],
            Err(e) => {
                let labels = ops.streams.deleted_labels(coordinator, n).await?;
                found.extend(labels.ok_or(e)?.into_iter().map(|l| (n.to_string(), l)));
                Vec::new()
            }
        },
        None => {
            found = ops.streams.all_deleted(coordinator).await?;
            crate::tables::names(&coordinator.schema())
        }
    };
    for name in live {
        let Ok(Some(table)) = crate::tables::find(&coordinator.schema(), &name) else {
            continue;
        };
        for label in ops.streams.labels(coordinator, &table).await? {
            found.push((name.clone(), label));
        }
    }
    found.sort();
    found.dedup();
    let region = request.region();
    let streams: Vec<Value> = found
        .into_iter()
        .map(|(name, label)| {
            json!({
                "StreamArn": super::stream_arn(&region, &name, &label),
                "TableName": name,
                "StreamLabel": label,
            })
        })
        .collect();
    // Streams are in (table, label) order; a page starts after the given one's place in it,
    // which holds even if that stream has gone since.
    let start = match start {
        Some(s) => Some(parse_arn(s).ok_or_else(|| invalid_arn(s))?),
        None => None,
    };
    let after: Vec<Value> = match start {
        Some((t, l)) => streams
            .into_iter()
            .filter(|x| {
                let key = (
                    x["TableName"].as_str().unwrap_or_default(),
                    x["StreamLabel"].as_str().unwrap_or_default(),
                );
                key > (t, l)
            })
            .collect(),
        None => streams,
    };
    let more = after.len() > max;
    let page: Vec<Value> = after.into_iter().take(max).collect();
    let mut out = json!({ "Streams": page });
    if more && let Some(last) = page.last() {
        out["LastEvaluatedStreamArn"] = last["StreamArn"].clone();
    }
    Ok(out)
}

fn shard_json(s: &ShardEntry) -> Value {
    let mut range = json!({
        "StartingSequenceNumber": format_sequence(s.starting_sequence_number),
    });
    if let Some(end) = s.ending_sequence_number {
        range["EndingSequenceNumber"] = json!(format_sequence(end));
    }
    let mut out = json!({ "ShardId": s.shard_id, "SequenceNumberRange": range });
    if let Some(p) = &s.parent_shard_id {
        out["ParentShardId"] = json!(p);
    }
    out
}

pub async fn describe_stream(ops: &Operations, body: &Object) -> Result<Value> {
    let arn = input::string(body, "StreamArn")?;
    let max = input::integer(body, "Limit")?;
    let start = input::string(body, "ExclusiveStartShardId")?;
    let mut v = Violations::default();
    if arn.is_none() {
        v.null("streamArn");
    }
    length(&mut v, arn, "streamArn", 37, 1024);
    limit(&mut v, max, MAX_PAGE);
    length(&mut v, start, "exclusiveStartShardId", 28, 65);
    v.finish()?;
    let arn = arn.unwrap_or_default();
    let (table, stream) = find_stream(ops, arn).await?;
    let now = ops.coordinator.timestamp();
    let state = stream.state();
    let shards: Vec<&ShardEntry> = state
        .visible_shards(now)
        .into_iter()
        .filter(|s| start.is_none_or(|st| s.shard_id.as_str() > st))
        .collect();
    let max = max.unwrap_or(MAX_PAGE) as usize;
    let page: Vec<Value> = shards.iter().take(max).map(|s| shard_json(s)).collect();
    let enabled = table
        .as_ref()
        .is_some_and(|t| super::enabled_label(t) == Some(stream.label.as_str()));
    let mut description = json!({
        "StreamArn": arn,
        "StreamLabel": stream.label,
        "StreamStatus": if enabled { "ENABLED" } else { "DISABLED" },
        "StreamViewType": stream.view_type,
        "CreationRequestDateTime": crate::ops::describe::epoch_seconds(stream.created_micros()),
        "TableName": stream.table_name,
        "KeySchema": stream.key_schema,
        "Shards": page,
    });
    if shards.len() > max
        && let Some(last) = shards.get(max - 1)
    {
        description["LastEvaluatedShardId"] = json!(last.shard_id);
    }
    Ok(json!({ "StreamDescription": description }))
}

fn iterator(arn: &str, shard: &str, from: u64, issued_micros: i64) -> String {
    format!("{arn}|1|{shard}|{}|{issued_micros}", format_sequence(from))
}

/// A decoded shard iterator.
struct Position<'a> {
    arn: &'a str,
    shard: &'a str,
    from: u64,
    issued_micros: i64,
}

fn parse_iterator(text: &str) -> Option<Position<'_>> {
    let mut parts = text.rsplitn(5, '|');
    let issued_micros = parts.next()?.parse().ok()?;
    let from = parse_sequence(parts.next()?)?;
    let shard = parts.next()?;
    if parts.next()? != "1" {
        return None;
    }
    let arn = parts.next()?;
    Some(Position {
        arn,
        shard,
        from,
        issued_micros,
    })
}

pub async fn get_shard_iterator(ops: &Operations, body: &Object) -> Result<Value> {
    let arn = input::string(body, "StreamArn")?;
    let shard = input::string(body, "ShardId")?;
    let kind = input::string(body, "ShardIteratorType")?;
    let seq = input::string(body, "SequenceNumber")?;
    let mut v = Violations::default();
    match arn {
        None => v.null("streamArn"),
        a => length(&mut v, a, "streamArn", 37, 1024),
    }
    match shard {
        None => v.null("shardId"),
        s => length(&mut v, s, "shardId", 28, 65),
    }
    match kind {
        None => v.null("shardIteratorType"),
        Some(k) => v.one_of(k, "shardIteratorType", ITERATOR_TYPES),
    }
    length(&mut v, seq, "sequenceNumber", 21, 40);
    v.finish()?;
    let (arn, shard_id, kind) = (
        arn.unwrap_or_default(),
        shard.unwrap_or_default(),
        kind.unwrap_or_default(),
    );
    let exact = match kind {
        "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER" => {
            let Some(text) = seq else {
                return Err(DynamoError::validation(format!(
                    "SequenceNumber is required for ShardIteratorType {kind}"
                )));
            };
            let Some(n) = parse_sequence(text) else {
                return Err(DynamoError::validation(format!(
                    "Invalid SequenceNumber: {text}"
                )));
            };
            Some(n)
        }
        // DynamoDB refuses a sequence number with the iterator types that take none
        // (Alternator's test_get_shard_iterator, run against DynamoDB).
        _ if seq.is_some() => {
            return Err(DynamoError::validation(format!(
                "SequenceNumber may only be given with ShardIteratorType AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER, not {kind}"
            )));
        }
        _ => None,
    };
    let (_, stream) = find_stream(ops, arn).await?;
    let now = ops.coordinator.timestamp();
    let state = stream.state();
    let shard = state
        .visible_shards(now)
        .into_iter()
        .find(|s| s.shard_id == shard_id)
        .cloned()
        .ok_or_else(|| shard_not_found(arn, shard_id))?;
    let end = shard.ending_sequence_number;
    let from = match (kind, exact) {
        ("TRIM_HORIZON", _) => shard.starting_sequence_number.max(trim_point(now)),
        ("LATEST", _) => match end {
            Some(e) => e + 1,
            None => (state.last_seq + 1).max(shard.starting_sequence_number),
        },
        (_, Some(n)) => {
            if n < trim_point(now) {
                return Err(trimmed());
            }
            if n < shard.starting_sequence_number || end.is_some_and(|e| n > e) {
                return Err(DynamoError::validation(format!(
                    "Invalid SequenceNumber {} for shard {shard_id}: the shard holds {} to {}",
                    seq.unwrap_or_default(),
                    format_sequence(shard.starting_sequence_number),
                    end.map_or_else(|| "its end".to_string(), format_sequence),
                )));
            }
            if kind == "AFTER_SEQUENCE_NUMBER" {
                n.saturating_add(1)
            } else {
                n
            }
        }
        _ => shard.starting_sequence_number,
    };
    Ok(json!({ "ShardIterator": iterator(arn, shard_id, from, now) }))
}

pub async fn get_records(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let text = input::string(body, "ShardIterator")?;
    let max = input::integer(body, "Limit")?;
    let mut v = Violations::default();
    match text {
        None => v.null("shardIterator"),
        t => length(&mut v, t, "shardIterator", 1, 2048),
    }
    limit(&mut v, max, MAX_RECORDS);
    v.finish()?;
    let text = text.unwrap_or_default();
    let max = max.unwrap_or(MAX_RECORDS) as usize;
    let Some(at) = parse_iterator(text) else {
        return Err(DynamoError::validation("Invalid ShardIterator"));
    };
    let now = ops.coordinator.timestamp();
    if now - at.issued_micros > ITERATOR_LIFETIME_MICROS {
        return Err(DynamoError::new(
            ErrorKind::ExpiredIterator,
            format!(
                "Iterator expired. The iterator was created at time {} while right now it is {} which is further in the future than the tolerated delay of {} milliseconds.",
                crate::ops::describe::iso8601_millis(at.issued_micros),
                crate::ops::describe::iso8601_millis(now),
                ITERATOR_LIFETIME_MICROS / 1000
            ),
        ));
    }
    let (_, stream) = find_stream(ops, at.arn).await?;
    let state = stream.state();
    let shard = state
        .shards
        .get(at.shard)
        .cloned()
        .ok_or_else(|| shard_not_found(at.arn, at.shard))?;
    let trim = trim_point(now);
    // Records between the iterator's position and the trim point may be gone. Iterators
    // live 15 minutes, so one handed out at the trim horizon is not refused for that.
    if at.from.saturating_add(ITERATOR_LIFETIME_MICROS as u64) < trim {
        return Err(trimmed());
    }
    let from = at.from.max(trim).max(shard.starting_sequence_number);
    let watermark = stream.watermark();
    let end = shard.ending_sequence_number;
    let upper = match end {
        Some(e) => watermark.min(e.saturating_add(1)),
        None => watermark,
    };
    let mut records = Vec::new();
    let mut next = from;
    let mut cut = false;
    if from < upper {
        let values = super::log::read_values(
            &ops.coordinator,
            stream.log_table,
            at.shard,
            (
                super::log::sequence_clustering(from),
                super::log::sequence_clustering(upper),
            ),
            Some(max),
            false,
        )
        .await?;
        cut = values.len() >= max;
        let mut bytes = 0;
        let region = request.region();
        for raw in values {
            if bytes + raw.len() > MAX_RECORDS_BYTES && !records.is_empty() {
                cut = true;
                break;
            }
            bytes += raw.len();
            let Ok(mut record) = serde_json::from_slice::<Value>(&raw) else {
                continue;
            };
            if let Some(seq) = record["dynamodb"]["SequenceNumber"]
                .as_str()
                .and_then(parse_sequence)
            {
                next = next.max(seq.saturating_add(1));
            }
            record["eventVersion"] = json!("1.1");
            record["eventSource"] = json!("aws:dynamodb");
            record["awsRegion"] = json!(region);
            records.push(record);
        }
    }
    let mut out = json!({ "Records": records });
    let exhausted = match end {
        Some(e) => next > e || (upper > e && !cut),
        None => false,
    };
    if !exhausted {
        out["NextShardIterator"] = json!(iterator(at.arn, at.shard, next, now));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterators_round_trip() {
        let arn = "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2024-01-01T00:00:00.000";
        let it = iterator(arn, "shardId-00000001700000000000-0a0b0c0d", 42, 7);
        let p = parse_iterator(&it).unwrap();
        assert_eq!(p.arn, arn);
        assert_eq!(p.shard, "shardId-00000001700000000000-0a0b0c0d");
        assert_eq!(p.from, 42);
        assert_eq!(p.issued_micros, 7);
        assert!(parse_iterator("garbage").is_none());
        assert!(parse_iterator("a|2|s|000000000000000000001|5").is_none());
        assert_eq!(parse_arn(arn), Some(("T", "2024-01-01T00:00:00.000")));
        assert_eq!(parse_arn("arn:aws:dynamodb:x:1:table/T"), None);
    }
}
