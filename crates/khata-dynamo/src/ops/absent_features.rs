//! What DynamoDB answers about features khata does not have, for a table that does not use
//! them: tools (Terraform, the CDK, backup auditors) ask right after CreateTable, and a refusal
//! there fails them. Each answer is true of every khata table, nothing is pretended:
//!
//! - DescribeContinuousBackups: continuous backups and point-in-time recovery `DISABLED` (as
//!   Alternator answers, and DynamoDB for a new table); UpdateContinuousBackups may keep
//!   point-in-time recovery disabled, and refuses to enable it.
//! - ListBackups: no backups. ListGlobalTables: no (2017 version) global tables.
//! - DescribeKinesisStreamingDestination: no destinations.
//! - DescribeContributorInsights: `DISABLED`.
//!
//! The operations that would create or use such things (CreateBackup, RestoreTable*, Kinesis
//! destinations, contributor insights, exports and imports) stay refusals.

use serde_json::{Value, json};

use super::Operations;
use super::input::{self, Object, Violations};
use crate::error::{DynamoError, ErrorKind, Result};

/// The description of a table's continuous backups: none, and no point-in-time recovery.
fn continuous_backups() -> Value {
    json!({
        "ContinuousBackupsDescription": {
            "ContinuousBackupsStatus": "DISABLED",
            "PointInTimeRecoveryDescription": { "PointInTimeRecoveryStatus": "DISABLED" },
        }
    })
}

/// The table must exist: DynamoDB's continuous-backup operations answer
/// `TableNotFoundException` otherwise, not `ResourceNotFoundException`.
fn backed_up_table(ops: &Operations, body: &Object) -> Result<()> {
    let name = input::table_name(body)?;
    match ops.table(name) {
        Err(e) if e.kind == ErrorKind::ResourceNotFound => Err(DynamoError::new(
            ErrorKind::TableNotFound,
            format!("Table not found: {name}"),
        )),
        other => other.map(drop),
    }
}

pub fn describe_continuous_backups(ops: &Operations, body: &Object) -> Result<Value> {
    backed_up_table(ops, body)?;
    Ok(continuous_backups())
}

pub fn update_continuous_backups(ops: &Operations, body: &Object) -> Result<Value> {
    let spec = input::object(body, "PointInTimeRecoverySpecification")?;
    let enabled = spec
        .map(|s| input::boolean(s, "PointInTimeRecoveryEnabled"))
        .transpose()?
        .flatten();
    let mut v = Violations::default();
    v.name(input::string(body, "TableName")?, "tableName");
    match spec {
        None => v.null("pointInTimeRecoverySpecification"),
        Some(_) if enabled.is_none() => {
            v.null("pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled")
        }
        Some(_) => {}
    }
    v.finish()?;
    backed_up_table(ops, body)?;
    if enabled == Some(true) {
        return Err(DynamoError::not_supported("point-in-time recovery"));
    }
    Ok(continuous_backups())
}

pub fn list_backups() -> Value {
    json!({ "BackupSummaries": [] })
}

pub fn list_global_tables() -> Value {
    json!({ "GlobalTables": [] })
}

pub fn describe_kinesis_streaming_destination(ops: &Operations, body: &Object) -> Result<Value> {
    let name = input::table_name(body)?;
    ops.table(name)?;
    Ok(json!({ "TableName": name, "KinesisDataStreamDestinations": [] }))
}

pub fn describe_contributor_insights(ops: &Operations, body: &Object) -> Result<Value> {
    let name = input::table_name(body)?;
    let index = input::string(body, "IndexName")?;
    let table = ops.table(name)?;
    let mut answer = json!({ "TableName": name, "ContributorInsightsStatus": "DISABLED" });
    if let Some(index) = index {
        let meta = &table.meta;
        let known = meta
            .global_secondary_indexes
            .iter()
            .chain(&meta.local_secondary_indexes)
            .any(|i| i.index_name == index);
        if !known {
            return Err(DynamoError::new(
                ErrorKind::ResourceNotFound,
                format!("Requested resource not found: Table: {name} Index: {index} not found"),
            ));
        }
        answer["IndexName"] = json!(index);
    }
    Ok(answer)
}
