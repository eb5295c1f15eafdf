//! RESULT bodies (spec §4.2.5): Void, Rows, Set_keyspace, Prepared, Schema_change.
//!
//! Rows are `<metadata><rows_count><rows_content>`. The metadata's column specs are written
//! with the Global_tables_spec flag whenever every column belongs to the same table (what
//! Cassandra does, and what keeps results small); No_metadata answers Skip_metadata;
//! Has_more_pages carries the paging state; Metadata_changed (v5) carries a new metadata id.
//!
//! The rows themselves are kept serialized ([`Rows::content`]: `rows_count * columns_count`
//! [bytes]) so the executor can write cells straight into the response without building a
//! tree of values; [`Rows::from_cells`] and [`Rows::cells`] convert for tests and small results.

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{EncodeError, WireError};
use super::event::SchemaChange;
use super::header::ProtocolVersion;
use super::types::ColumnType;
use super::wire::{WireReader, put_bytes, put_int_count, put_short_bytes, put_string};

const GLOBAL_TABLES_SPEC: i32 = 0x0001;
const HAS_MORE_PAGES: i32 = 0x0002;
const NO_METADATA: i32 = 0x0004;
const METADATA_CHANGED: i32 = 0x0008;

/// One column of a result or one bind marker of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The keyspace of the column's table.
    pub keyspace: String,
    /// The table.
    pub table: String,
    /// The column name, alias, or bind marker name.
    pub name: String,
    /// The type.
    pub column_type: ColumnType,
}

/// `<metadata>` of a Rows result (and `<result_metadata>` of a Prepared result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsMetadata {
    /// Columns per row.
    pub column_count: usize,
    /// The column specs; `None` sends No_metadata (column count only).
    pub columns: Option<Vec<ColumnSpec>>,
    /// The paging state when more pages follow (Has_more_pages).
    pub paging_state: Option<Bytes>,
    /// A new result metadata id when it changed (v5 Metadata_changed).
    pub new_metadata_id: Option<Bytes>,
}

impl RowsMetadata {
    /// Metadata describing `columns`.
    pub fn new(columns: Vec<ColumnSpec>) -> Self {
        RowsMetadata {
            column_count: columns.len(),
            columns: Some(columns),
            paging_state: None,
            new_metadata_id: None,
        }
    }

    /// No_metadata with `column_count` columns.
    pub fn no_metadata(column_count: usize) -> Self {
        RowsMetadata {
            column_count,
            columns: None,
            paging_state: None,
            new_metadata_id: None,
        }
    }

    /// Writes `<metadata>`.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        let mut flags = 0;
        let global = self.columns.as_deref().and_then(global_spec);
        if let Some(columns) = &self.columns {
            if columns.len() != self.column_count {
                return Err(EncodeError::Invalid {
                    what: "rows metadata",
                    detail: format!(
                        "{} column specs for {} columns",
                        columns.len(),
                        self.column_count
                    ),
                });
            }
            if global.is_some() {
                flags |= GLOBAL_TABLES_SPEC;
            }
        } else {
            flags |= NO_METADATA;
        }
        if self.paging_state.is_some() {
            flags |= HAS_MORE_PAGES;
        }
        if self.new_metadata_id.is_some() {
            if version < ProtocolVersion::V5 || self.columns.is_none() {
                return Err(EncodeError::Invalid {
                    what: "rows metadata",
                    detail: "Metadata_changed needs v5 and column specs".into(),
                });
            }
            flags |= METADATA_CHANGED;
        }
        out.put_i32(flags);
        put_int_count(out, "column count", self.column_count)?;
        if let Some(state) = &self.paging_state {
            put_bytes(out, "paging state", Some(state))?;
        }
        if let Some(id) = &self.new_metadata_id {
            put_short_bytes(out, "new metadata id", id)?;
        }
        if let Some(columns) = &self.columns {
            write_specs(out, columns, global, version)?;
        }
        Ok(())
    }

    /// Reads `<metadata>`.
    pub fn read(r: &mut WireReader) -> Result<Self, WireError> {
        let flags = r.int("metadata flags")?;
        let column_count = read_count(r, "column count")?;
        let paging_state = if flags & HAS_MORE_PAGES != 0 {
            r.bytes("paging state")?
        } else {
            None
        };
        let new_metadata_id = (flags & METADATA_CHANGED != 0)
            .then(|| r.short_bytes("new metadata id"))
            .transpose()?;
        let columns = if flags & NO_METADATA != 0 {
            None
        } else {
            Some(read_specs(
                r,
                column_count,
                flags & GLOBAL_TABLES_SPEC != 0,
            )?)
        };
        Ok(RowsMetadata {
            column_count,
            columns,
            paging_state,
            new_metadata_id,
        })
    }
}

