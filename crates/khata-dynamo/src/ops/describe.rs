//! DescribeTable, ListTables, DescribeLimits, DescribeEndpoints, and the `TableDescription`
//! that CreateTable, UpdateTable and DeleteTable answer too.
//!
//! Tables are created and altered synchronously, so a table is `ACTIVE` as soon as it exists
//! (as in DynamoDB Local and Alternator) and so are the indexes it was created with; a GSI
//! added by UpdateTable is `CREATING` (Backfilling) until built. Its backfill starts at once,
//! and DynamoDB's UpdateTable is complete once the backfill has begun (the table `ACTIVE`
//! again, other UpdateTable calls allowed), so only UpdateTable's own answer says `UPDATING`;
//! the table is `UPDATING` while a GSI is `DELETING`.
//! DescribeTable's `ItemCount` and `TableSizeBytes` are estimates (DynamoDB refreshes its own
//! every six hours): rows and bytes in the table's memtables and SSTables, where an
//! overwritten or deleted item counts until compaction merges it away
//! ([`khata_coordinator::Coordinator::table_estimate`]); an index's `ItemCount` is its
//! entries (stale ones counted until a read or compaction removes them), its `IndexSizeBytes`
//! that many items of the table's average size.

use serde_json::{Value, json};

use super::input::{self, Object, Violations};
use super::{Operations, RequestInfo, table_arn};
use crate::error::Result;
use crate::tables::{IndexMeta, TableMeta};

/// ListTables' page size bounds.
pub const LIST_TABLES_MAX_LIMIT: i64 = 100;

/// Seconds since the epoch with a fraction, as DynamoDB's JSON dates are.
pub fn epoch_seconds(micros: i64) -> f64 {
    micros as f64 / 1e6
}

/// `YYYY-MM-DDTHH:MM:SS.mmm` (UTC): stream labels.
pub fn iso8601_millis(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let millis = micros.rem_euclid(1_000_000) / 1000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = khata_types::calendar::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn index_description(
    index: &IndexMeta,
    arn: &str,
    global: bool,
    billing_provisioned: bool,
) -> Value {
    let mut d = json!({
        "IndexName": index.index_name,
        "KeySchema": index.key_schema,
        "Projection": index.projection,
        "IndexSizeBytes": 0,
        "ItemCount": 0,
        "IndexArn": format!("{arn}/index/{}", index.index_name),
    });
    if global {
        let status = crate::indexes::IndexStatus::of(index);
        d["IndexStatus"] = json!(status.name());
        if status == crate::indexes::IndexStatus::Creating {
            d["Backfilling"] = json!(true);
        }
        let t = index.provisioned_throughput.filter(|_| billing_provisioned);
        d["ProvisionedThroughput"] = json!({
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": t.map_or(0, |t| t.read_capacity_units),
            "WriteCapacityUnits": t.map_or(0, |t| t.write_capacity_units),
        });
    }
    d
}

/// A `TableDescription` with the given status, as of `now` (seconds since the epoch, which
/// decides which throughput decreases were today's).
pub fn table_description(
    meta: &TableMeta,
    id: uuid::Uuid,
    region: &str,
    status: &str,
    now: khata_types::LocalTime,
) -> Value {
    let arn = table_arn(region, &meta.table_name);
    let provisioned = meta.billing_mode == "PROVISIONED";
    let mut d = json!({
        "TableName": meta.table_name,
        "TableStatus": status,
        "TableId": id.to_string(),
        "TableArn": arn,
        "KeySchema": meta.key_schema,
        "AttributeDefinitions": meta.attribute_definitions,
        "CreationDateTime": epoch_seconds(meta.creation_micros),
        "ItemCount": 0,
        "TableSizeBytes": 0,
        "ProvisionedThroughput": {
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": meta.provisioned_throughput.read_capacity_units,
            "WriteCapacityUnits": meta.provisioned_throughput.write_capacity_units,
        },
        "DeletionProtectionEnabled": meta.deletion_protection,
    });
    if let Some(changes) = meta.throughput_changes.filter(|_| provisioned) {
        let t = &mut d["ProvisionedThroughput"];
        t["NumberOfDecreasesToday"] =
            json!(changes.decreases_on_day_of(i64::from(now) * 1_000_000));
        if let Some(at) = changes.last_increase_micros {
            t["LastIncreaseDateTime"] = json!(epoch_seconds(at));
        }
        if let Some(at) = changes.last_decrease_micros {
            t["LastDecreaseDateTime"] = json!(epoch_seconds(at));
        }
    }
    if meta.billing_mode_stated || !provisioned {
        let mut billing = json!({ "BillingMode": meta.billing_mode });
        if let Some(since) = meta.pay_per_request_since_micros.filter(|_| !provisioned) {
            billing["LastUpdateToPayPerRequestDateTime"] = json!(epoch_seconds(since));
        }
        d["BillingModeSummary"] = billing;
    }
    if !meta.local_secondary_indexes.is_empty() {
        d["LocalSecondaryIndexes"] = meta
            .local_secondary_indexes
            .iter()
            .map(|i| index_description(i, &arn, false, provisioned))
            .collect();
    }
    if !meta.global_secondary_indexes.is_empty() {
        d["GlobalSecondaryIndexes"] = meta
            .global_secondary_indexes
            .iter()
            .map(|i| index_description(i, &arn, true, provisioned))
            .collect();
    }
    if let Some(stream) = &meta.stream {
        if stream.enabled {
            d["StreamSpecification"] = json!({
                "StreamEnabled": true,
                "StreamViewType": stream.view_type,
            });
        }
        d["LatestStreamLabel"] = json!(stream.label);
        d["LatestStreamArn"] = json!(format!("{arn}/stream/{}", stream.label));
    }
    super::table_options::describe(meta, &mut d);
    d
}

/// `UPDATING` while a GSI is being deleted, else `ACTIVE` (also while a GSI backfills: see the
/// module documentation).
pub fn table_status(meta: &TableMeta) -> &'static str {
    let deleting = meta
        .global_secondary_indexes
        .iter()
        .any(|i| crate::indexes::IndexStatus::of(i) == crate::indexes::IndexStatus::Deleting);
    if deleting { "UPDATING" } else { "ACTIVE" }
}

