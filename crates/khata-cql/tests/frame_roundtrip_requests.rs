//! Every request type encodes and decodes back to itself, in each protocol version it exists
//! in, with and without body compression.

use std::collections::HashMap;

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    Batch, BatchStatement, BatchType, BoundValues, Compression, Consistency, DecoderConfig,
    EventType, Execute, FrameDecoder, Prepare, ProtocolVersion, Query, QueryParameters, Request,
    RequestFrame, Startup, Value,
};

fn params(version: ProtocolVersion) -> QueryParameters {
    let unset = version >= ProtocolVersion::V4;
    let mut values = vec![
        Value::Set(Bytes::from_static(b"\x00\x00\x00\x07")),
        Value::Null,
    ];
    if unset {
        values.push(Value::NotSet);
    }
    QueryParameters {
        consistency: Consistency::LocalQuorum,
        values: BoundValues::Positional(values),
        skip_metadata: true,
        page_size: Some(5000),
        paging_state: Some(Bytes::from_static(b"page-2")),
        serial_consistency: Some(Consistency::LocalSerial),
        default_timestamp: Some(1_700_000_000_000_000),
        keyspace: (version >= ProtocolVersion::V5).then(|| "chat".to_string()),
        now_in_seconds: (version >= ProtocolVersion::V5).then_some(1_700_000_000),
    }
}

fn requests(version: ProtocolVersion) -> Vec<Request> {
    let mut options = HashMap::new();
    options.insert("DRIVER_NAME".to_string(), "test".to_string());
    // Decoding keeps every option as sent, the two it parses included.
    options.insert("CQL_VERSION".to_string(), "3.0.0".to_string());
    options.insert("COMPRESSION".to_string(), "lz4".to_string());
    let mut named = QueryParameters::new(Consistency::One);
    named.values = BoundValues::Named(vec![
        ("id".to_string(), Value::Set(Bytes::from_static(b"abc"))),
        ("body".to_string(), Value::Null),
    ]);
    vec![
        Request::Options,
        Request::Startup(Startup {
            cql_version: "3.0.0".into(),
            compression: Some(Compression::Lz4),
            options,
        }),
        Request::AuthResponse(Some(Bytes::from_static(b"\0cassandra\0cassandra"))),
        Request::AuthResponse(None),
        Request::Query(Query {
            query: "SELECT * FROM system.local WHERE key = ?".into(),
            parameters: params(version),
        }),
        Request::Query(Query {
            query: "INSERT INTO t (id, body) VALUES (:id, :body)".into(),
            parameters: named,
        }),
        Request::Query(Query {
            query: String::new(),
            parameters: QueryParameters::new(Consistency::Any),
        }),
        Request::Prepare(Prepare {
            query: "SELECT * FROM t WHERE id = ?".into(),
            keyspace: (version >= ProtocolVersion::V5).then(|| "ks".to_string()),
        }),
        Request::Execute(Execute {
            id: Bytes::from_static(&[0xAB; 16]),
            result_metadata_id: (version >= ProtocolVersion::V5)
                .then(|| Bytes::from_static(&[0xCD; 16])),
            parameters: params(version),
        }),
        Request::Batch(Batch {
            batch_type: BatchType::Unlogged,
            statements: vec![
                BatchStatement::Query {
                    query: "INSERT INTO t (a) VALUES (?)".into(),
                    values: BoundValues::Positional(vec![Value::Set(Bytes::from_static(b"x"))]),
                },
                BatchStatement::Prepared {
                    id: Bytes::from_static(b"prepared-id"),
                    values: BoundValues::Positional(vec![Value::Null]),
                },
            ],
            consistency: Consistency::Quorum,
            serial_consistency: Some(Consistency::Serial),
            default_timestamp: Some(42),
            keyspace: (version >= ProtocolVersion::V5).then(|| "ks".to_string()),
            now_in_seconds: (version >= ProtocolVersion::V5).then_some(7),
        }),
        Request::Batch(Batch {
            batch_type: BatchType::Logged,
            statements: Vec::new(),
            consistency: Consistency::One,
            serial_consistency: None,
            default_timestamp: None,
            keyspace: None,
            now_in_seconds: None,
        }),
        Request::Register(vec![
            EventType::TopologyChange,
            EventType::StatusChange,
            EventType::SchemaChange,
        ]),
    ]
}

fn round_trip(version: ProtocolVersion, compression: Option<Compression>) {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        accept_v5: true,
        ..DecoderConfig::default()
    });
    decoder.set_compression(compression);
    for (i, request) in requests(version).into_iter().enumerate() {
        let frame = RequestFrame {
            version,
            stream: i as i16,
            tracing: i % 2 == 0,
            custom_payload: (version >= ProtocolVersion::V4 && i % 3 == 0)
                .then(|| vec![("k".to_string(), Some(Bytes::from_static(b"v")))]),
            request,
        };
        let mut buf = BytesMut::new();
        frame.encode(compression, &mut buf).unwrap();
        let decoded = decoder.decode(&mut buf).unwrap().expect("a whole frame");
        assert!(buf.is_empty());
        let decoded = RequestFrame::decode(decoded).unwrap();
        assert_eq!(decoded, frame, "{version:?} {compression:?}");
    }
}

#[test]
fn every_request_round_trips_in_v3_v4_v5() {
    for version in [
        ProtocolVersion::V3,
        ProtocolVersion::V4,
        ProtocolVersion::V5,
    ] {
        round_trip(version, None);
    }
}

#[test]
fn every_request_round_trips_compressed() {
    for version in [ProtocolVersion::V3, ProtocolVersion::V4] {
        round_trip(version, Some(Compression::Lz4));
        round_trip(version, Some(Compression::Snappy));
    }
}

#[test]
fn startup_without_cql_version_is_a_body_error_on_its_stream() {
    let mut body = BytesMut::new();
    khata_cql::frame::put_string_map(&mut body, "options", &HashMap::new()).unwrap();
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0x04, 0x00, 0x00, 0x05, 0x01]);
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&body);
    let frame = FrameDecoder::new(DecoderConfig::default())
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    let err = RequestFrame::decode(frame).unwrap_err();
    assert_eq!(err.stream(), Some(5));
    assert!(err.to_string().contains("CQL_VERSION"), "{err}");
}

#[test]
fn unset_value_is_refused_in_v3() {
    let mut p = QueryParameters::new(Consistency::One);
    p.values = BoundValues::Positional(vec![Value::Set(Bytes::new())]);
    let frame = RequestFrame {
        version: ProtocolVersion::V4,
        stream: 1,
        tracing: false,
        custom_payload: None,
        request: Request::Query(Query {
            query: "x".into(),
            parameters: p,
        }),
    };
    let mut buf = BytesMut::new();
    frame.encode(None, &mut buf).unwrap();
    // Rewrite the one value's length to -2 (not set) and the version to 3.
    let len = buf.len();
    buf[len - 4..].copy_from_slice(&(-2i32).to_be_bytes());
    buf[0] = 0x03;
    let decoded = FrameDecoder::new(DecoderConfig::default())
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert!(RequestFrame::decode(decoded).is_err());
}
