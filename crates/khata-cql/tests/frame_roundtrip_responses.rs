//! Every response type encodes and decodes back to itself: every ERROR code with its fields,
//! every RESULT kind, every EVENT, and the frame prefixes (tracing id, warnings, payload).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    ColumnSpec, ColumnType, Compression, Consistency, ErrorBody, ErrorKind, Event, Failures,
    Prepared, PreparedMetadata, ProtocolVersion, Response, ResponseFrame, ResultBody, Rows,
    RowsMetadata, SchemaChange, SchemaChangeType, SchemaTarget, StatusChangeType,
    TopologyChangeType, WriteType,
};
use uuid::Uuid;

fn spec(table: &str, name: &str, column_type: ColumnType) -> ColumnSpec {
    ColumnSpec {
        keyspace: "chat".into(),
        table: table.into(),
        name: name.into(),
        column_type,
    }
}

fn all_types() -> Vec<ColumnSpec> {
    let udt = ColumnType::Udt {
        keyspace: "chat".into(),
        name: "address".into(),
        fields: vec![
            ("street".into(), ColumnType::Varchar),
            ("zip".into(), ColumnType::Int),
        ],
    };
    vec![
        spec("t", "a", ColumnType::Ascii),
        spec("t", "b", ColumnType::Bigint),
        spec("t", "c", ColumnType::Blob),
        spec("t", "d", ColumnType::Boolean),
        spec("t", "e", ColumnType::Counter),
        spec("t", "f", ColumnType::Decimal),
        spec("t", "g", ColumnType::Double),
        spec("t", "h", ColumnType::Float),
        spec("t", "i", ColumnType::Int),
        spec("t", "j", ColumnType::Timestamp),
        spec("t", "k", ColumnType::Uuid),
        spec("t", "l", ColumnType::Varchar),
        spec("t", "m", ColumnType::Varint),
        spec("t", "n", ColumnType::Timeuuid),
        spec("t", "o", ColumnType::Inet),
        spec("t", "p", ColumnType::Date),
        spec("t", "q", ColumnType::Time),
        spec("t", "r", ColumnType::Smallint),
        spec("t", "s", ColumnType::Tinyint),
        spec("t", "t", ColumnType::Duration),
        spec("t", "u", ColumnType::List(Box::new(ColumnType::Int))),
        spec("t", "v", ColumnType::Set(Box::new(ColumnType::Varchar))),
        spec(
            "t",
            "w",
            ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(udt.clone())),
        ),
        spec("t", "x", udt),
        spec(
            "t",
            "y",
            ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Blob]),
        ),
        spec("t", "z", ColumnType::vector(&ColumnType::Float, 3)),
    ]
}

fn errors(version: ProtocolVersion) -> Vec<ErrorBody> {
    let v5 = version >= ProtocolVersion::V5;
    let failures = if v5 {
        Failures {
            count: 2,
            reasons: vec![
                (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 1),
                ("::1".parse().unwrap(), 0),
            ],
        }
    } else {
        Failures {
            count: 2,
            reasons: Vec::new(),
        }
    };
    let kinds = vec![
        ErrorKind::ServerError,
        ErrorKind::ProtocolError,
        ErrorKind::AuthenticationError,
        ErrorKind::Unavailable {
            consistency: Consistency::Quorum,
            required: 2,
            alive: 1,
        },
        ErrorKind::Overloaded,
        ErrorKind::IsBootstrapping,
        ErrorKind::TruncateError,
        ErrorKind::WriteTimeout {
            consistency: Consistency::One,
            received: 0,
            block_for: 1,
            write_type: WriteType::Simple,
            contentions: None,
        },
        ErrorKind::WriteTimeout {
            consistency: Consistency::Serial,
            received: 0,
            block_for: 1,
            write_type: WriteType::Cas,
            contentions: v5.then_some(3),
        },
        ErrorKind::ReadTimeout {
            consistency: Consistency::LocalOne,
            received: 1,
            block_for: 1,
            data_present: false,
        },
        ErrorKind::ReadFailure {
            consistency: Consistency::All,
            received: 1,
            block_for: 3,
            failures: failures.clone(),
            data_present: true,
        },
        ErrorKind::FunctionFailure {
            keyspace: "ks".into(),
            function: "f".into(),
            arg_types: vec!["int".into(), "text".into()],
        },
        ErrorKind::WriteFailure {
            consistency: Consistency::Two,
            received: 1,
            block_for: 2,
            failures,
            write_type: WriteType::UnloggedBatch,
        },
        ErrorKind::CdcWriteFailure,
        ErrorKind::CasWriteUnknown {
            consistency: Consistency::Serial,
            received: 1,
            block_for: 2,
        },
        ErrorKind::SyntaxError,
        ErrorKind::Unauthorized,
        ErrorKind::Invalid,
        ErrorKind::ConfigError,
        ErrorKind::AlreadyExists {
            keyspace: "ks".into(),
            table: String::new(),
        },
        ErrorKind::Unprepared {
            id: Bytes::from_static(&[1, 2, 3]),
        },
    ];
    // An older version gets another error for the codes it does not have (tested below).
    kinds
        .into_iter()
        .filter(|k| match k {
            ErrorKind::ReadFailure { .. }
            | ErrorKind::FunctionFailure { .. }
            | ErrorKind::WriteFailure { .. }
            | ErrorKind::CdcWriteFailure => version >= ProtocolVersion::V4,
            ErrorKind::CasWriteUnknown { .. } => v5,
            _ => true,
        })
        .map(|k| ErrorBody::new(k, "something happened"))
        .collect()
}