/// The keyspace and table every spec shares, if they all share one.
fn global_spec(columns: &[ColumnSpec]) -> Option<(&str, &str)> {
    let first = columns.first()?;
    columns
        .iter()
        .all(|c| c.keyspace == first.keyspace && c.table == first.table)
        .then_some((first.keyspace.as_str(), first.table.as_str()))
}

fn write_specs(
    out: &mut BytesMut,
    columns: &[ColumnSpec],
    global: Option<(&str, &str)>,
    version: ProtocolVersion,
) -> Result<(), EncodeError> {
    if let Some((ks, table)) = global {
        put_string(out, "keyspace", ks)?;
        put_string(out, "table", table)?;
    }
    for c in columns {
        if global.is_none() {
            put_string(out, "keyspace", &c.keyspace)?;
            put_string(out, "table", &c.table)?;
        }
        put_string(out, "column name", &c.name)?;
        c.column_type.write_for(out, version)?;
    }
    Ok(())
}

fn read_specs(
    r: &mut WireReader,
    count: usize,
    global: bool,
) -> Result<Vec<ColumnSpec>, WireError> {
    let shared = if global {
        Some((r.string("keyspace")?, r.string("table")?))
    } else {
        None
    };
    let mut columns = Vec::with_capacity(count.min(r.remaining() / 4));
    for _ in 0..count {
        let (keyspace, table) = match &shared {
            Some((ks, t)) => (ks.clone(), t.clone()),
            None => (r.string("keyspace")?, r.string("table")?),
        };
        let name = r.string("column name")?;
        let column_type = ColumnType::read(r)?;
        columns.push(ColumnSpec {
            keyspace,
            table,
            name,
            column_type,
        });
    }
    Ok(columns)
}

fn read_count(r: &mut WireReader, what: &'static str) -> Result<usize, WireError> {
    let n = r.int(what)?;
    usize::try_from(n).map_err(|_| WireError::InvalidLength {
        what,
        length: i64::from(n),
    })
}

/// A Rows result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// The metadata.
    pub metadata: RowsMetadata,
    /// How many rows `content` holds.
    pub rows_count: usize,
    /// The rows, serialized: `rows_count * column_count` [bytes].
    pub content: Bytes,
}

impl Rows {
    /// Rows from cells (`None` is null).
    pub fn from_cells(
        metadata: RowsMetadata,
        rows: &[Vec<Option<Bytes>>],
    ) -> Result<Self, EncodeError> {
        let mut content = BytesMut::new();
        for row in rows {
            if row.len() != metadata.column_count {
                return Err(EncodeError::Invalid {
                    what: "row",
                    detail: format!("{} cells for {} columns", row.len(), metadata.column_count),
                });
            }
            for cell in row {
                put_bytes(&mut content, "cell", cell.as_deref())?;
            }
        }
        Ok(Rows {
            metadata,
            rows_count: rows.len(),
            content: content.freeze(),
        })
    }

