//! The statement executor: parses, prepares and runs CQL statements through the coordinator.
//!
//! A statement is parsed once per PREPARE (or per QUERY) and run against the schema snapshot
//! current at execution. A prepared SELECT or INSERT also keeps a [`Plan`]: what it needs of
//! the schema (table, columns, result metadata), made on its first EXECUTE on a snapshot and
//! used until DDL publishes another. Every failure becomes an ERROR response with Cassandra's code and
//! message ([`error::to_error_body`]); nothing here ends the connection.

mod aggregate;
mod arith;
mod bind;
mod cells;
mod ddl;
mod describe;
pub(crate) mod error;
mod floor;
mod functions;
mod lwt;
mod modify;
mod native_scalars;
mod restrictions;
mod sai;
mod select;
mod selector;
mod types;

use khata_coordinator::trace;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::Coordinator;
use khata_coordinator::catalog::{Schema, TableSchema};

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
    /// The tables the statement reads or writes, as they were when it was prepared.
    depends_on: Vec<TableVersion>,
}

/// A table as a prepared statement saw it: its identity and columns. A statement whose table
/// was dropped (or dropped and created again) or whose columns changed is forgotten, as
/// Cassandra's `QueryProcessor` evicts it on `DROP`/`ALTER TABLE` and `DROP KEYSPACE`: the
/// next EXECUTE gets Unprepared and the driver prepares it again, so a client that skips the
/// result metadata never reads rows with an old column list.
#[derive(Debug)]
struct TableVersion {
    keyspace: String,
    table: String,
    id: uuid::Uuid,
    columns: Vec<khata_types::schema::ColumnDef>,
}

impl TableVersion {
    /// The tables `parsed` names, as `schema` has them (a table missing there is left out:
    /// PREPARE has refused such a statement already).
    fn of(schema: &Schema, keyspace: Option<&str>, parsed: &ParsedStatement) -> Vec<TableVersion> {
        use crate::language::ast::BatchStatement;
        let names: Vec<&QualifiedName> = match &parsed.statement {
            Statement::Select(s) => vec![&s.table],
            Statement::Insert(i) => vec![&i.table],
            Statement::Update(u) => vec![&u.table],
            Statement::Delete(d) => vec![&d.table],
            Statement::Batch(b) => b
                .statements
                .iter()
                .map(|s| match s {
                    BatchStatement::Insert(i) => &i.table,
                    BatchStatement::Update(u) => &u.table,
                    BatchStatement::Delete(d) => &d.table,
                })
                .collect(),
            _ => Vec::new(),
        };
        names
            .into_iter()
            .filter_map(|name| {
                let ks = name.keyspace.as_ref().map(|k| k.0.as_str()).or(keyspace)?;
                let t = schema.table(ks, &name.name.0)?;
                Some(TableVersion {
                    keyspace: ks.to_string(),
                    table: t.def.name.clone(),
                    id: t.def.id,
                    columns: t.def.columns.clone(),
                })
            })
            .collect()
    }

    /// Whether `schema` still has the table as it was.
    fn holds(&self, schema: &Schema) -> bool {
        schema
            .table(&self.keyspace, &self.table)
            .is_some_and(|t| t.def.id == self.id && t.def.columns == self.columns)
    }
}

/// What an EXECUTE of a prepared statement needs of the schema, worked out once: the table
/// looked up, columns resolved and checked, result metadata built.
#[derive(Debug)]
pub(crate) enum Shape {
    Select(select::SelectShape),
    Insert(modify::InsertShape),
}

/// A prepared statement's [`Shape`] and the schema snapshot and keyspace it was made for.
///
/// It is used only while that snapshot is the coordinator's current one and the statement's
/// keyspace (its own, or the session's for unqualified names) is the same: any DDL publishes
/// a new snapshot, so a plan never outlives the schema it was made from. The snapshot is held
/// weakly (its allocation stays, its content does not), so the pointer cannot be reused by a
/// later snapshot while the plan exists.
#[derive(Debug)]
pub(crate) struct Plan {
    schema: std::sync::Weak<Schema>,
    keyspace: Option<String>,
    shape: Shape,
}

