//! Differential test against `scylla-cql` (the Rust driver's protocol crate): requests it
//! serializes decode with ours to the same values, and responses we encode parse with its
//! response deserialization to the same values.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    ColumnSpec, ColumnType, Compression, Consistency, DecoderConfig, ErrorBody, ErrorKind, Event,
    FrameDecoder, Prepared, PreparedMetadata, ProtocolVersion, Request, RequestFrame, Response,
    ResponseFrame, ResultBody, Rows, RowsMetadata, SchemaChange, SchemaChangeType, SchemaTarget,
    StatusChangeType, Value, WriteType,
};
use scylla_cql::frame::protocol_features::ProtocolFeatures;
use scylla_cql::frame::request::query::{PagingState, QueryParameters};
use scylla_cql::frame::request::{Options, Prepare, Query, Startup};
use scylla_cql::frame::response::result::{ColumnType as SColumnType, NativeType};
use scylla_cql::frame::response::{Response as SResponse, ResponseOpcode};
use scylla_cql::frame::types::SerialConsistency;
use scylla_cql::frame::{
    Compression as SCompression, SerializedRequest, parse_response_body_extensions,
};
use scylla_cql::serialize::row::SerializedValues;

fn decode_ours(bytes: &[u8], compression: Option<Compression>) -> RequestFrame {
    let mut decoder = FrameDecoder::new(DecoderConfig::default());
    decoder.set_compression(compression);
    let mut buf = BytesMut::from(bytes);
    let frame = decoder.decode(&mut buf).unwrap().expect("a whole frame");
    assert!(buf.is_empty());
    RequestFrame::decode(frame).unwrap()
}

fn scylla_query() -> Query<'static> {
    let mut values = SerializedValues::new();
    values
        .add_value(&42i32, &SColumnType::Native(NativeType::Int))
        .unwrap();
    values
        .add_value(&"hello", &SColumnType::Native(NativeType::Text))
        .unwrap();
    Query {
        contents: Cow::Borrowed("SELECT * FROM ks.t WHERE a = ? AND b = ?"),
        parameters: QueryParameters {
            consistency: scylla_cql::Consistency::LocalQuorum,
            serial_consistency: Some(SerialConsistency::LocalSerial),
            timestamp: Some(1_234_567),
            page_size: Some(5000),
            paging_state: PagingState::new_from_raw_bytes(&b"resume-here"[..]),
            skip_metadata: true,
            values: Cow::Owned(values),
        },
    }
}

#[test]
fn scylla_requests_decode_with_ours() {
    for (ours, theirs) in [
        (None, None),
        (Some(Compression::Lz4), Some(SCompression::Lz4)),
        (Some(Compression::Snappy), Some(SCompression::Snappy)),
    ] {
        let query = scylla_query();
        let mut req = SerializedRequest::make(&query, theirs, true).unwrap();
        req.set_stream(17);
        let decoded = decode_ours(req.get_data(), ours);
        assert_eq!(decoded.stream, 17);
        assert!(decoded.tracing);
        let Request::Query(q) = decoded.request else {
            panic!("{decoded:?}")
        };
        assert_eq!(q.query, "SELECT * FROM ks.t WHERE a = ? AND b = ?");
        let p = q.parameters;
        assert_eq!(p.consistency, Consistency::LocalQuorum);
        assert_eq!(p.serial_consistency, Some(Consistency::LocalSerial));
        assert_eq!(p.default_timestamp, Some(1_234_567));
        assert_eq!(p.page_size, Some(5000));
        assert_eq!(p.paging_state.as_deref(), Some(&b"resume-here"[..]));
        assert!(p.skip_metadata);
        assert_eq!(
            p.values,
            khata_cql::frame::BoundValues::Positional(vec![
                Value::Set(Bytes::from_static(&[0, 0, 0, 42])),
                Value::Set(Bytes::from_static(b"hello")),
            ])
        );
    }

    let mut options = HashMap::new();
    options.insert(Cow::Borrowed("CQL_VERSION"), Cow::Borrowed("4.0.0"));
    options.insert(Cow::Borrowed("COMPRESSION"), Cow::Borrowed("lz4"));
    options.insert(
        Cow::Borrowed("DRIVER_NAME"),
        Cow::Borrowed("scylla-rust-driver"),
    );
    let req = SerializedRequest::make(&Startup { options }, None, false).unwrap();
    let Request::Startup(s) = decode_ours(req.get_data(), None).request else {
        panic!()
    };
    assert_eq!(s.cql_version, "4.0.0");
    assert_eq!(s.compression, Some(Compression::Lz4));
    assert_eq!(s.options["DRIVER_NAME"], "scylla-rust-driver");

    let req = SerializedRequest::make(&Options, None, false).unwrap();
    assert_eq!(decode_ours(req.get_data(), None).request, Request::Options);

    let req = SerializedRequest::make(&Prepare { query: "SELECT 1" }, None, false).unwrap();
    let Request::Prepare(p) = decode_ours(req.get_data(), None).request else {
        panic!()
    };
    assert_eq!(p.query, "SELECT 1");
    assert_eq!(p.keyspace, None);
}