fn responses(version: ProtocolVersion) -> Vec<Response> {
    let mut out: Vec<Response> = errors(version).into_iter().map(Response::Error).collect();
    let columns = all_types();
    let mut paged = RowsMetadata::new(columns.clone());
    paged.paging_state = Some(Bytes::from_static(b"next"));
    let rows = Rows::from_cells(
        RowsMetadata::new(vec![
            spec("t", "id", ColumnType::Int),
            spec("u", "name", ColumnType::Varchar),
        ]),
        &[
            vec![Some(Bytes::from_static(&[0, 0, 0, 1])), None],
            vec![
                Some(Bytes::from_static(&[0, 0, 0, 2])),
                Some(Bytes::from_static(b"bo")),
            ],
        ],
    )
    .unwrap();
    out.extend([
        Response::Ready,
        Response::Authenticate("org.apache.cassandra.auth.PasswordAuthenticator".into()),
        Response::Supported(vec![
            ("CQL_VERSION".into(), vec!["3.4.7".into()]),
            ("COMPRESSION".into(), vec!["lz4".into(), "snappy".into()]),
            (
                "PROTOCOL_VERSIONS".into(),
                vec!["3/v3".into(), "4/v4".into()],
            ),
        ]),
        Response::Result(ResultBody::Void),
        Response::Result(ResultBody::Rows(rows)),
        Response::Result(ResultBody::Rows(Rows::from_cells(paged, &[]).unwrap())),
        Response::Result(ResultBody::Rows(
            Rows::from_cells(RowsMetadata::no_metadata(2), &[vec![None, None]]).unwrap(),
        )),
        Response::Result(ResultBody::SetKeyspace("chat".into())),
        Response::Result(ResultBody::Prepared(Prepared {
            id: Bytes::from_static(&[9; 16]),
            result_metadata_id: (version >= ProtocolVersion::V5)
                .then(|| Bytes::from_static(&[8; 16])),
            metadata: PreparedMetadata {
                // v3's prepared metadata has no partition key indexes.
                pk_indexes: if version >= ProtocolVersion::V4 {
                    vec![1, 0]
                } else {
                    vec![]
                },
                columns: vec![
                    spec("t", "b", ColumnType::Int),
                    spec("t", "a", ColumnType::Int),
                ],
            },
            result_metadata: RowsMetadata::new(columns),
        })),
        Response::Result(ResultBody::Prepared(Prepared {
            id: Bytes::from_static(&[7; 16]),
            result_metadata_id: (version >= ProtocolVersion::V5).then(Bytes::new),
            metadata: PreparedMetadata {
                pk_indexes: vec![],
                columns: vec![],
            },
            result_metadata: RowsMetadata::no_metadata(0),
        })),
        Response::AuthChallenge(Some(Bytes::from_static(b"challenge"))),
        Response::AuthSuccess(None),
    ]);
    if version >= ProtocolVersion::V5 {
        let mut changed = RowsMetadata::new(vec![spec("t", "a", ColumnType::Int)]);
        changed.new_metadata_id = Some(Bytes::from_static(b"new-id"));
        out.push(Response::Result(ResultBody::Rows(
            Rows::from_cells(changed, &[]).unwrap(),
        )));
    }
    let targets = [
        SchemaTarget::Keyspace {
            keyspace: "ks".into(),
        },
        SchemaTarget::Table {
            keyspace: "ks".into(),
            table: "t".into(),
        },
        SchemaTarget::Type {
            keyspace: "ks".into(),
            name: "ty".into(),
        },
        SchemaTarget::Function {
            keyspace: "ks".into(),
            name: "f".into(),
            arg_types: vec!["int".into()],
        },
        SchemaTarget::Aggregate {
            keyspace: "ks".into(),
            name: "agg".into(),
            arg_types: vec![],
        },
    ];
    for (i, target) in targets.into_iter().enumerate() {
        let change = SchemaChange {
            change: [
                SchemaChangeType::Created,
                SchemaChangeType::Updated,
                SchemaChangeType::Dropped,
            ][i % 3],
            target,
        };
        out.push(Response::Result(ResultBody::SchemaChange(change.clone())));
        out.push(Response::Event(Event::SchemaChange(change)));
    }
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 9042);
    out.extend([
        Response::Event(Event::TopologyChange {
            change: TopologyChangeType::NewNode,
            address: addr,
        }),
        Response::Event(Event::TopologyChange {
            change: TopologyChangeType::RemovedNode,
            address: "[::1]:9042".parse().unwrap(),
        }),
        Response::Event(Event::StatusChange {
            change: StatusChangeType::Up,
            address: addr,
        }),
        Response::Event(Event::StatusChange {
            change: StatusChangeType::Down,
            address: addr,
        }),
    ]);
    out
}