impl Plan {
    /// The plan of `parsed` on `schema`, if it has one (SELECT, INSERT with a column list) and
    /// nothing in it fails on the schema alone; otherwise every run takes the unplanned path,
    /// which reports any error in its usual order.
    fn make(schema: &Arc<Schema>, run: &Run<'_>, parsed: &ParsedStatement) -> Option<Plan> {
        let shape = match &parsed.statement {
            Statement::Select(s) => {
                Shape::Select(select::SelectShape::checked(schema, run, s).ok()?)
            }
            Statement::Insert(i) if !i.if_not_exists => {
                Shape::Insert(modify::InsertShape::new(schema, run, i)?)
            }
            _ => return None,
        };
        Some(Plan {
            schema: Arc::downgrade(schema),
            keyspace: run.keyspace.clone(),
            shape,
        })
    }

    /// Whether this plan was made for `schema` and the run's keyspace.
    fn fits(&self, schema: &Arc<Schema>, keyspace: Option<&str>) -> bool {
        std::ptr::eq(self.schema.as_ptr(), Arc::as_ptr(schema))
            && self.keyspace.as_deref() == keyspace
    }
}

/// A prepared statement, its latest plan, and the schema snapshot its tables were last found
/// unchanged in.
#[derive(Debug)]
struct Entry {
    statement: Arc<PreparedStatement>,
    plan: Option<Arc<Plan>>,
    checked: std::sync::Weak<Schema>,
}

/// Runs statements for the CQL server.
#[derive(Debug)]
pub struct Executor {
    coordinator: Arc<Coordinator>,
    config: CqlServerConfig,
    /// Prepared statements by id. A std `RwLock`: every EXECUTE reads it, from both request
    /// threads at once, and readers of a std lock share it without spinning (a `parking_lot`
    /// mutex here made the request threads `sched_yield`, docs/benchmarks.md).
    prepared: std::sync::RwLock<HashMap<Bytes, Entry>>,
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
                "keyspace {keyspace} does not exist"
            )));
        }
        schema
            .table(&keyspace, &name.name.0)
            .ok_or_else(|| ExecError::invalid(format!("table {} does not exist", name.name.0)))
    }
}

/// The statement id of a query: the MD5-like digest Cassandra uses is replaced by a 16-byte
/// hash of the keyspace and text (drivers treat the id as opaque).
/// Whether a statement reads or writes a table named without its keyspace: a SELECT, INSERT,
/// UPDATE, DELETE or TRUNCATE of one, or a BATCH with such a statement (a prepared statement
/// then depends on the connection's `USE`).
fn names_unqualified_table(statement: &Statement) -> bool {
    use crate::language::ast::BatchStatement;
    let unqualified = |name: &QualifiedName| name.keyspace.is_none();
    match statement {
        Statement::Select(s) => unqualified(&s.table),
        Statement::Insert(i) => unqualified(&i.table),
        Statement::Update(u) => unqualified(&u.table),
        Statement::Delete(d) => unqualified(&d.table),
        Statement::Truncate(t) => unqualified(&t.table),
        Statement::Batch(b) => b.statements.iter().any(|s| match s {
            BatchStatement::Insert(i) => unqualified(&i.table),
            BatchStatement::Update(u) => unqualified(&u.table),
            BatchStatement::Delete(d) => unqualified(&d.table),
        }),
        _ => false,
    }
}

/// Cassandra's `ClientState.warnAboutUseWithPreparedStatements`.
fn use_warning(keyspace: &str, id: &[u8]) -> String {
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "`USE <keyspace>` with prepared statements is considered to be an anti-pattern due to \
         ambiguity in non-qualified table names. Please consider removing instances of \
         `Session#setKeyspace(<keyspace>)`, `Session#execute(\"USE <keyspace>\")` and \
         `cluster.newSession(<keyspace>)` from your code, and always use fully qualified table \
         names (e.g. <keyspace>.<table>). Keyspace used: {keyspace}, statement keyspace: \
         {keyspace}, statement id: {id}"
    )
}

