//! The statement executor: parses, prepares and runs CQL statements through the coordinator.
//!
//! A statement is parsed once per PREPARE (or per QUERY) and run against the schema snapshot
//! current at execution. Every failure becomes an ERROR response with Cassandra's code and
//! message ([`error::to_error_body`]); nothing here ends the connection.

mod aggregate;
mod bind;
mod cells;
mod ddl;
mod describe;
mod error;
mod functions;
mod lwt;
mod modify;
mod restrictions;
mod select;
mod types;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::Coordinator;
use khata_coordinator::catalog::{Schema, TableSchema};
use parking_lot::Mutex;

use crate::frame::{
    Batch, BoundValues, ColumnSpec, ErrorBody, ErrorKind, Execute, Prepare, Prepared,
    PreparedMetadata, Query, QueryParameters, Response, ResponseFrame, ResultBody, RowsMetadata,
    Value,
};
use crate::language::ast::{ParsedStatement, QualifiedName, Statement};
use crate::language::parse_statement;
use crate::server::{CqlServerConfig, Session};

pub(crate) use error::ExecError;

/// Prepared statements kept (Cassandra bounds its cache by memory; a count is simpler).
pub const MAX_PREPARED_STATEMENTS: usize = 10_000;

/// A statement prepared once and executed many times.
#[derive(Debug)]
pub(crate) struct PreparedStatement {
    pub parsed: ParsedStatement,
    pub keyspace: Option<String>,
    pub bind_specs: Vec<ColumnSpec>,
    pub pk_indexes: Vec<u16>,
    pub result: Option<Vec<ColumnSpec>>,
}

/// Runs statements for the CQL server.
#[derive(Debug)]
pub struct Executor {
    coordinator: Arc<Coordinator>,
    config: CqlServerConfig,
    prepared: Mutex<HashMap<Bytes, Arc<PreparedStatement>>>,
}

/// The values and options a statement runs with.
#[derive(Debug)]
pub(crate) struct Run<'a> {
    pub session: &'a Session,
    pub coordinator: Arc<Coordinator>,
    /// The statement's time, microseconds since the epoch (for `now()` and friends).
    pub now_micros: i64,
    pub keyspace: Option<String>,
    pub values: Vec<Value>,
    pub params: &'a QueryParameters,
    pub warnings: Vec<String>,
}

impl Run<'_> {
    /// The keyspace a name refers to: its own or the session's.
    pub fn keyspace_of(&self, name: &QualifiedName) -> Result<String, ExecError> {
        match (&name.keyspace, &self.keyspace) {
            (Some(k), _) => Ok(k.0.clone()),
            (None, Some(k)) => Ok(k.clone()),
            (None, None) => Err(ExecError::invalid(
                "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename",
            )),
        }
    }

    pub fn table<'s>(
        &self,
        schema: &'s Schema,
        name: &QualifiedName,
    ) -> Result<&'s Arc<TableSchema>, ExecError> {
        let keyspace = self.keyspace_of(name)?;
        if schema.keyspace(&keyspace).is_none() {
            return Err(ExecError::invalid(format!(
                "Keyspace {keyspace} does not exist"
            )));
        }
        schema
            .table(&keyspace, &name.name.0)
            .ok_or_else(|| ExecError::invalid(format!("table {} does not exist", name.name.0)))
    }
}

/// The statement id of a query: the MD5-like digest Cassandra uses is replaced by a 16-byte
/// hash of the keyspace and text (drivers treat the id as opaque).
fn statement_id(keyspace: Option<&str>, query: &str) -> Bytes {
    let text = format!("{}\u{0}{query}", keyspace.unwrap_or(""));
    let hi = khata_types::token::murmur3_token(text.as_bytes()) as u64;
    let lo = khata_types::token::murmur3_token(format!("{text}#").as_bytes()) as u64;
    let mut id = Vec::with_capacity(16);
    id.extend_from_slice(&hi.to_be_bytes());
    id.extend_from_slice(&lo.to_be_bytes());
    Bytes::from(id)
}

fn error_frame(stream: i16, body: ErrorBody) -> ResponseFrame {
    ResponseFrame::new(stream, Response::Error(body))
}

impl Executor {
    pub fn new(coordinator: Arc<Coordinator>, config: CqlServerConfig) -> Self {
        Executor {
            coordinator,
            config,
            prepared: Mutex::new(HashMap::new()),
        }
    }

    pub fn coordinator(&self) -> &Arc<Coordinator> {
        &self.coordinator
    }

    pub(crate) fn config(&self) -> &CqlServerConfig {
        &self.config
    }

    fn finish(stream: i16, result: Result<(ResultBody, Vec<String>), ExecError>) -> ResponseFrame {
        match result {
            Ok((body, warnings)) => {
                let mut frame = ResponseFrame::new(stream, Response::Result(body));
                frame.warnings = warnings;
                frame
            }
            Err(e) => error_frame(stream, e.into_body()),
        }
    }

    /// QUERY: parse and run.
    pub async fn query(&self, session: &Session, stream: i16, query: Query) -> ResponseFrame {
        let parsed = match parse_statement(&query.query) {
            Ok(p) => p,
            Err(e) => return error_frame(stream, error::parse_error(&e)),
        };
        let values = match bind_values(&parsed, &query.parameters.values) {
            Ok(v) => v,
            Err(e) => return error_frame(stream, e.into_body()),
        };
        let mut run = Run {
            session,
            coordinator: self.coordinator.clone(),
            now_micros: self.coordinator.timestamp(),
            keyspace: query
                .parameters
                .keyspace
                .clone()
                .or_else(|| session.keyspace()),
            values,
            params: &query.parameters,
            warnings: Vec::new(),
        };
        let result = self.run(&parsed, &mut run).await;
        Self::finish(stream, result.map(|b| (b, run.warnings)))
    }