    /// The cells of every row.
    pub fn cells(&self) -> Result<Vec<Vec<Option<Bytes>>>, WireError> {
        let mut r = WireReader::new(self.content.clone());
        let per_row = self.metadata.column_count;
        // Each cell takes at least its 4-byte length.
        let mut rows = Vec::with_capacity(self.rows_count.min(r.remaining() / 4 + 1));
        for _ in 0..self.rows_count {
            let mut row = Vec::with_capacity(per_row.min(r.remaining() / 4));
            for _ in 0..per_row {
                row.push(r.bytes("cell")?);
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

/// The bind-marker metadata of a Prepared result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedMetadata {
    /// For each partition key column in order, the index of its bind marker (empty when some
    /// partition key column has no marker).
    pub pk_indexes: Vec<u16>,
    /// The bind markers.
    pub columns: Vec<ColumnSpec>,
}

/// A Prepared result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The prepared statement id.
    pub id: Bytes,
    /// The result metadata id (v5; written as empty when absent).
    pub result_metadata_id: Option<Bytes>,
    /// The bind markers.
    pub metadata: PreparedMetadata,
    /// What executing it returns (No_metadata with 0 columns for non-SELECTs).
    pub result_metadata: RowsMetadata,
}

/// A RESULT body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBody {
    /// 0x0001
    Void,
    /// 0x0002
    Rows(Rows),
    /// 0x0003: the keyspace USE switched to.
    SetKeyspace(String),
    /// 0x0004
    Prepared(Prepared),
    /// 0x0005
    SchemaChange(SchemaChange),
}

impl ResultBody {
    /// Writes the body.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        match self {
            ResultBody::Void => out.put_i32(0x0001),
            ResultBody::Rows(rows) => {
                out.put_i32(0x0002);
                rows.metadata.write(out, version)?;
                put_int_count(out, "rows count", rows.rows_count)?;
                out.put_slice(&rows.content);
            }
            ResultBody::SetKeyspace(ks) => {
                out.put_i32(0x0003);
                put_string(out, "keyspace", ks)?;
            }
            ResultBody::Prepared(p) => {
                out.put_i32(0x0004);
                put_short_bytes(out, "prepared id", &p.id)?;
                if version >= ProtocolVersion::V5 {
                    let id = p.result_metadata_id.as_deref().unwrap_or_default();
                    put_short_bytes(out, "result metadata id", id)?;
                }
                let global = global_spec(&p.metadata.columns);
                out.put_i32(if global.is_some() {
                    GLOBAL_TABLES_SPEC
                } else {
                    0
                });
                put_int_count(out, "bind marker count", p.metadata.columns.len())?;
                // The partition key indexes came with v4.
                if version >= ProtocolVersion::V4 {
                    put_int_count(out, "pk count", p.metadata.pk_indexes.len())?;
                    for i in &p.metadata.pk_indexes {
                        out.put_u16(*i);
                    }
                }
                write_specs(out, &p.metadata.columns, global, version)?;
                p.result_metadata.write(out, version)?;
            }
            ResultBody::SchemaChange(change) => {
                out.put_i32(0x0005);
                change.write(out)?;
            }
        }
        Ok(())
    }

    /// Reads the body.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        Ok(match r.int("result kind")? {
            0x0001 => ResultBody::Void,
            0x0002 => {
                let metadata = RowsMetadata::read(r)?;
                let rows_count = read_count(r, "rows count")?;
                let content = std::mem::replace(r, WireReader::new(Bytes::new())).into_rest();
                ResultBody::Rows(Rows {
                    metadata,
                    rows_count,
                    content,
                })
            }
            0x0003 => ResultBody::SetKeyspace(r.string("keyspace")?),
            0x0004 => {
                let id = r.short_bytes("prepared id")?;
                let result_metadata_id = (version >= ProtocolVersion::V5)
                    .then(|| r.short_bytes("result metadata id"))
                    .transpose()?;
                let flags = r.int("prepared flags")?;
                let count = read_count(r, "bind marker count")?;
                let pk_count = if version >= ProtocolVersion::V4 {
                    read_count(r, "pk count")?
                } else {
                    0
                };
                let mut pk_indexes = Vec::with_capacity(pk_count.min(r.remaining() / 2));
                for _ in 0..pk_count {
                    pk_indexes.push(r.short("pk index")?);
                }
                let columns = read_specs(r, count, flags & GLOBAL_TABLES_SPEC != 0)?;
                let result_metadata = RowsMetadata::read(r)?;
                ResultBody::Prepared(Prepared {
                    id,
                    result_metadata_id,
                    metadata: PreparedMetadata {
                        pk_indexes,
                        columns,
                    },
                    result_metadata,
                })
            }
            0x0005 => ResultBody::SchemaChange(SchemaChange::read(r)?),
            other => {
                return Err(WireError::Invalid {
                    what: "result kind",
                    detail: format!("0x{other:04X}"),
                });
            }
        })
    }
}