fn statement_id(keyspace: Option<&str>, query: &str) -> Bytes {
    let text = format!("{}\u{0}{query}", keyspace.unwrap_or(""));
    digest16(text.as_bytes())
}

/// The result metadata id of protocol v5 (spec v5 §4.2.5.4): a 16-byte digest of the result
/// columns (keyspace, table, name and type of each, in order; `None` is the empty metadata of
/// statements that return no rows). Equal columns give equal ids, on any node and across
/// restarts; a column added to or dropped from the table of a `SELECT *` changes it, which is how
/// a driver holding the old id learns (Metadata_changed) that its cached metadata is stale.
/// Flags and paging state are not part of it, as in Cassandra.
pub(crate) fn result_metadata_id(columns: Option<&[ColumnSpec]>) -> Bytes {
    let mut text = bytes::BytesMut::new();
    for c in columns.unwrap_or_default() {
        for part in [&c.keyspace, &c.table, &c.name] {
            text.extend_from_slice(&(part.len() as u64).to_be_bytes());
            text.extend_from_slice(part.as_bytes());
        }
        // A type is written to a buffer that grows as needed; failure would mean an invalid
        // type in the schema, and then the digest of the other fields still distinguishes it.
        let _ = c.column_type.write(&mut text);
    }
    digest16(&text)
}

