//! khata's DynamoDB front end (DESIGN.md §7): the DynamoDB JSON API on HTTP/1.1, on the same
//! coordinator and engine as CQL.
//!
//! - [`value`]: DynamoDB's attribute values (S, N, B, BOOL, NULL, M, L, SS, NS, BS) with their
//!   JSON wire form, validation, exact 38-digit numbers and item sizes.
//! - [`expr`]: condition, filter, key-condition, projection and update expressions: parser and
//!   evaluator, with `#names` and `:values`.
//! - [`http`]: the endpoint: `POST /` with `X-Amz-Target`, `x-amz-crc32`, request ids, errors
//!   in DynamoDB's shape, limits; [`http1`] its HTTP/1.1 connections; [`auth`] verifies SigV4
//!   when keys are configured.
//! - [`tables`]: DynamoDB tables stored as engine tables (one internal keyspace per table, as
//!   ScyllaDB's Alternator does), [`items`] items as rows of those tables, [`indexes`] their
//!   global and local secondary indexes, and [`ops`] the operations; [`batch`] and
//!   [`transact`] the operations on several items, [`item_writes`] the one hook every batch and
//!   transaction write goes through, [`capacity`] the capacity units of
//!   `ReturnConsumedCapacity`; [`partiql`] PartiQL statements, translated to those operations;
//!   [`streams`] DynamoDB Streams and [`expirer`] the TTL expirer.

pub mod auth;
pub mod batch;
pub mod capacity;
pub mod collections;
pub mod error;
pub mod expirer;
pub mod expr;
pub mod http;
pub mod http1;
pub mod indexes;
pub mod item_ops;
pub mod item_writes;
pub mod items;
pub mod ops;
pub mod partiql;
pub mod reply;
pub mod streams;
pub mod tables;
pub mod transact;
pub mod value;