    /// PREPARE: parse, check against the schema, and remember.
    pub async fn prepare(&self, session: &Session, stream: i16, prepare: Prepare) -> ResponseFrame {
        let keyspace = prepare.keyspace.clone().or_else(|| session.keyspace());
        let parsed = match parse_statement(&prepare.query) {
            Ok(p) => p,
            Err(e) => return error_frame(stream, error::parse_error(&e)),
        };
        let schema = self.coordinator.schema();
        let described = match bind::describe(&schema, keyspace.as_deref(), &parsed) {
            Ok(d) => d,
            Err(e) => return error_frame(stream, e.into_body()),
        };
        let id = statement_id(keyspace.as_deref(), &prepare.query);
        let statement = Arc::new(PreparedStatement {
            parsed,
            keyspace,
            bind_specs: described.bind_specs,
            pk_indexes: described.pk_indexes,
            result: described.result,
        });
        {
            let mut cache = self.prepared.lock();
            if cache.len() >= MAX_PREPARED_STATEMENTS && !cache.contains_key(&id) {
                // Simple bound: start over; clients re-prepare on Unprepared.
                cache.clear();
            }
            cache.insert(id.clone(), statement.clone());
        }
        let result_metadata = match &statement.result {
            Some(columns) => RowsMetadata::new(columns.clone()),
            None => RowsMetadata::no_metadata(0),
        };
        ResponseFrame::new(
            stream,
            Response::Result(ResultBody::Prepared(Prepared {
                id,
                result_metadata_id: None,
                metadata: PreparedMetadata {
                    pk_indexes: statement.pk_indexes.clone(),
                    columns: statement.bind_specs.clone(),
                },
                result_metadata,
            })),
        )
    }

    fn lookup(&self, id: &Bytes) -> Result<Arc<PreparedStatement>, ErrorBody> {
        self.prepared.lock().get(id).cloned().ok_or_else(|| {
            ErrorBody::new(
                ErrorKind::Unprepared { id: id.clone() },
                format!(
                    "Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)",
                    hex(id)
                ),
            )
        })
    }

    /// EXECUTE: run a prepared statement.
    pub async fn execute(&self, session: &Session, stream: i16, execute: Execute) -> ResponseFrame {
        let statement = match self.lookup(&execute.id) {
            Ok(s) => s,
            Err(e) => return error_frame(stream, e),
        };
        let values = match bind_values(&statement.parsed, &execute.parameters.values) {
            Ok(v) => v,
            Err(e) => return error_frame(stream, e.into_body()),
        };
        let mut run = Run {
            session,
            coordinator: self.coordinator.clone(),
            now_micros: self.coordinator.timestamp(),
            keyspace: statement.keyspace.clone().or_else(|| session.keyspace()),
            values,
            params: &execute.parameters,
            warnings: Vec::new(),
        };
        let mut result = self.run(&statement.parsed, &mut run).await;
        if let Ok(ResultBody::Rows(rows)) = &mut result
            && execute.parameters.skip_metadata
        {
            rows.metadata.columns = None;
        }
        Self::finish(stream, result.map(|b| (b, run.warnings)))
    }

    /// BATCH: run the statements as one batch.
    pub async fn batch(&self, session: &Session, stream: i16, batch: Batch) -> ResponseFrame {
        let result = modify::run_batch(self, session, &batch).await;
        Self::finish(stream, result)
    }

    pub(crate) fn prepared_statement(
        &self,
        id: &Bytes,
    ) -> Result<Arc<PreparedStatement>, ExecError> {
        self.lookup(id).map_err(ExecError::Body)
    }

    /// Run a parsed statement.
    pub(crate) async fn run(
        &self,
        parsed: &ParsedStatement,
        run: &mut Run<'_>,
    ) -> Result<ResultBody, ExecError> {
        match &parsed.statement {
            Statement::Use(name) => {
                let schema = self.coordinator.schema();
                if schema.keyspace(&name.0).is_none() {
                    return Err(ExecError::invalid(format!(
                        "Keyspace '{}' does not exist",
                        name.0
                    )));
                }
                run.session.set_keyspace(name.0.clone());
                Ok(ResultBody::SetKeyspace(name.0.clone()))
            }
            Statement::Select(select) => select::run(self, select, run).await,
            Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => {
                modify::run_single(self, &parsed.statement, run).await
            }
            Statement::Batch(batch) => modify::run_text_batch(self, batch, run).await,
            _ => ddl::run(self, &parsed.statement, run).await,
        }
    }
}

/// The bound values in marker order (named values placed by their markers' names).
fn bind_values(parsed: &ParsedStatement, values: &BoundValues) -> Result<Vec<Value>, ExecError> {
    let expected = parsed.bind_markers.len();
    match values {
        BoundValues::Positional(v) => {
            if v.len() != expected {
                return Err(ExecError::invalid(format!(
                    "There were {expected} markers(?) in CQL but {} bound variables",
                    v.len()
                )));
            }
            Ok(v.clone())
        }
        BoundValues::Named(named) => {
            let mut out = vec![Value::NotSet; expected];
            for (name, value) in named {
                let mut found = false;
                for (i, marker) in parsed.bind_markers.iter().enumerate() {
                    if marker
                        .as_ref()
                        .is_some_and(|m| m.0.eq_ignore_ascii_case(name))
                    {
                        out[i] = value.clone();
                        found = true;
                    }
                }
                if !found {
                    return Err(ExecError::invalid(format!(
                        "Invalid unset value for column {name}"
                    )));
                }
            }
            Ok(out)
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