fn round_trip(version: ProtocolVersion, compression: Option<Compression>) {
    for (i, response) in responses(version).into_iter().enumerate() {
        let v4 = version >= ProtocolVersion::V4;
        let frame = ResponseFrame {
            stream: if matches!(response, Response::Event(_)) {
                -1
            } else {
                i as i16
            },
            tracing_id: (i % 2 == 0).then(|| Uuid::from_u128(i as u128 + 1)),
            warnings: if v4 && i % 3 == 0 {
                vec!["Aggregation query used without partition key".into()]
            } else {
                vec![]
            },
            custom_payload: (v4 && i % 4 == 0).then(|| {
                vec![
                    ("k".to_string(), None),
                    ("l".to_string(), Some(Bytes::new())),
                ]
            }),
            response,
        };
        let mut buf = BytesMut::new();
        frame.encode(version, compression, &mut buf).unwrap();
        let (header, decoded) = ResponseFrame::decode(&buf, compression, 1 << 24).unwrap();
        assert!(header.is_response);
        assert_eq!(header.version, version);
        assert_eq!(header.length as usize + 9, buf.len());
        assert_eq!(decoded, frame, "{version:?} {compression:?}");
    }
}

#[test]
fn every_response_round_trips_in_v3_v4_v5() {
    for version in [
        ProtocolVersion::V3,
        ProtocolVersion::V4,
        ProtocolVersion::V5,
    ] {
        round_trip(version, None);
    }
}

#[test]
fn every_response_round_trips_compressed() {
    for version in [ProtocolVersion::V3, ProtocolVersion::V4] {
        round_trip(version, Some(Compression::Lz4));
        round_trip(version, Some(Compression::Snappy));
    }
}

#[test]
fn warnings_are_dropped_for_v3_clients() {
    let mut frame = ResponseFrame::new(1, Response::Ready);
    frame.warnings = vec!["w".into()];
    let mut buf = BytesMut::new();
    frame.encode(ProtocolVersion::V3, None, &mut buf).unwrap();
    assert_eq!(&buf[..], &[0x83, 0, 0, 1, 0x02, 0, 0, 0, 0]);
}

#[test]
fn vector_is_sent_as_the_custom_vector_type() {
    assert_eq!(
        ColumnType::vector(&ColumnType::Float, 3),
        ColumnType::Custom(
            "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)"
                .into()
        )
    );
}

