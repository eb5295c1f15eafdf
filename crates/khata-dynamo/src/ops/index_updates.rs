//! UpdateTable's `GlobalSecondaryIndexUpdates`: Create, Update (throughput) and Delete of
//! GSIs, with DynamoDB's checks and messages.
//!
//! DynamoDB creates or deletes one GSI per UpdateTable, and one at a time per table
//! (`LimitExceededException` otherwise). A Create makes the index's engine table, then the
//! metadata names it `CREATING`; the caller changes the metadata and then starts the work
//! returned here ([`IndexWork`]): the backfill, or the drop of a `DELETING` index
//! ([`crate::indexes::build`]).

use serde_json::Value;

use super::Operations;
use super::control::{check_defined, check_index_key_order, index, invalid, key_attribute_name};
use super::input::{self, Object, Violations};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::indexes::{self, IndexStatus, MAX_PROJECTED_ATTRIBUTES, Projected};
use crate::tables::{AttributeDefinition, TableMeta};
use khata_coordinator::catalog::SchemaChange;

/// What to start once the metadata change is made.
#[derive(Debug)]
pub enum IndexWork {
    Backfill(String),
    Drop(String),
}

fn limit_exceeded() -> DynamoError {
    DynamoError::new(
        ErrorKind::LimitExceeded,
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
}

/// Attributes projected by INCLUDE over all of a table's indexes.
pub fn projected_attributes(meta: &TableMeta) -> usize {
    meta.global_secondary_indexes
        .iter()
        .chain(&meta.local_secondary_indexes)
        .map(|i| match Projected::of(&i.projection) {
            Projected::Include(a) => a.len(),
            _ => 0,
        })
        .sum()
}

/// The check of [`MAX_PROJECTED_ATTRIBUTES`] (CreateTable and UpdateTable).
pub fn check_projected(meta: &TableMeta) -> Result<()> {
    if projected_attributes(meta) > MAX_PROJECTED_ATTRIBUTES {
        return Err(invalid(format!(
            "Number of projected attributes in all indexes exceeds limit of {MAX_PROJECTED_ATTRIBUTES}"
        )));
    }
    Ok(())
}

/// Apply `updates` to `meta` (the table's metadata being changed). A Create's engine table is
/// made here; the returned work starts after the metadata is written.
pub async fn plan(
    ops: &Operations,
    meta: &mut TableMeta,
    updates: &[Value],
    body: &Object,
) -> Result<Vec<IndexWork>> {
    let mut v = Violations::default();
    let mut actions = Vec::new();
    for (i, u) in updates.iter().enumerate() {
        let Value::Object(u) = u else {
            return Err(DynamoError::serialization(
                "Unexpected value type in payload for GlobalSecondaryIndexUpdates",
            ));
        };
        let create = input::object(u, "Create")?;
        let update = input::object(u, "Update")?;
        let delete = input::object(u, "Delete")?;
        let path = format!("globalSecondaryIndexUpdates.{}.member", i + 1);
        let n = [create.is_some(), update.is_some(), delete.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if n == 0 {
            return Err(invalid(
                "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null",
            ));
        }
        if n > 1 {
            return Err(invalid(
                "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object",
            ));
        }
        if let Some(c) = create {
            actions.push(Action::Create(index(
                c,
                &format!("{path}.create"),
                true,
                &mut v,
            )?));
        } else if let Some(u) = update {
            let name = input::string(u, "IndexName")?;
            v.name(name, &format!("{path}.update.indexName"));
            let t = input::object(u, "ProvisionedThroughput")?;
            if t.is_none() {
                v.null(&format!("{path}.update.provisionedThroughput"));
            }
            let read = t
                .map(|t| input::integer(t, "ReadCapacityUnits"))
                .transpose()?;
            let write = t
                .map(|t| input::integer(t, "WriteCapacityUnits"))
                .transpose()?;
            actions.push(Action::Update(
                name.unwrap_or_default().to_string(),
                read.flatten(),
                write.flatten(),
            ));
        } else if let Some(d) = delete {
            let name = input::string(d, "IndexName")?;
            v.name(name, &format!("{path}.delete.indexName"));
            actions.push(Action::Delete(name.unwrap_or_default().to_string()));
        }
    }
    let defs = input::object_list(body, "AttributeDefinitions")?;
    for (i, d) in defs.iter().flatten().enumerate() {
        key_attribute_name(
            input::string(d, "AttributeName")?,
            &format!("attributeDefinitions.{}.member.attributeName", i + 1),
            &mut v,
        );
    }
    v.finish()?;
    let mut names: Vec<&str> = Vec::new();
    for a in &actions {
        let name = a.name();
        if names.contains(&name) {
            return Err(invalid(format!(
                "Only one global secondary index update per index is allowed simultaneously. Index: {name}"
            )));
        }
        names.push(name);
    }
    let online = actions
        .iter()
        .filter(|a| !matches!(a, Action::Update(..)))
        .count();
    let busy = meta
        .global_secondary_indexes
        .iter()
        .any(|i| IndexStatus::of(i) != IndexStatus::Active);
    if online > 1 || (online == 1 && busy) {
        return Err(limit_exceeded());
    }
    let mut work = Vec::new();
    for action in actions {
        match action {
            Action::Update(name, read, write) => {
                let Some(g) = meta
                    .global_secondary_indexes
                    .iter_mut()
                    .find(|g| g.index_name == name)
                else {
                    return Err(not_found(&meta.table_name, &name));
                };
                if meta.billing_mode != "PROVISIONED" {
                    return Err(invalid(format!(
                        "ProvisionedThroughput cannot be specified for index: {name} when BillingMode is PAY_PER_REQUEST"
                    )));
                }
                if let (Some(r), Some(w)) = (read, write) {
                    g.provisioned_throughput = Some(crate::tables::Throughput {
                        read_capacity_units: r.max(1),
                        write_capacity_units: w.max(1),
                    });
                }
            }
            Action::Delete(name) => {
                if meta
                    .local_secondary_indexes
                    .iter()
                    .any(|l| l.index_name == name)
                {
                    return Err(DynamoError::validation(format!(
                        "Cannot delete an index that is not a GlobalSecondaryIndex: {name}"
                    )));
                }
                let Some(g) = meta
                    .global_secondary_indexes
                    .iter_mut()
                    .find(|g| g.index_name == name)
                else {
                    return Err(not_found(&meta.table_name, &name));
                };
                g.index_status = Some(IndexStatus::Deleting.name().into());
                work.push(IndexWork::Drop(name));
            }
            Action::Create(mut new) => {
                if meta
                    .global_secondary_indexes
                    .iter()
                    .chain(&meta.local_secondary_indexes)
                    .any(|i| i.index_name == new.index_name)
                {
                    return Err(DynamoError::validation(
                        "Attempting to create an index which already exists",
                    ));
                }
                let Some(defs) = &defs else {
                    return Err(invalid(format!(
                        "AttributeDefinitions is not specified for index: {}",
                        new.index_name
                    )));
                };
                // Definitions no key uses (a deleted index's, in metadata written before they
                // were dropped with it) do not hold a type against the new ones.
                meta.keep_used_definitions();
                merge_definitions(meta, defs)?;
                check_index_key_order(&new.key_schema, &format!(" for index {}", new.index_name))?;
                check_defined(&new.key_schema, &meta.attribute_definitions)?;
                if meta.global_secondary_indexes.len() >= super::control::MAX_GSIS {
                    return Err(DynamoError::new(
                        ErrorKind::LimitExceeded,
                        format!(
                            "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of {}",
                            super::control::MAX_GSIS
                        ),
                    ));
                }
                match (meta.billing_mode.as_str(), new.provisioned_throughput) {
                    ("PROVISIONED", None) => {
                        return Err(invalid(format!(
                            "ProvisionedThroughput must be specified for index: {}",
                            new.index_name
                        )));
                    }
                    ("PAY_PER_REQUEST", Some(_)) => {
                        return Err(invalid(format!(
                            "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                            new.index_name
                        )));
                    }
                    _ => {}
                }
                let id = ops.coordinator.random_uuid();
                new.table_id = Some(id.to_string());
                new.index_status = Some(IndexStatus::Creating.name().into());
                meta.global_secondary_indexes.push(new.clone());
                check_projected(meta)?;
                let schema =
                    indexes::table_schema(meta, &new, true, id).map_err(DynamoError::internal)?;
                ops.coordinator
                    .change_schema(SchemaChange::CreateTable(schema))
                    .await?;
                work.push(IndexWork::Backfill(new.index_name.clone()));
            }
        }
    }
    // The request's definitions no index uses are dropped, as DynamoDB drops them.
    meta.keep_used_definitions();
    Ok(work)
}

/// Undo what [`plan`] made if the metadata change failed: the new index tables.
pub async fn abandon(ops: &Operations, meta: &TableMeta, work: &[IndexWork]) {
    for w in work {
        if let IndexWork::Backfill(name) = w
            && let Some(id) = meta
                .global_secondary_indexes
                .iter()
                .find(|g| g.index_name == *name)
                .and_then(|g| g.table())
            && let Some(t) = ops.coordinator.schema().table_by_id(id)
        {
            let _ = ops
                .coordinator
                .change_schema(SchemaChange::DropTable {
                    keyspace: t.def.keyspace.clone(),
                    table: t.def.name.clone(),
                })
                .await;
        }
    }
}

/// Start the work once the metadata says so.
pub fn start(ops: &Operations, table: &str, work: Vec<IndexWork>) {
    for w in work {
        let (c, l) = (ops.coordinator.clone(), ops.schema_lock.clone());
        match w {
            IndexWork::Backfill(i) => {
                crate::indexes::build::spawn_backfill(c, l, table.to_string(), i)
            }
            IndexWork::Drop(i) => crate::indexes::build::spawn_drop(
                c,
                l,
                table.to_string(),
                i,
                crate::indexes::build::DROP_DELAY,
            ),
        }
    }
}

fn not_found(table: &str, index: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ResourceNotFound,
        format!("Requested resource not found: Table: {table} Index: {index} not found"),
    )
}

/// Add the request's attribute definitions to the table's; a definition may not change the
/// type of one the table has.
fn merge_definitions(meta: &mut TableMeta, defs: &[&Object]) -> Result<()> {
    for d in defs {
        let name = input::string(d, "AttributeName")?.unwrap_or_default();
        let t = input::string(d, "AttributeType")?.unwrap_or_default();
        if !["S", "N", "B"].contains(&t) {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value '{t}' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]"
            )));
        }
        match meta.attribute_type(name) {
            Some(existing) if existing != t => {
                return Err(invalid(format!(
                    "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. Existing schema: AttributeDefinition(attributeName={name}, attributeType={existing}), New schema: AttributeDefinition(attributeName={name}, attributeType={t})"
                )));
            }
            Some(_) => {}
            None => meta.attribute_definitions.push(AttributeDefinition {
                attribute_name: name.to_string(),
                attribute_type: t.to_string(),
            }),
        }
    }
    Ok(())
}

enum Action {
    Create(crate::tables::IndexMeta),
    Update(String, Option<i64>, Option<i64>),
    Delete(String),
}

impl Action {
    fn name(&self) -> &str {
        match self {
            Action::Create(i) => &i.index_name,
            Action::Update(n, ..) | Action::Delete(n) => n,
        }
    }
}
