//! EVENT bodies (spec §4.2.6) and the schema change description they share with RESULT kind
//! Schema_change (§4.2.5.5).
//!
//! Events go out on stream -1 to connections that REGISTERed for their type.

use std::net::SocketAddr;

use bytes::BytesMut;

use super::error::{EncodeError, WireError};
use super::wire::{WireReader, put_inet, put_string, put_string_list};

/// What happened to a schema object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaChangeType {
    /// `CREATED`
    Created,
    /// `UPDATED`
    Updated,
    /// `DROPPED`
    Dropped,
}

/// Which schema object changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaTarget {
    /// `KEYSPACE`
    Keyspace {
        /// The keyspace.
        keyspace: String,
    },
    /// `TABLE` (also used for index changes, which change their table)
    Table {
        /// The keyspace.
        keyspace: String,
        /// The table.
        table: String,
    },
    /// `TYPE`
    Type {
        /// The keyspace.
        keyspace: String,
        /// The user type.
        name: String,
    },
    /// `FUNCTION`
    Function {
        /// The keyspace.
        keyspace: String,
        /// The function.
        name: String,
        /// Argument types as CQL type strings.
        arg_types: Vec<String>,
    },
    /// `AGGREGATE`
    Aggregate {
        /// The keyspace.
        keyspace: String,
        /// The aggregate.
        name: String,
        /// Argument types as CQL type strings.
        arg_types: Vec<String>,
    },
}

/// A schema change: `<change_type><target><options>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// Created, updated or dropped.
    pub change: SchemaChangeType,
    /// What changed.
    pub target: SchemaTarget,
}

impl SchemaChange {
    /// Writes `<change_type><target><options>`.
    pub fn write(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let change = match self.change {
            SchemaChangeType::Created => "CREATED",
            SchemaChangeType::Updated => "UPDATED",
            SchemaChangeType::Dropped => "DROPPED",
        };
        put_string(out, "change type", change)?;
        match &self.target {
            SchemaTarget::Keyspace { keyspace } => {
                put_string(out, "target", "KEYSPACE")?;
                put_string(out, "keyspace", keyspace)?;
            }
            SchemaTarget::Table { keyspace, table } => {
                put_string(out, "target", "TABLE")?;
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "table", table)?;
            }
            SchemaTarget::Type { keyspace, name } => {
                put_string(out, "target", "TYPE")?;
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "type", name)?;
            }
            SchemaTarget::Function {
                keyspace,
                name,
                arg_types,
            } => {
                put_string(out, "target", "FUNCTION")?;
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "function", name)?;
                put_string_list(out, "argument types", arg_types)?;
            }
            SchemaTarget::Aggregate {
                keyspace,
                name,
                arg_types,
            } => {
                put_string(out, "target", "AGGREGATE")?;
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "aggregate", name)?;
                put_string_list(out, "argument types", arg_types)?;
            }
        }
        Ok(())
    }

    /// Reads `<change_type><target><options>`.
    pub fn read(r: &mut WireReader) -> Result<Self, WireError> {
        let change = match r.string("change type")?.as_str() {
            "CREATED" => SchemaChangeType::Created,
            "UPDATED" => SchemaChangeType::Updated,
            "DROPPED" => SchemaChangeType::Dropped,
            other => return Err(invalid("change type", other)),
        };
        let target = match r.string("target")?.as_str() {
            "KEYSPACE" => SchemaTarget::Keyspace {
                keyspace: r.string("keyspace")?,
            },
            "TABLE" => SchemaTarget::Table {
                keyspace: r.string("keyspace")?,
                table: r.string("table")?,
            },
            "TYPE" => SchemaTarget::Type {
                keyspace: r.string("keyspace")?,
                name: r.string("type")?,
            },
            "FUNCTION" => SchemaTarget::Function {
                keyspace: r.string("keyspace")?,
                name: r.string("function")?,
                arg_types: r.string_list("argument types")?,
            },
            "AGGREGATE" => SchemaTarget::Aggregate {
                keyspace: r.string("keyspace")?,
                name: r.string("aggregate")?,
                arg_types: r.string_list("argument types")?,
            },
            other => return Err(invalid("schema change target", other)),
        };
        Ok(SchemaChange { change, target })
    }
}

/// A topology change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyChangeType {
    /// `NEW_NODE`
    NewNode,
    /// `REMOVED_NODE`
    RemovedNode,
}

/// A node status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusChangeType {
    /// `UP`
    Up,
    /// `DOWN`
    Down,
}

/// An EVENT body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `TOPOLOGY_CHANGE`: a node joined or left.
    TopologyChange {
        /// What happened.
        change: TopologyChangeType,
        /// The node's native transport address.
        address: SocketAddr,
    },
    /// `STATUS_CHANGE`: a node went up or down.
    StatusChange {
        /// What happened.
        change: StatusChangeType,
        /// The node's native transport address.
        address: SocketAddr,
    },
    /// `SCHEMA_CHANGE`
    SchemaChange(SchemaChange),
}

impl Event {
    /// Writes the body.
    pub fn write(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        match self {
            Event::TopologyChange { change, address } => {
                put_string(out, "event type", "TOPOLOGY_CHANGE")?;
                let change = match change {
                    TopologyChangeType::NewNode => "NEW_NODE",
                    TopologyChangeType::RemovedNode => "REMOVED_NODE",
                };
                put_string(out, "topology change", change)?;
                put_inet(out, address);
            }
            Event::StatusChange { change, address } => {
                put_string(out, "event type", "STATUS_CHANGE")?;
                let change = match change {
                    StatusChangeType::Up => "UP",
                    StatusChangeType::Down => "DOWN",
                };
                put_string(out, "status change", change)?;
                put_inet(out, address);
            }
            Event::SchemaChange(change) => {
                put_string(out, "event type", "SCHEMA_CHANGE")?;
                change.write(out)?;
            }
        }
        Ok(())
    }

    /// Reads the body.
    pub fn read(r: &mut WireReader) -> Result<Self, WireError> {
        Ok(match r.string("event type")?.as_str() {
            "TOPOLOGY_CHANGE" => {
                let change = match r.string("topology change")?.as_str() {
                    "NEW_NODE" => TopologyChangeType::NewNode,
                    "REMOVED_NODE" => TopologyChangeType::RemovedNode,
                    other => return Err(invalid("topology change", other)),
                };
                Event::TopologyChange {
                    change,
                    address: r.inet("node address")?,
                }
            }
            "STATUS_CHANGE" => {
                let change = match r.string("status change")?.as_str() {
                    "UP" => StatusChangeType::Up,
                    "DOWN" => StatusChangeType::Down,
                    other => return Err(invalid("status change", other)),
                };
                Event::StatusChange {
                    change,
                    address: r.inet("node address")?,
                }
            }
            "SCHEMA_CHANGE" => Event::SchemaChange(SchemaChange::read(r)?),
            other => return Err(invalid("event type", other)),
        })
    }
}

fn invalid(what: &'static str, found: &str) -> WireError {
    WireError::Invalid {
        what,
        detail: found.to_string(),
    }
}