/// Encodes `frame` with ours (v4) and parses it with scylla-cql.
fn parse_theirs(
    frame: &ResponseFrame,
    compression: Option<(Compression, SCompression)>,
) -> (Option<uuid::Uuid>, Vec<String>, SResponse) {
    let mut buf = BytesMut::new();
    frame
        .encode(ProtocolVersion::V4, compression.map(|c| c.0), &mut buf)
        .unwrap();
    assert_eq!(buf[0], 0x84);
    let flags = buf[1];
    let opcode = ResponseOpcode::try_from(buf[4]).unwrap();
    let body = Bytes::copy_from_slice(&buf[9..]);
    let ext = parse_response_body_extensions(flags, compression.map(|c| c.1), body).unwrap();
    let response =
        SResponse::deserialize(&ProtocolFeatures::default(), opcode, ext.body, None).unwrap();
    (ext.trace_id, ext.warnings, response)
}

fn debug_of(response: &Response) -> String {
    let (_, _, parsed) = parse_theirs(&ResponseFrame::new(1, response.clone()), None);
    format!("{parsed:?}")
}

#[test]
fn our_errors_parse_with_scylla() {
    let cases: Vec<(ErrorKind, &str)> = vec![
        (ErrorKind::ServerError, "ServerError"),
        (ErrorKind::ProtocolError, "ProtocolError"),
        (ErrorKind::AuthenticationError, "AuthenticationError"),
        (
            ErrorKind::Unavailable {
                consistency: Consistency::Quorum,
                required: 2,
                alive: 1,
            },
            "Unavailable { consistency: Quorum, required: 2, alive: 1 }",
        ),
        (ErrorKind::Overloaded, "Overloaded"),
        (ErrorKind::IsBootstrapping, "IsBootstrapping"),
        (ErrorKind::TruncateError, "TruncateError"),
        (
            ErrorKind::WriteTimeout {
                consistency: Consistency::One,
                received: 0,
                block_for: 1,
                write_type: WriteType::BatchLog,
                contentions: None,
            },
            "WriteTimeout { consistency: One, received: 0, required: 1, write_type: BatchLog }",
        ),
        (
            ErrorKind::ReadTimeout {
                consistency: Consistency::LocalOne,
                received: 1,
                block_for: 2,
                data_present: true,
            },
            "ReadTimeout { consistency: LocalOne, received: 1, required: 2, data_present: true }",
        ),
        (
            ErrorKind::ReadFailure {
                consistency: Consistency::All,
                received: 1,
                block_for: 3,
                failures: khata_cql::frame::Failures {
                    count: 2,
                    reasons: vec![],
                },
                data_present: false,
            },
            "ReadFailure { consistency: All, received: 1, required: 3, numfailures: 2, data_present: false }",
        ),
        (
            ErrorKind::FunctionFailure {
                keyspace: "ks".into(),
                function: "f".into(),
                arg_types: vec!["int".into()],
            },
            "FunctionFailure { keyspace: \"ks\", function: \"f\", arg_types: [\"int\"] }",
        ),
        (
            ErrorKind::WriteFailure {
                consistency: Consistency::Two,
                received: 1,
                block_for: 2,
                failures: khata_cql::frame::Failures {
                    count: 1,
                    reasons: vec![],
                },
                write_type: WriteType::Counter,
            },
            "WriteFailure { consistency: Two, received: 1, required: 2, numfailures: 1, write_type: Counter }",
        ),
        (ErrorKind::SyntaxError, "SyntaxError"),
        (ErrorKind::Unauthorized, "Unauthorized"),
        (ErrorKind::Invalid, "Invalid"),
        (ErrorKind::ConfigError, "ConfigError"),
        (
            ErrorKind::AlreadyExists {
                keyspace: "ks".into(),
                table: "t".into(),
            },
            "AlreadyExists { keyspace: \"ks\", table: \"t\" }",
        ),
        (
            ErrorKind::Unprepared {
                id: Bytes::from_static(&[1, 2, 3]),
            },
            "Unprepared { statement_id: b\"\\x01\\x02\\x03\" }",
        ),
    ];
    for (kind, expected) in cases {
        let debug = debug_of(&Response::Error(ErrorBody::new(kind, "the reason")));
        assert!(debug.contains(expected), "{expected} not in {debug}");
        assert!(debug.contains("the reason"), "{debug}");
    }
}

