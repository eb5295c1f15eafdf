//! DynamoDB's operations: the dispatcher from an operation name to its handler.
//!
//! Each handler takes the request's JSON object and answers a JSON object (the item operations
//! one already printed, [`crate::reply`]) or a [`DynamoError`]; the endpoint ([`crate::http`])
//! does the HTTP. Handlers reach data and
//! schema only through the [`Coordinator`].
//!
//! - control plane ([`control`], [`describe`], [`tags`], [`ttl`]): CreateTable, DescribeTable,
//!   ListTables, UpdateTable, DeleteTable, TagResource, UntagResource, ListTagsOfResource,
//!   UpdateTimeToLive, DescribeTimeToLive, DescribeLimits, DescribeEndpoints;
//! - what DynamoDB answers of a table without backups, Kinesis destinations or contributor
//!   insights ([`absent_features`]): DescribeContinuousBackups, UpdateContinuousBackups (to
//!   keep point-in-time recovery disabled), ListBackups, ListGlobalTables,
//!   DescribeKinesisStreamingDestination, DescribeContributorInsights;
//! - items ([`crate::item_ops`]): PutItem, GetItem, UpdateItem, DeleteItem, Query, Scan;
//! - several items ([`crate::batch`], [`crate::transact`]): BatchGetItem, BatchWriteItem,
//!   TransactWriteItems, TransactGetItems;
//! - PartiQL ([`crate::partiql`]): ExecuteStatement, BatchExecuteStatement, ExecuteTransaction;
//! - the Streams API (`DynamoDBStreams_20120810.*`, [`crate::streams::api`]): ListStreams,
//!   DescribeStream, GetShardIterator, GetRecords.

pub mod absent_features;
pub mod control;
pub mod describe;
pub mod index_updates;
pub mod input;
pub mod request;
pub mod table_options;
pub mod tags;
pub mod ttl;

use std::sync::Arc;

use khata_coordinator::Coordinator;
use serde_json::Value;

use crate::error::{DynamoError, ErrorKind, Result};
use crate::reply::Reply;
use input::Object;
use request::Request;

/// The account id in ARNs: a single node has no accounts.
pub const ACCOUNT_ID: &str = "000000000000";

/// The region when a request does not say (it says in its SigV4 credential scope).
pub const DEFAULT_REGION: &str = "us-east-1";

/// What the handlers share: the coordinator and the node's DynamoDB settings.
#[derive(Debug)]
pub struct Operations {
    pub coordinator: Arc<Coordinator>,
    /// Serializes this node's read-modify-writes of table metadata (create, delete, update,
    /// tags, TTL), so two changes to one table do not lose each other.
    pub(crate) schema_lock: crate::indexes::build::SchemaLock,
    /// TransactWriteItems' `ClientRequestToken`s (idempotency for 10 minutes).
    pub(crate) transaction_tokens: crate::transact::Tokens,
    /// The tables' streams on this node ([`crate::streams`]).
    pub streams: crate::streams::Streams,
    /// The largest item collection a write may grow ([`crate::collections`]).
    collection_limit: u64,
    /// The item operations' tables, resolved once per schema snapshot.
    layouts: parking_lot::Mutex<LayoutCache>,
}

/// The most tables [`LayoutCache`] holds; past it, it starts again (a node rarely has more).
const MAX_CACHED_LAYOUTS: usize = 1024;

/// A DynamoDB table's metadata and item layout (indexes included, stream not), by table name,
/// for one schema snapshot. Reading the metadata is a JSON parse and building the layout a
/// dozen allocations: too much for every GetItem. Any schema change publishes a new snapshot,
/// which empties the cache, so an entry is never older than the schema it was made from.
#[derive(Debug, Default)]
struct LayoutCache {
    schema: Option<Arc<khata_coordinator::catalog::Schema>>,
    tables: std::collections::HashMap<String, Arc<Resolved>>,
}

/// A table as the item operations need it.
#[derive(Debug)]
struct Resolved {
    table: crate::tables::Table,
    layout: crate::items::ItemLayout,
}

/// What a handler knows about the request besides its body: two of its headers, kept as they
/// came (a header value is a slice of the connection's buffer: no copy) and read only by the
/// operations that need them.
#[derive(Clone, Debug, Default)]
pub struct RequestInfo {
    /// The `Host` header.
    pub host: Option<http::HeaderValue>,
    /// The `Authorization` header.
    pub authorization: Option<http::HeaderValue>,
}

