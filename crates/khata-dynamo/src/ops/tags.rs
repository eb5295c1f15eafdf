//! TagResource, UntagResource and ListTagsOfResource on tables, named by ARN.
//!
//! Tags live in the table's metadata ([`crate::tables::TableMeta::tags`]), changed with one
//! `AlterTable` schema change under the node's control-plane lock, so concurrent tag changes
//! of one table do not lose each other. ListTagsOfResource answers every tag in one page.

use serde_json::{Value, json};

use super::Operations;
use super::control::{MAX_TAGS, parse_tags};
use super::input::{self, Object, Violations};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::tables;

/// The table named by a table ARN (any region and account: one node answers for all).
fn table_of_arn(arn: &str) -> Result<&str> {
    if !arn.starts_with("arn:") {
        return Err(DynamoError::validation(format!(
            "Invalid ResourceArn provided as input: ARNs must start with 'arn:': {arn}"
        )));
    }
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let name = match parts.as_slice() {
        ["arn", _, "dynamodb", _, _, resource] => resource.strip_prefix("table/"),
        _ => None,
    };
    match name {
        Some(n) if !n.is_empty() && !n.contains('/') => Ok(n),
        _ => Err(DynamoError::validation(format!(
            "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
        ))),
    }
}

fn arn_member(body: &Object) -> Result<&str> {
    let arn = input::string(body, "ResourceArn")?;
    let mut v = Violations::default();
    match arn {
        None => v.null("resourceArn"),
        Some(a) if a.is_empty() || a.len() > 1283 => v.push(
            &format!("'{a}'"),
            "resourceArn",
            "must have length between 1 and 1283",
        ),
        _ => {}
    }
    v.finish()?;
    Ok(arn.unwrap_or_default())
}

fn not_found(arn: &str) -> DynamoError {
    // "ResourcArn" is DynamoDB's spelling.
    DynamoError::new(
        ErrorKind::ResourceNotFound,
        format!("Requested resource not found: ResourcArn: {arn} not found"),
    )
}

fn table(ops: &Operations, arn: &str) -> Result<tables::Table> {
    let name = table_of_arn(arn)?;
    ops.table(name).map_err(|e| match e.kind {
        ErrorKind::ResourceNotFound => not_found(arn),
        _ => e,
    })
}

/// TagResource; DynamoDB's answer has no body.
pub async fn tag_resource(ops: &Operations, body: &Object) -> Result<()> {
    let arn = arn_member(body)?;
    let Some(list) = input::object_list(body, "Tags")? else {
        let mut v = Violations::default();
        v.null("tags");
        v.finish()?;
        return Ok(());
    };
    if list.is_empty() {
        let mut v = Violations::default();
        v.push(
            "'[]'",
            "tags",
            "must have length greater than or equal to 1",
        );
        v.finish()?;
    }
    let new = parse_tags(Some(list), "tags")?;
    let _guard = ops.schema_lock.lock().await;
    let t = table(ops, arn)?;
    let mut meta = t.meta.clone();
    for (k, v) in new {
        meta.tags.retain(|(ek, _)| *ek != k);
        meta.tags.push((k, v));
    }
    if meta.tags.len() > MAX_TAGS {
        return Err(DynamoError::new(
            ErrorKind::Validation,
            format!(
                "One or more parameter values were invalid: The number of tags exceeds the limit of {MAX_TAGS}"
            ),
        ));
    }
    ops.alter_meta(&t, &meta).await?;
    Ok(())
}

/// UntagResource; DynamoDB's answer has no body.
pub async fn untag_resource(ops: &Operations, body: &Object) -> Result<()> {
    let arn = arn_member(body)?;
    let keys = input::string_list(body, "TagKeys")?;
    let Some(keys) = keys else {
        let mut v = Violations::default();
        v.null("tagKeys");
        v.finish()?;
        return Ok(());
    };
    let _guard = ops.schema_lock.lock().await;
    let t = table(ops, arn)?;
    let mut meta = t.meta.clone();
    meta.tags.retain(|(k, _)| !keys.contains(&k.as_str()));
    if meta.tags != t.meta.tags {
        ops.alter_meta(&t, &meta).await?;
    }
    Ok(())
}

pub fn list_tags(ops: &Operations, body: &Object) -> Result<Value> {
    let arn = arn_member(body)?;
    let _ = input::string(body, "NextToken")?;
    let t = table(ops, arn)?;
    let tags: Vec<Value> = t
        .meta
        .tags
        .iter()
        .map(|(k, v)| json!({ "Key": k, "Value": v }))
        .collect();
    Ok(json!({ "Tags": tags }))
}
