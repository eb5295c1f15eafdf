//! UpdateTimeToLive and DescribeTimeToLive: the setting, kept in the table's metadata.
//!
//! The expirer ([`crate::expirer`]) reads it every `ttl_scan_period_seconds` and deletes the
//! expired items. DynamoDB refuses to enable TTL when
//! it is enabled and to disable it when it is disabled, with the messages below.

use serde_json::{Value, json};

use super::Operations;
use super::input::{self, Object, Violations};
use crate::error::{DynamoError, Result};
use crate::tables::TtlMeta;

pub async fn update_ttl(ops: &Operations, body: &Object) -> Result<Value> {
    let name = input::table_name(body)?;
    let spec = input::object(body, "TimeToLiveSpecification")?;
    let mut v = Violations::default();
    let (enabled, attribute) = match spec {
        None => {
            v.null("timeToLiveSpecification");
            (None, None)
        }
        Some(s) => {
            let enabled = input::boolean(s, "Enabled")?;
            let attribute = input::string(s, "AttributeName")?;
            if enabled.is_none() {
                v.null("timeToLiveSpecification.enabled");
            }
            match attribute {
                None => v.null("timeToLiveSpecification.attributeName"),
                Some(a) if a.is_empty() || a.len() > 255 => v.push(
                    &format!("'{a}'"),
                    "timeToLiveSpecification.attributeName",
                    "must have length between 1 and 255",
                ),
                _ => {}
            }
            (enabled, attribute)
        }
    };
    v.finish()?;
    let (enabled, attribute) = (enabled.unwrap_or(false), attribute.unwrap_or_default());
    let _guard = ops.schema_lock.lock().await;
    let table = ops.table(name)?;
    let current = table.meta.ttl.as_ref().filter(|t| t.enabled);
    match (enabled, current) {
        (true, Some(_)) => {
            return Err(DynamoError::validation("TimeToLive is already enabled"));
        }
        (false, None) => {
            return Err(DynamoError::validation("TimeToLive is already disabled"));
        }
        (false, Some(t)) if t.attribute_name != attribute => {
            return Err(DynamoError::validation(format!(
                "TimeToLive is active on a different AttributeName: current AttributeName is {}",
                t.attribute_name
            )));
        }
        _ => {}
    }
    let mut meta = table.meta.clone();
    meta.ttl = Some(TtlMeta {
        enabled,
        attribute_name: attribute.to_string(),
    });
    ops.alter_meta(&table, &meta).await?;
    Ok(json!({
        "TimeToLiveSpecification": { "Enabled": enabled, "AttributeName": attribute }
    }))
}

pub fn describe_ttl(ops: &Operations, body: &Object) -> Result<Value> {
    let name = input::table_name(body)?;
    let table = ops.table(name)?;
    let description = match &table.meta.ttl {
        Some(t) if t.enabled => json!({
            "TimeToLiveStatus": "ENABLED",
            "AttributeName": t.attribute_name,
        }),
        _ => json!({ "TimeToLiveStatus": "DISABLED" }),
    };
    Ok(json!({ "TimeToLiveDescription": description }))
}