/// 16 bytes from two Murmur3 hashes of `bytes` (the second salted): an opaque id, not a
/// security boundary.
fn digest16(bytes: &[u8]) -> Bytes {
    let hi = khata_types::token::murmur3_token(bytes) as u64;
    let mut salted = Vec::with_capacity(bytes.len() + 1);
    salted.extend_from_slice(bytes);
    salted.push(b'#');
    let lo = khata_types::token::murmur3_token(&salted) as u64;
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
            prepared: std::sync::RwLock::new(HashMap::new()),
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
        trace::event(|| format!("Parsing {}", query.query));
        let parsed = match parse_statement(&query.query) {
            Ok(p) => p,
            Err(e) => return error_frame(stream, error::parse_error(&e)),
        };
        trace::event(|| "Preparing statement".to_string());
        let keyspace = query
            .parameters
            .keyspace
            .clone()
            .or_else(|| session.keyspace());
        let names = || {
            let schema = self.coordinator.schema();
            bind::describe(&schema, keyspace.as_deref(), &parsed)
                .map(|d| d.bind_specs.into_iter().map(|s| s.name).collect())
        };
        let values = match bind_values(&parsed, &query.parameters.values, Binding::Query, names) {
            Ok(v) => v,
            Err(e) => return error_frame(stream, e.into_body()),
        };
        let mut run = Run {
            session,
            coordinator: self.coordinator.clone(),
            now_micros: self.coordinator.timestamp(),
            keyspace,
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
        trace::event(|| format!("Parsing {}", prepare.query));
        let parsed = match parse_statement(&prepare.query) {
            Ok(p) => p,
            Err(e) => return error_frame(stream, error::parse_error(&e)),
        };
        trace::event(|| "Preparing statement".to_string());
        let schema = self.coordinator.schema();
        let described = match bind::describe(&schema, keyspace.as_deref(), &parsed) {
            Ok(d) => d,
            Err(e) => return error_frame(stream, e.into_body()),
        };
        if let Err(e) =
            self.check_prepared(session, &parsed, keyspace.clone(), &described.bind_specs)
        {
            return error_frame(stream, e.into_body());
        }
        let id = statement_id(keyspace.as_deref(), &prepare.query);
        let depends_on = TableVersion::of(&schema, keyspace.as_deref(), &parsed);
        let statement = Arc::new(PreparedStatement {
            parsed,
            keyspace,
            bind_specs: described.bind_specs,
            pk_indexes: described.pk_indexes,
            result: described.result,
            depends_on,
        });
        let mut warnings = Vec::new();
        {
            let mut cache = self
                .prepared
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // QueryProcessor.prepare warns when it prepares (not when it finds the statement
            // already prepared) a statement naming its table without a keyspace.
            if let Some(ks) = statement.keyspace.as_deref()
                && !cache.contains_key(&id)
                && names_unqualified_table(&statement.parsed.statement)
                && session.first_use_warning()
            {
                warnings.push(use_warning(ks, &id));
            }
            if cache.len() >= MAX_PREPARED_STATEMENTS && !cache.contains_key(&id) {
                // Simple bound: start over; clients re-prepare on Unprepared.
                cache.clear();
            }
            cache.insert(
                id.clone(),
                Entry {
                    statement: statement.clone(),
                    plan: None,
                    checked: Arc::downgrade(&schema),
                },
            );
        }
        let result_metadata = match &statement.result {
            Some(columns) => RowsMetadata::new(columns.clone()),
            None => RowsMetadata::no_metadata(0),
        };
        let mut frame = ResponseFrame::new(
            stream,
            Response::Result(ResultBody::Prepared(Prepared {
                id,
                result_metadata_id: Some(result_metadata_id(statement.result.as_deref())),
                metadata: PreparedMetadata {
                    pk_indexes: statement.pk_indexes.clone(),
                    columns: statement.bind_specs.clone(),
                },
                result_metadata,
            })),
        );
        frame.warnings = warnings;
        frame
    }

    /// What Cassandra refuses when it prepares a statement, whatever its values: the
    /// statement is planned (a SELECT) or its mutations built (a write) with a sample value of
    /// each marker's type, and nothing is read or written. A statement with a marker of a type
    /// khata makes no sample of is left to its runs.
    fn check_prepared(
        &self,
        session: &Session,
        parsed: &ParsedStatement,
        keyspace: Option<String>,
        specs: &[ColumnSpec],
    ) -> Result<(), ExecError> {
        // A JSON text's sample would have to be a value of its receiver's type, a blob's that
        // of the type `blobAs<type>(?)` reads it as: left to runs.
        if specs
            .iter()
            .any(|s| s.name == "arg0(system.fromjson)" || s.name.starts_with("arg0(system.blobas"))
        {
            return Ok(());
        }
        let Some(values) = specs
            .iter()
            .map(|s| bind::sample_value(&s.column_type).map(Value::Set))
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(());
        };
        let params = QueryParameters::new(crate::frame::Consistency::One);
        let run = Run {
            session,
            coordinator: self.coordinator.clone(),
            now_micros: self.coordinator.timestamp(),
            keyspace,
            values,
            params: &params,
            warnings: Vec::new(),
        };
        match &parsed.statement {
            Statement::Select(s) => select::check(self, s, &run),
            s @ (Statement::Insert(_)
            | Statement::Update(_)
            | Statement::Delete(_)
            | Statement::Batch(_)) => modify::check(self, &run, s),
            _ => Ok(()),
        }
    }

    /// The prepared statement `id` and its plan, if it still stands on `schema`: a statement
    /// whose tables changed since it was prepared is forgotten here and reported Unprepared.
    fn lookup(
        &self,
        id: &Bytes,
        schema: &Arc<Schema>,
    ) -> Result<(Arc<PreparedStatement>, Option<Arc<Plan>>), ErrorBody> {
        let unprepared = || {
            ErrorBody::new(
                ErrorKind::Unprepared { id: id.clone() },
                format!(
                    "Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)",
                    hex(id)
                ),
            )
        };
        let (statement, plan, checked) = self
            .prepared
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .map(|e| {
                let checked = std::ptr::eq(e.checked.as_ptr(), Arc::as_ptr(schema));
                (e.statement.clone(), e.plan.clone(), checked)
            })
            .ok_or_else(unprepared)?;
        if checked {
            return Ok((statement, plan));
        }
        // The schema changed since the last look (any DDL, anywhere): check this statement's
        // tables once for this snapshot.
        let stands = statement.depends_on.iter().all(|t| t.holds(schema));
        let mut cache = self
            .prepared
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let same = cache
            .get(id)
            .is_some_and(|e| Arc::ptr_eq(&e.statement, &statement));
        if !stands {
            if same {
                cache.remove(id);
            }
            return Err(unprepared());
        }
        if same && let Some(e) = cache.get_mut(id) {
            e.checked = Arc::downgrade(schema);
        }
        Ok((statement, plan))
    }

    /// EXECUTE: run a prepared statement.
    pub async fn execute(&self, session: &Session, stream: i16, execute: Execute) -> ResponseFrame {
        let schema = self.coordinator.schema();
        let (statement, plan) = match self.lookup(&execute.id, &schema) {
            Ok(s) => s,
            Err(e) => return error_frame(stream, e),
        };
        let names = || {
            Ok(statement
                .bind_specs
                .iter()
                .map(|s| s.name.clone())
                .collect())
        };
        let values = match bind_values(
            &statement.parsed,
            &execute.parameters.values,
            Binding::Execute,
            names,
        ) {
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
        let plan = match plan {
            Some(plan) if plan.fits(&schema, run.keyspace.as_deref()) => Some(plan),
            _ => self.replan(&execute.id, &statement, &schema, &run),
        };
        drop(schema);
        let mut result = match (&statement.parsed.statement, plan.as_ref().map(|p| &p.shape)) {
            (Statement::Select(select), Some(Shape::Select(shape))) => {
                select::run(self, select, &mut run, Some(shape)).await
            }
            (statement, Some(Shape::Insert(shape))) => {
                modify::run_single(self, statement, &mut run, Some(shape)).await
            }
            _ => self.run(&statement.parsed, &mut run).await,
        };
        if let Ok(ResultBody::Rows(rows)) = &mut result {
            let is_select = matches!(statement.parsed.statement, Statement::Select(_));
            let metadata_id = match plan.as_ref().map(|p| &p.shape) {
                Some(Shape::Select(shape)) => Some(&shape.metadata_id),
                _ => None,
            };
            settle_metadata(
                &mut rows.metadata,
                &execute,
                session.version(),
                is_select,
                metadata_id,
            );
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
        self.lookup(id, &self.coordinator.schema())
            .map(|(statement, _)| statement)
            .map_err(ExecError::Body)
    }

    /// A new plan of a prepared statement for `schema`, kept for the next EXECUTE unless the
    /// statement was prepared again meanwhile.
    fn replan(
        &self,
        id: &Bytes,
        statement: &Arc<PreparedStatement>,
        schema: &Arc<Schema>,
        run: &Run<'_>,
    ) -> Option<Arc<Plan>> {
        let plan = Arc::new(Plan::make(schema, run, &statement.parsed)?);
        if let Some(entry) = self
            .prepared
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_mut(id)
            && Arc::ptr_eq(&entry.statement, statement)
        {
            entry.plan = Some(plan.clone());
        }
        Some(plan)
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
            Statement::Select(select) => select::run(self, select, run, None).await,
            Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => {
                modify::run_single(self, &parsed.statement, run, None).await
            }
            Statement::Batch(batch) => modify::run_text_batch(self, batch, run).await,
            _ => ddl::run(self, &parsed.statement, run).await,
        }
    }
}