/// The error a client of an older version gets, as Cassandra's
/// `ErrorMessage.getBackwardsCompatibleException` chooses it.
#[test]
fn errors_an_older_version_lacks_are_sent_as_its_own() {
    let sent = |kind: ErrorKind, version: ProtocolVersion| {
        let frame = ResponseFrame {
            stream: 1,
            tracing_id: None,
            warnings: vec![],
            custom_payload: None,
            response: Response::Error(ErrorBody::new(kind, "it failed")),
        };
        let mut buf = BytesMut::new();
        frame.encode(version, None, &mut buf).unwrap();
        match ResponseFrame::decode(&buf, None, 1 << 24)
            .unwrap()
            .1
            .response
        {
            Response::Error(e) => e,
            other => panic!("{other:?}"),
        }
    };
    let failures = Failures {
        count: 1,
        reasons: Vec::new(),
    };
    let read_failure = ErrorKind::ReadFailure {
        consistency: Consistency::One,
        received: 0,
        block_for: 1,
        failures: failures.clone(),
        data_present: false,
    };
    assert_eq!(
        sent(read_failure.clone(), ProtocolVersion::V3),
        ErrorBody::new(
            ErrorKind::ReadTimeout {
                consistency: Consistency::One,
                received: 0,
                block_for: 1,
                data_present: false,
            },
            "Operation timed out - received only 0 responses."
        )
    );
    assert_eq!(
        sent(read_failure.clone(), ProtocolVersion::V4).kind,
        read_failure
    );
    let write_failure = ErrorKind::WriteFailure {
        consistency: Consistency::Quorum,
        received: 1,
        block_for: 2,
        failures,
        write_type: WriteType::Batch,
    };
    assert_eq!(
        sent(write_failure, ProtocolVersion::V3).kind,
        ErrorKind::WriteTimeout {
            consistency: Consistency::Quorum,
            received: 1,
            block_for: 2,
            write_type: WriteType::Batch,
            contentions: None,
        }
    );
    let function_failure = ErrorKind::FunctionFailure {
        keyspace: "system".into(),
        function: "fromjson".into(),
        arg_types: vec!["text".into()],
    };
    assert_eq!(
        sent(function_failure, ProtocolVersion::V3),
        ErrorBody::new(ErrorKind::Invalid, "ERROR FUNCTION_FAILURE: it failed")
    );
    let unknown = ErrorKind::CasWriteUnknown {
        consistency: Consistency::Serial,
        received: 0,
        block_for: 1,
    };
    assert_eq!(
        sent(unknown.clone(), ProtocolVersion::V4).kind,
        ErrorKind::WriteTimeout {
            consistency: Consistency::Serial,
            received: 0,
            block_for: 1,
            write_type: WriteType::Cas,
            contentions: None,
        }
    );
    assert_eq!(sent(unknown.clone(), ProtocolVersion::V5).kind, unknown);
}

/// `date`, `time`, `smallint` and `tinyint` have option ids from v4 and `duration` from v5:
/// an older version gets them as Custom types named by their marshal classes, nested ones
/// too, as Cassandra's `DataType` sends them.
#[test]
fn types_an_older_version_lacks_are_sent_as_custom() {
    let ids = |ty: &ColumnType, version: ProtocolVersion| {
        let mut out = BytesMut::new();
        ty.write_for(&mut out, version).unwrap();
        out.to_vec()
    };
    let custom = |class: &str| {
        let name = format!("org.apache.cassandra.db.marshal.{class}");
        let mut out = vec![0, 0];
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out
    };
    for (ty, class, since) in [
        (ColumnType::Date, "SimpleDateType", ProtocolVersion::V4),
        (ColumnType::Time, "TimeType", ProtocolVersion::V4),
        (ColumnType::Smallint, "ShortType", ProtocolVersion::V4),
        (ColumnType::Tinyint, "ByteType", ProtocolVersion::V4),
        (ColumnType::Duration, "DurationType", ProtocolVersion::V5),
    ] {
        for version in [
            ProtocolVersion::V3,
            ProtocolVersion::V4,
            ProtocolVersion::V5,
        ] {
            let expected = if version >= since {
                ids(&ty, ProtocolVersion::V5)
            } else {
                custom(class)
            };
            assert_eq!(ids(&ty, version), expected, "{ty:?} {version:?}");
        }
    }
    let mut list_of_durations = vec![0x00, 0x20];
    list_of_durations.extend(custom("DurationType"));
    assert_eq!(
        ids(
            &ColumnType::List(Box::new(ColumnType::Duration)),
            ProtocolVersion::V4
        ),
        list_of_durations
    );
    assert_eq!(ids(&ColumnType::Int, ProtocolVersion::V3), vec![0x00, 0x09]);
}
