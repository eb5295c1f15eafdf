//! The CQL native protocol's frames, server side, written from apache/cassandra's
//! `doc/native_protocol_v4.spec` and `doc/native_protocol_v5.spec`.
//!
//! Pure: bytes in, typed values out, and back; no sockets, no async. The connection task
//! appends what it reads to a `BytesMut` and asks a decoder for whole frames:
//!
//! 1. [`FrameDecoder`] (v3/v4, and the unframed v5 handshake) or, after a v5 STARTUP,
//!    [`FramedDecoder`] (v5 checksummed segments) yields a [`Frame`], or `Ok(None)` until one
//!    is whole, or a [`FrameError`] carrying the stream to answer on.
//! 2. [`RequestFrame::decode`] turns the frame into a typed [`Request`].
//! 3. The server answers with a [`ResponseFrame`], encoded by [`ResponseFrame::encode`]
//!    (wrapped by a [`SegmentWriter`] in v5); a [`FrameError`] is answered with
//!    [`encode_frame_error`], which also produces the step-down error drivers need when they
//!    try a version we do not speak.
//!
//! Limits: `native_transport_max_frame_size` ([`DecoderConfig::max_frame_size_bytes`], 16 MiB
//! by default) is checked from the header before the body is buffered and again on the
//! declared decompressed length; counts read from the wire never reserve more memory than the
//! body could hold; type nesting is bounded. No input can make the decoders panic (fuzzed in
//! `tests/frame_fuzz.rs`).
//!
//! Not here: the connection state machine (which version is pinned, when compression and v5
//! framing switch on), executing requests, and serializing CQL values: those belong to the
//! server and the executor.

mod compression;
mod decoder;
mod error;
mod error_body;
mod event;
mod header;
mod query;
mod request;
mod response;
mod result;
mod segment;
mod types;
mod wire;

pub use compression::{Compression, DecompressError};
pub use decoder::{DEFAULT_MAX_FRAME_SIZE_BYTES, DecoderConfig, Frame, FrameDecoder};
pub use error::{EncodeError, FrameError, SegmentError, WireError};
pub use error_body::{ErrorBody, ErrorKind, Failures, WriteType};
pub use event::{
    Event, SchemaChange, SchemaChangeType, SchemaTarget, StatusChangeType, TopologyChangeType,
};
pub use header::{
    FrameFlags, FrameHeader, HEADER_LEN, Opcode, ProtocolVersion, RESPONSE_BIT, legacy_stream,
    modern_stream,
};
pub use query::{Batch, BatchStatement, BatchType, BoundValues, Execute, Query, QueryParameters};
pub use request::{COMPRESSION, CQL_VERSION, EventType, Prepare, Request, RequestFrame, Startup};
pub use response::{Response, ResponseFrame, encode_frame_error};
pub use result::{ColumnSpec, Prepared, PreparedMetadata, ResultBody, Rows, RowsMetadata};
pub use segment::{
    FramedDecoder, MAX_SEGMENT_PAYLOAD, Segment, SegmentDecoder, SegmentWriter, crc24,
    encode_segment, payload_crc32,
};
pub use types::{ColumnType, MAX_TYPE_DEPTH};
pub use wire::{
    BytesMap, Consistency, StringMap, StringMultimap, Value, WireReader, put_bytes, put_bytes_map,
    put_consistency, put_count, put_inet, put_inetaddr, put_int_count, put_long_string,
    put_short_bytes, put_string, put_string_list, put_string_map, put_string_multimap, put_value,
};