/// What an EXECUTE's Rows carry of their metadata (spec v5 §4.1.6, §4.2.5.2).
///
/// v5, SELECT: when the client's result metadata id is not that of the columns just read (the
/// table changed since it prepared), the full metadata goes out with Metadata_changed and the
/// new id, even if it asked to skip metadata; otherwise Skip_metadata is honoured. v5, a
/// conditional update's `[applied]` result: its columns depend on the outcome, so it always
/// carries its metadata and never Metadata_changed (as Cassandra does). v3/v4: Skip_metadata is
/// honoured as asked.
///
/// `metadata_id` is the result metadata id of the columns when the plan already has it.
fn settle_metadata(
    metadata: &mut RowsMetadata,
    execute: &Execute,
    version: Option<crate::frame::ProtocolVersion>,
    is_select: bool,
    metadata_id: Option<&Bytes>,
) {
    let v5 = version >= Some(crate::frame::ProtocolVersion::V5);
    if !v5 {
        if execute.parameters.skip_metadata {
            metadata.columns = None;
        }
        return;
    }
    if !is_select {
        return;
    }
    let current = match metadata_id {
        Some(id) => id.clone(),
        None => result_metadata_id(metadata.columns.as_deref()),
    };
    if execute.result_metadata_id.as_ref() != Some(&current) {
        metadata.new_metadata_id = Some(current);
    } else if execute.parameters.skip_metadata {
        metadata.columns = None;
    }
}