impl RequestInfo {
    /// From the SigV4 credential scope, else [`DEFAULT_REGION`]: it goes into ARNs.
    pub fn region(&self) -> String {
        self.authorization
            .as_ref()
            .and_then(|a| a.to_str().ok())
            .and_then(|a| crate::auth::parse_authorization(a).ok())
            .map_or_else(|| DEFAULT_REGION.to_string(), |a| a.region)
    }

    /// The `Host` header (DescribeEndpoints answers it), else `localhost`.
    pub fn host(&self) -> &str {
        self.host
            .as_ref()
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost")
    }
}

/// The control-plane operations this build implements.
const CONTROL_PLANE: &[&str] = &[
    "CreateTable",
    "DescribeTable",
    "ListTables",
    "UpdateTable",
    "DeleteTable",
    "TagResource",
    "UntagResource",
    "ListTagsOfResource",
    "UpdateTimeToLive",
    "DescribeTimeToLive",
    "DescribeLimits",
    "DescribeEndpoints",
    "DescribeContinuousBackups",
    "UpdateContinuousBackups",
    "ListBackups",
    "ListGlobalTables",
    "DescribeKinesisStreamingDestination",
    "DescribeContributorInsights",
];

/// The item operations this build implements.
const ITEMS: &[&str] = &[
    "PutItem",
    "GetItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
];

/// The operations on several items (of one or more tables) this build implements.
const MULTI_ITEM: &[&str] = &[
    "BatchGetItem",
    "BatchWriteItem",
    "TransactWriteItems",
    "TransactGetItems",
    "ExecuteStatement",
    "BatchExecuteStatement",
    "ExecuteTransaction",
];

/// The rest of DynamoDB_20120810's operations: known, not implemented yet.
const NOT_YET: &[&str] = &[
    "CreateBackup",
    "DeleteBackup",
    "DescribeBackup",
    "RestoreTableFromBackup",
    "RestoreTableToPointInTime",
    "CreateGlobalTable",
    "DescribeGlobalTable",
    "UpdateGlobalTable",
    "ListContributorInsights",
    "UpdateContributorInsights",
    "DescribeTableReplicaAutoScaling",
    "UpdateTableReplicaAutoScaling",
    "EnableKinesisStreamingDestination",
    "DisableKinesisStreamingDestination",
    "ExportTableToPointInTime",
    "DescribeExport",
    "ListExports",
    "ImportTable",
    "DescribeImport",
    "ListImports",
    "GetResourcePolicy",
    "PutResourcePolicy",
    "DeleteResourcePolicy",
];

/// Whether `operation` is one of DynamoDB_20120810's.
pub fn is_known(operation: &str) -> bool {
    CONTROL_PLANE.contains(&operation)
        || ITEMS.contains(&operation)
        || MULTI_ITEM.contains(&operation)
        || NOT_YET.contains(&operation)
}

impl Operations {
    pub fn new(coordinator: Arc<Coordinator>) -> Self {
        let schema_lock = Arc::new(tokio::sync::Mutex::new(()));
        // Index builds and drops a restart interrupted go on (inside a runtime only: unit
        // tests build handlers without one).
        if tokio::runtime::Handle::try_current().is_ok() {
            crate::indexes::build::resume(coordinator.clone(), schema_lock.clone());
        }
        Operations {
            coordinator,
            schema_lock,
            transaction_tokens: crate::transact::Tokens::default(),
            streams: crate::streams::Streams::default(),
            collection_limit: crate::collections::DEFAULT_LIMIT_BYTES,
            layouts: parking_lot::Mutex::default(),
        }
    }

    /// These operations with item collections limited to `bytes` instead of DynamoDB's 10 GB.
    pub fn with_collection_limit(mut self, bytes: u64) -> Self {
        self.collection_limit = bytes;
        self
    }