pub fn describe_table(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let name = input::table_name(body)?;
    let table = ops.table(name)?;
    let status = table_status(&table.meta);
    let mut d = table_description(
        &table.meta,
        table.schema.def.id,
        &request.region(),
        status,
        ops.coordinator.now_seconds(),
    );
    // DescribeTable answers the estimates; the description the control-plane operations
    // answer keeps DynamoDB's zeros there.
    if let Ok(estimate) = ops.coordinator.table_estimate(table.schema.def.id) {
        d["ItemCount"] = json!(estimate.rows);
        d["TableSizeBytes"] = json!(estimate.bytes);
        // An index's items are its entries; its size, those entries at the table's average
        // item size (entries hold keys only: the projection is read from the table).
        let average = estimate.bytes.checked_div(estimate.rows).unwrap_or(0);
        let indexes = table
            .meta
            .global_secondary_indexes
            .iter()
            .map(|i| ("GlobalSecondaryIndexes", i))
            .chain(
                table
                    .meta
                    .local_secondary_indexes
                    .iter()
                    .map(|i| ("LocalSecondaryIndexes", i)),
            );
        for (list, index) in indexes {
            let Some(rows) = index
                .table()
                .and_then(|id| ops.coordinator.table_estimate(id).ok())
                .map(|e| e.rows)
            else {
                continue;
            };
            if let Some(described) = d[list].as_array_mut().and_then(|l| {
                l.iter_mut()
                    .find(|x| x["IndexName"] == json!(index.index_name))
            }) {
                described["ItemCount"] = json!(rows);
                described["IndexSizeBytes"] = json!(rows * average);
            }
        }
    }
    Ok(json!({ "Table": d }))
}

pub fn list_tables(ops: &Operations, body: &Object) -> Result<Value> {
    let start = input::string(body, "ExclusiveStartTableName")?;
    let limit = input::integer(body, "Limit")?;
    let mut v = Violations::default();
    if let Some(start) = start {
        v.name(Some(start), "exclusiveStartTableName");
    }
    if let Some(limit) = limit {
        if limit < 1 {
            v.push(
                &format!("'{limit}'"),
                "limit",
                "must have value greater than or equal to 1",
            );
        }
        if limit > LIST_TABLES_MAX_LIMIT {
            v.push(
                &format!("'{limit}'"),
                "limit",
                "must have value less than or equal to 100",
            );
        }
    }
    v.finish()?;
    let limit = limit.unwrap_or(LIST_TABLES_MAX_LIMIT) as usize;
    let names = crate::tables::names(&ops.coordinator.schema());
    let after: Vec<String> = names
        .into_iter()
        .filter(|n| start.is_none_or(|s| n.as_str() > s))
        .collect();
    let page: Vec<&String> = after.iter().take(limit).collect();
    let mut out = json!({ "TableNames": page });
    if after.len() > limit
        && let Some(last) = page.last()
    {
        out["LastEvaluatedTableName"] = json!(last);
    }
    Ok(out)
}

/// DynamoDB's default account and table quotas (khata enforces none of them).
pub fn describe_limits() -> Value {
    json!({
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000,
    })
}

/// This endpoint itself, cached for a day as DynamoDB says.
pub fn describe_endpoints(request: &RequestInfo) -> Value {
    json!({
        "Endpoints": [{ "Address": request.host(), "CachePeriodInMinutes": 1440 }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc() {
        assert_eq!(iso8601_millis(0), "1970-01-01T00:00:00.000");
        assert_eq!(
            iso8601_millis(1_709_251_199_999_000),
            "2024-02-29T23:59:59.999"
        );
        assert_eq!(epoch_seconds(1_500_000), 1.5);
    }
}
