//! khata's CQL front end (DESIGN.md §6).
//!
//! - [`frame`]: the CQL native protocol's frames (v3, v4; v5 framing), written from
//!   `doc/native_protocol_v4.spec` and `v5.spec` (apache/cassandra): headers, the message
//!   bodies a server decodes and encodes, compression, limits. Pure: bytes in, values out.
//! - [`language`]: the CQL lexer and recursive-descent parser (apache/cassandra
//!   `src/antlr/Parser.g` is the reference grammar).
//!
//! The server, the statements' execution and the system tables come on top of these, through
//! the coordinator layer.

pub mod exec;
pub mod frame;
pub mod language;
pub mod server;
pub mod value;