/// Which request bound the values, for the words of a wrong count.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// QUERY (and a BATCH's query strings).
    Query,
    /// EXECUTE (and a BATCH's prepared ids).
    Execute,
}

/// The values of a statement's markers in order. Named values (v3+ flag 0x40) are matched to
/// the markers' names as PREPARE describes them (`names`: a `?` is named after its column,
/// `:n` is `n`), exactly, as Cassandra's `QueryOptions.OptionsWithNames` does; a marker no
/// value names leaves the count short, which is refused as a wrong count.
fn bind_values(
    parsed: &ParsedStatement,
    values: &BoundValues,
    binding: Binding,
    names: impl FnOnce() -> Result<Vec<String>, ExecError>,
) -> Result<Vec<Value>, ExecError> {
    let expected = parsed.bind_markers.len();
    let ordered = match values {
        BoundValues::Positional(v) => v.clone(),
        BoundValues::Named(named) => names()?
            .iter()
            .filter_map(|marker| {
                named
                    .iter()
                    .find(|(name, _)| name == marker)
                    .map(|(_, v)| v.clone())
            })
            .collect(),
    };
    if ordered.len() != expected {
        return Err(ExecError::invalid(match binding {
            Binding::Query => "Invalid amount of bind variables".to_string(),
            Binding::Execute => format!(
                "there were {expected} markers(?) in CQL but {} bound variables",
                ordered.len()
            ),
        }));
    }
    Ok(ordered)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::ColumnType;

    fn spec(name: &str, column_type: ColumnType) -> ColumnSpec {
        ColumnSpec {
            keyspace: "ks".into(),
            table: "t".into(),
            name: name.into(),
            column_type,
        }
    }

    #[test]
    fn the_result_metadata_id_is_a_digest_of_the_columns() {
        let two = vec![spec("k", ColumnType::Int), spec("a", ColumnType::Varchar)];
        let id = result_metadata_id(Some(&two));
        assert_eq!(id.len(), 16);
        assert_eq!(id, result_metadata_id(Some(&two.clone())), "stable");
        let mut three = two.clone();
        three.push(spec("b", ColumnType::Int));
        assert_ne!(id, result_metadata_id(Some(&three)), "a column added");
        let mut retyped = two.clone();
        retyped[1].column_type = ColumnType::Blob;
        assert_ne!(id, result_metadata_id(Some(&retyped)), "a type changed");
        let mut renamed = two.clone();
        renamed[0].table = "u".into();
        assert_ne!(id, result_metadata_id(Some(&renamed)), "another table");
        // Field boundaries count: ("ab", "c") is not ("a", "bc").
        let mut a = spec("c", ColumnType::Int);
        a.table = "ab".into();
        let mut b = spec("bc", ColumnType::Int);
        b.table = "a".into();
        assert_ne!(
            result_metadata_id(Some(&[a])),
            result_metadata_id(Some(&[b]))
        );
        assert_eq!(result_metadata_id(None), result_metadata_id(Some(&[])));
    }
}