    /// Run `operation` (a name [`is_known`] accepts; others are `UnknownOperationException`).
    pub async fn dispatch(
        &self,
        operation: &str,
        body: Request,
        request: &RequestInfo,
    ) -> Result<Reply> {
        if ITEMS.contains(&operation) {
            return self.item_operation(operation, body).await;
        }
        let body = body.object;
        if matches!(operation, "TagResource" | "UntagResource") {
            let done = if operation == "TagResource" {
                tags::tag_resource(self, &body).await
            } else {
                tags::untag_resource(self, &body).await
            };
            // DynamoDB answers both with an empty body, not `{}`.
            return done.map(|()| Reply::Bytes(Vec::new()));
        }
        let answer = match operation {
            "CreateTable" => control::create_table(self, &body, request).await,
            "DeleteTable" => control::delete_table(self, &body, request).await,
            "UpdateTable" => control::update_table(self, &body, request).await,
            "DescribeTable" => describe::describe_table(self, &body, request),
            "ListTables" => describe::list_tables(self, &body),
            "DescribeLimits" => Ok(describe::describe_limits()),
            "DescribeEndpoints" => Ok(describe::describe_endpoints(request)),
            "ListTagsOfResource" => tags::list_tags(self, &body),
            "UpdateTimeToLive" => ttl::update_ttl(self, &body).await,
            "DescribeTimeToLive" => ttl::describe_ttl(self, &body),
            "DescribeContinuousBackups" => {
                absent_features::describe_continuous_backups(self, &body)
            }
            "UpdateContinuousBackups" => absent_features::update_continuous_backups(self, &body),
            "ListBackups" => Ok(absent_features::list_backups()),
            "ListGlobalTables" => Ok(absent_features::list_global_tables()),
            "DescribeKinesisStreamingDestination" => {
                absent_features::describe_kinesis_streaming_destination(self, &body)
            }
            "DescribeContributorInsights" => {
                absent_features::describe_contributor_insights(self, &body)
            }
            "BatchGetItem" => crate::batch::batch_get_item(self, &body).await,
            "BatchWriteItem" => crate::batch::batch_write_item(self, &body).await,
            "TransactWriteItems" => crate::transact::transact_write_items(self, &body).await,
            "TransactGetItems" => crate::transact::transact_get_items(self, &body).await,
            "ExecuteStatement" => crate::partiql::execute_statement(self, &body, request).await,
            "BatchExecuteStatement" => {
                crate::partiql::batch::batch_execute_statement(self, &body, request).await
            }
            "ExecuteTransaction" => {
                crate::partiql::transaction::execute_transaction(self, &body, request).await
            }
            op if NOT_YET.contains(&op) => {
                Err(DynamoError::not_supported(&format!("operation {op}")))
            }
            _ => Err(DynamoError::bare(ErrorKind::UnknownOperation)),
        };
        answer.map(Reply::Json)
    }

    /// An item operation on the table its `TableName` names.
    pub(crate) async fn item_operation(&self, operation: &str, body: Request) -> Result<Reply> {
        let Request { object: body, item } = body;
        let body = &body;
        let name = match body.get("TableName") {
            Some(Value::String(n)) => n.as_str(),
            None | Some(Value::Null) => {
                return Err(DynamoError::validation(
                    "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null",
                ));
            }
            Some(_) => {
                return Err(DynamoError::serialization(
                    "Unexpected value type in payload for TableName",
                ));
            }
        };
        // A bad name is refused before any table is looked up; an ARN names its table.
        let name = input::table_name_of(name)?;
        let resolved = self.resolved(name)?;
        let streamed;
        let layout = match self
            .streams
            .writer(&self.coordinator, &resolved.table)
            .await?
        {
            None => &resolved.layout,
            Some(stream) => {
                let mut layout = resolved.layout.clone();
                layout.stream = Some(stream);
                streamed = layout;
                &streamed
            }
        };
        let c = &self.coordinator;
        let result = match operation {
            "PutItem" => crate::item_ops::put_item(c, layout, body, item).await,
            "GetItem" => crate::item_ops::get_item(c, layout, body, item).await,
            "UpdateItem" => crate::item_ops::update_item(c, layout, body, item).await,
            "DeleteItem" => crate::item_ops::delete_item(c, layout, body, item).await,
            "Query" => crate::item_ops::query(c, layout, body).await,
            "Scan" => crate::item_ops::scan(c, layout, body).await,
            _ => return Err(DynamoError::bare(ErrorKind::UnknownOperation)),
        };
        result.map(Reply::from).map_err(DynamoError::from)
    }