#[test]
fn our_results_and_events_parse_with_scylla() {
    assert!(matches!(
        parse_theirs(&ResponseFrame::new(1, Response::Ready), None).2,
        SResponse::Ready
    ));
    let debug = debug_of(&Response::Supported(vec![
        ("CQL_VERSION".into(), vec!["3.4.7".into()]),
        ("COMPRESSION".into(), vec!["lz4".into(), "snappy".into()]),
    ]));
    assert!(
        debug.contains("\"COMPRESSION\": [\"lz4\", \"snappy\"]"),
        "{debug}"
    );
    let debug = debug_of(&Response::Authenticate(
        "org.apache.cassandra.auth.PasswordAuthenticator".into(),
    ));
    assert!(debug.contains("PasswordAuthenticator"), "{debug}");
    assert!(debug_of(&Response::Result(ResultBody::Void)).contains("Void"));
    assert!(debug_of(&Response::Result(ResultBody::SetKeyspace("chat".into()))).contains("chat"));

    let change = SchemaChange {
        change: SchemaChangeType::Created,
        target: SchemaTarget::Table {
            keyspace: "ks".into(),
            table: "t".into(),
        },
    };
    let debug = debug_of(&Response::Result(ResultBody::SchemaChange(change.clone())));
    assert!(
        debug.contains("TableChange") && debug.contains("\"ks\""),
        "{debug}"
    );
    let debug = debug_of(&Response::Event(Event::SchemaChange(change)));
    assert!(debug.contains("TableChange"), "{debug}");
    let debug = debug_of(&Response::Event(Event::StatusChange {
        change: StatusChangeType::Up,
        address: "10.0.0.2:9042".parse().unwrap(),
    }));
    assert!(debug.contains("Up(10.0.0.2:9042)"), "{debug}");

    // Prepared with bind metadata and pk indexes.
    let spec = |name: &str, t: ColumnType| ColumnSpec {
        keyspace: "ks".into(),
        table: "t".into(),
        name: name.into(),
        column_type: t,
    };
    let prepared = Response::Result(ResultBody::Prepared(Prepared {
        id: Bytes::from_static(&[5; 16]),
        result_metadata_id: None,
        metadata: PreparedMetadata {
            pk_indexes: vec![1, 0],
            columns: vec![spec("a", ColumnType::Int), spec("b", ColumnType::Varchar)],
        },
        result_metadata: RowsMetadata::new(vec![spec(
            "m",
            ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Bigint)),
        )]),
    }));
    let (_, _, parsed) = parse_theirs(&ResponseFrame::new(1, prepared), None);
    let SResponse::Result(scylla_cql::frame::response::result::Result::Prepared(p)) = parsed else {
        panic!()
    };
    assert_eq!(&p.id[..], &[5; 16]);
    assert_eq!(p.prepared_metadata.pk_indexes.len(), 2);
    assert_eq!(p.prepared_metadata.col_specs.len(), 2);
    assert_eq!(p.prepared_metadata.col_specs[1].name(), "b");
}

#[test]
fn our_rows_parse_with_scylla_with_prefixes_and_compression() {
    let spec = |name: &str, t: ColumnType| ColumnSpec {
        keyspace: "ks".into(),
        table: "t".into(),
        name: name.into(),
        column_type: t,
    };
    let mut metadata = RowsMetadata::new(vec![
        spec("id", ColumnType::Int),
        spec("tags", ColumnType::Set(Box::new(ColumnType::Varchar))),
        spec("v", ColumnType::vector(&ColumnType::Float, 2)),
    ]);
    metadata.paging_state = Some(Bytes::from_static(b"more"));
    let rows = Rows::from_cells(
        metadata,
        &[
            vec![Some(Bytes::from_static(&[0, 0, 0, 7])), None, None],
            vec![Some(Bytes::from_static(&[0, 0, 0, 8])), None, None],
        ],
    )
    .unwrap();
    for compression in [
        None,
        Some((Compression::Lz4, SCompression::Lz4)),
        Some((Compression::Snappy, SCompression::Snappy)),
    ] {
        let mut frame = ResponseFrame::new(3, Response::Result(ResultBody::Rows(rows.clone())));
        frame.tracing_id = Some(uuid::Uuid::from_u128(99));
        frame.warnings = vec!["careful".into()];
        let (trace, warnings, parsed) = parse_theirs(&frame, compression);
        assert_eq!(trace, Some(uuid::Uuid::from_u128(99)));
        assert_eq!(warnings, vec!["careful".to_string()]);
        let SResponse::Result(scylla_cql::frame::response::result::Result::Rows((raw, paging))) =
            parsed
        else {
            panic!()
        };
        assert!(format!("{paging:?}").contains("HasMorePages"), "{paging:?}");
        let with_metadata = raw.deserialize_metadata().unwrap();
        assert_eq!(with_metadata.rows_count(), 2);
        let specs = with_metadata.metadata().col_specs();
        assert_eq!(specs.len(), 3);
        assert_eq!(specs[0].name(), "id");
        assert_eq!(specs[0].table_spec().ks_name(), "ks");
        assert!(
            format!("{:?}", specs[2].typ()).contains("Vector"),
            "{:?}",
            specs[2].typ()
        );
    }
}