    /// Table `name` and its layout (without its stream), from the cache when the schema has
    /// not changed since; `ResourceNotFoundException` if there is no such table.
    fn resolved(&self, name: &str) -> Result<Arc<Resolved>> {
        let schema = self.coordinator.schema();
        {
            let mut cache = self.layouts.lock();
            if cache
                .schema
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &schema))
            {
                if let Some(r) = cache.tables.get(name) {
                    return Ok(r.clone());
                }
            } else {
                cache.tables.clear();
                cache.schema = Some(schema.clone());
            }
        }
        let table = match crate::tables::find(&schema, name) {
            Ok(Some(t)) => t,
            Ok(None) => return Err(DynamoError::table_not_found(name)),
            Err(e) => return Err(DynamoError::internal(e)),
        };
        let mut layout = item_layout(&table)?;
        if let Some(c) = layout.collections.as_mut() {
            c.limit = self.collection_limit;
        }
        let resolved = Arc::new(Resolved { table, layout });
        let mut cache = self.layouts.lock();
        if cache
            .schema
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &schema))
        {
            if cache.tables.len() >= MAX_CACHED_LAYOUTS {
                cache.tables.clear();
            }
            cache.tables.insert(name.to_string(), resolved.clone());
        }
        Ok(resolved)
    }

    /// Give the layouts of a batch's or transaction's tables what their writes derive (streams),
    /// each table resolved once.
    pub(crate) async fn with_writers<'a>(
        &self,
        layouts: impl Iterator<Item = &'a mut crate::items::ItemLayout>,
    ) -> Result<()> {
        let mut done: std::collections::HashMap<uuid::Uuid, Option<Arc<crate::streams::Stream>>> =
            std::collections::HashMap::new();
        for layout in layouts {
            let id = layout.table.def.id;
            if let std::collections::hash_map::Entry::Vacant(slot) = done.entry(id) {
                let stream = match crate::tables::meta_of(&layout.table) {
                    Some(Ok(meta)) => {
                        let table = crate::tables::Table {
                            schema: layout.table.clone(),
                            meta,
                        };
                        self.streams.writer(&self.coordinator, &table).await?
                    }
                    _ => None,
                };
                slot.insert(stream);
            }
            layout.stream = done[&id].clone();
            if let Some(c) = layout.collections.as_mut() {
                c.limit = self.collection_limit;
            }
        }
        Ok(())
    }

    /// The Streams API (`DynamoDBStreams_20120810.*`).
    pub async fn dispatch_streams(
        &self,
        operation: &str,
        body: Object,
        request: &RequestInfo,
    ) -> Result<Reply> {
        use crate::streams::api;
        let answer = match operation {
            "ListStreams" => api::list_streams(self, &body, request).await,
            "DescribeStream" => api::describe_stream(self, &body).await,
            "GetShardIterator" => api::get_shard_iterator(self, &body).await,
            "GetRecords" => api::get_records(self, &body, request).await,
            _ => Err(DynamoError::bare(ErrorKind::UnknownOperation)),
        };
        answer.map(Reply::Json)
    }

    /// Replace a table's metadata (one `AlterTable` schema change).
    pub(crate) async fn alter_meta(
        &self,
        table: &crate::tables::Table,
        meta: &crate::tables::TableMeta,
    ) -> Result<()> {
        self.coordinator
            .change_schema(khata_coordinator::catalog::SchemaChange::AlterTable(
                crate::tables::with_meta(&table.schema, meta),
            ))
            .await?;
        Ok(())
    }

    /// The DynamoDB table `name` (or a table ARN), or `ResourceNotFoundException`; a name
    /// that cannot be a table's is a `ValidationException` ([`input::table_name_of`]).
    pub(crate) fn table(&self, name: &str) -> Result<crate::tables::Table> {
        let name = input::table_name_of(name)?;
        match crate::tables::find(&self.coordinator.schema(), name) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(DynamoError::table_not_found(name)),
            Err(e) => Err(DynamoError::internal(e)),
        }
    }
}

/// `arn:aws:dynamodb:<region>:000000000000:table/<name>`.
pub fn table_arn(region: &str, name: &str) -> String {
    format!("arn:aws:dynamodb:{region}:{ACCOUNT_ID}:table/{name}")
}

/// How a table's items (and its indexes' entries) are stored, from its metadata.
pub(crate) fn item_layout(table: &crate::tables::Table) -> Result<crate::items::ItemLayout> {
    use crate::value::KeyType;
    let key_type = |name: &str| -> Result<KeyType> {
        match table.meta.attribute_type(name) {
            Some("S") => Ok(KeyType::S),
            Some("N") => Ok(KeyType::N),
            Some("B") => Ok(KeyType::B),
            other => Err(DynamoError::internal(format!(
                "table {}: key {name} has type {other:?}",
                table.meta.table_name
            ))),
        }
    };
    let hash = table.meta.hash_key().ok_or_else(|| {
        DynamoError::internal(format!("table {} has no hash key", table.meta.table_name))
    })?;
    let hash = (hash.to_string(), key_type(hash)?);
    let range = match table.meta.range_key() {
        Some(r) => Some((r.to_string(), key_type(r)?)),
        None => None,
    };
    let layout =
        crate::items::ItemLayout::new(table.schema.clone(), hash, range).ok_or_else(|| {
            DynamoError::internal(format!(
                "table {} is not stored as khata stores DynamoDB tables",
                table.meta.table_name
            ))
        })?;
    let mut layout =
        crate::indexes::with_indexes(layout, &table.meta).map_err(DynamoError::internal)?;
    layout.collections =
        crate::collections::Collections::of(&table.schema, crate::collections::DEFAULT_LIMIT_BYTES);
    Ok(layout)
}
