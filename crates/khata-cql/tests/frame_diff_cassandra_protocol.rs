//! Differential test against `cassandra-protocol` 4.x: its `Envelope` encoding (v4 and v5,
//! with lz4/snappy body compression) decodes with ours, our responses parse with its envelope
//! and body parsers (a prepared result in v3 and v4, whose metadata differ), and v5 segments
//! cross in both directions, uncompressed and LZ4.

use bytes::BytesMut;
use cassandra_protocol::compression::Compression as CCompression;
use cassandra_protocol::consistency::Consistency as CConsistency;
use cassandra_protocol::frame::frame_decoder::{
    FrameDecoder as CFrameDecoder, Lz4FrameDecoder, UncompressedFrameDecoder,
};
use cassandra_protocol::frame::frame_encoder::{
    FrameEncoder as CFrameEncoder, Lz4FrameEncoder, UncompressedFrameEncoder,
};
use cassandra_protocol::frame::{Envelope, Flags, Version};
use khata_cql::frame::{
    ColumnSpec, ColumnType, Compression, Consistency, DecoderConfig, ErrorBody, ErrorKind,
    FrameDecoder, FramedDecoder, Prepared, PreparedMetadata, ProtocolVersion, Request,
    RequestFrame, Response, ResponseFrame, ResultBody, RowsMetadata, SegmentWriter, WriteType,
};

fn query_envelope(version: Version, stream: i16) -> Envelope {
    let v5 = version == Version::V5;
    let mut envelope = Envelope::new_req_query(
        format!("SELECT * FROM t WHERE s = {stream}"),
        CConsistency::LocalOne,
        None,
        false,
        Some(100),
        None,
        Some(CConsistency::Serial),
        Some(77),
        v5.then(|| "ks".to_string()),
        v5.then_some(1000),
        Flags::empty(),
        version,
    );
    envelope.stream_id = stream;
    envelope
}

fn decoder() -> FrameDecoder {
    FrameDecoder::new(DecoderConfig {
        accept_v5: true,
        ..DecoderConfig::default()
    })
}

fn check_query(frame: RequestFrame, stream: i16, v5: bool) {
    assert_eq!(frame.stream, stream);
    let Request::Query(q) = frame.request else {
        panic!("{frame:?}")
    };
    assert_eq!(q.query, format!("SELECT * FROM t WHERE s = {stream}"));
    let p = q.parameters;
    assert_eq!(p.consistency, Consistency::LocalOne);
    assert_eq!(p.page_size, Some(100));
    assert_eq!(p.serial_consistency, Some(Consistency::Serial));
    assert_eq!(p.default_timestamp, Some(77));
    assert_eq!(p.keyspace.as_deref(), v5.then_some("ks"));
    assert_eq!(p.now_in_seconds, v5.then_some(1000));
}

#[test]
fn their_envelopes_decode_with_ours() {
    for (theirs, ours) in [
        (CCompression::None, None),
        (CCompression::Lz4, Some(Compression::Lz4)),
        (CCompression::Snappy, Some(Compression::Snappy)),
    ] {
        let bytes = query_envelope(Version::V4, 5).encode_with(theirs).unwrap();
        let mut d = decoder();
        d.set_compression(ours);
        let frame = d.decode(&mut BytesMut::from(&bytes[..])).unwrap().unwrap();
        assert_eq!(frame.header.version, ProtocolVersion::V4);
        check_query(RequestFrame::decode(frame).unwrap(), 5, false);
    }
    let bytes = query_envelope(Version::V5, 6)
        .encode_with(CCompression::None)
        .unwrap();
    let frame = decoder()
        .decode(&mut BytesMut::from(&bytes[..]))
        .unwrap()
        .unwrap();
    check_query(RequestFrame::decode(frame).unwrap(), 6, true);

    let options = Envelope::new_req_options(Version::V4)
        .encode_with(CCompression::None)
        .unwrap();
    let frame = decoder()
        .decode(&mut BytesMut::from(&options[..]))
        .unwrap()
        .unwrap();
    assert_eq!(
        RequestFrame::decode(frame).unwrap().request,
        Request::Options
    );

    let startup = Envelope::new_req_startup(Some("lz4".into()), Version::V4)
        .encode_with(CCompression::None)
        .unwrap();
    let frame = decoder()
        .decode(&mut BytesMut::from(&startup[..]))
        .unwrap()
        .unwrap();
    let Request::Startup(s) = RequestFrame::decode(frame).unwrap().request else {
        panic!()
    };
    assert_eq!(s.compression, Some(Compression::Lz4));
}

#[test]
fn their_v5_segments_decode_with_ours() {
    for lz4 in [false, true] {
        let mut encoder: Box<dyn CFrameEncoder> = if lz4 {
            Box::<Lz4FrameEncoder>::default()
        } else {
            Box::<UncompressedFrameEncoder>::default()
        };
        encoder.reset();
        for stream in 0..5 {
            let bytes = query_envelope(Version::V5, stream)
                .encode_with(CCompression::None)
                .unwrap();
            encoder.add_envelope(bytes);
        }
        let wire = encoder.finalize_self_contained().to_vec();
        let mut ours = FramedDecoder::new(lz4, decoder());
        let mut buf = BytesMut::from(&wire[..]);
        for stream in 0..5 {
            let frame = ours.decode(&mut buf).unwrap().unwrap();
            check_query(RequestFrame::decode(frame).unwrap(), stream, true);
        }
        assert!(buf.is_empty());
    }
}

fn our_responses() -> Vec<ResponseFrame> {
    let mut with_warning = ResponseFrame::new(
        4,
        Response::Error(ErrorBody::new(
            ErrorKind::WriteTimeout {
                consistency: Consistency::Quorum,
                received: 1,
                block_for: 2,
                write_type: WriteType::Simple,
                contentions: None,
            },
            "timed out",
        )),
    );
    with_warning.warnings = vec!["slow".into()];
    vec![
        ResponseFrame::new(1, Response::Ready),
        ResponseFrame::new(2, Response::Result(ResultBody::SetKeyspace("chat".into()))),
        ResponseFrame::new(
            3,
            Response::Supported(vec![("CQL_VERSION".into(), vec!["3.4.7".into()])]),
        ),
        with_warning,
    ]
}

fn check_their_parse(envelope: &Envelope) {
    let body = envelope.response_body().unwrap();
    let debug = format!("{body:?}");
    match envelope.stream_id {
        1 => assert!(debug.contains("Ready"), "{debug}"),
        2 => assert!(debug.contains("chat"), "{debug}"),
        3 => assert!(debug.contains("3.4.7"), "{debug}"),
        4 => {
            assert!(debug.contains("WriteTimeout"), "{debug}");
            assert!(debug.contains("timed out"), "{debug}");
            assert_eq!(envelope.warnings, vec!["slow".to_string()]);
        }
        other => panic!("stream {other}"),
    }
}

#[test]
fn our_responses_parse_with_their_envelope_decoder() {
    for (ours, theirs) in [
        (None, CCompression::None),
        (Some(Compression::Lz4), CCompression::Lz4),
        (Some(Compression::Snappy), CCompression::Snappy),
    ] {
        for frame in our_responses() {
            let mut buf = BytesMut::new();
            frame.encode(ProtocolVersion::V4, ours, &mut buf).unwrap();
            let parsed = Envelope::from_buffer(&buf, theirs).unwrap();
            assert_eq!(parsed.envelope_len, buf.len());
            assert_eq!(parsed.envelope.version, Version::V4);
            check_their_parse(&parsed.envelope);
        }
    }
}

#[test]
fn our_v5_segments_parse_with_their_frame_decoders() {
    for lz4 in [false, true] {
        let mut writer = SegmentWriter::new(lz4);
        let mut wire = BytesMut::new();
        for frame in our_responses() {
            let mut envelope = BytesMut::new();
            frame
                .encode(ProtocolVersion::V5, None, &mut envelope)
                .unwrap();
            writer.push_envelope(&envelope, &mut wire).unwrap();
        }
        // A large envelope split over non-self-contained segments.
        let big = ResponseFrame::new(
            2,
            Response::Result(ResultBody::SetKeyspace(format!(
                "chat{}",
                "x".repeat(30_000)
            ))),
        );
        let mut envelope = BytesMut::new();
        big.encode(ProtocolVersion::V5, None, &mut envelope)
            .unwrap();
        let mut big_envelope = envelope.to_vec();
        // (cassandra-protocol reads a [string] length as signed, so keep it under 32 KiB.)
        // Pad the body past one segment with trailing bytes (allowed: parsers ignore them).
        big_envelope.extend(std::iter::repeat_n(0u8, 200_000));
        let len = (big_envelope.len() - 9) as u32;
        big_envelope[5..9].copy_from_slice(&len.to_be_bytes());
        writer.push_envelope(&big_envelope, &mut wire).unwrap();
        writer.flush(&mut wire).unwrap();

        let mut data = wire.to_vec();
        let envelopes = if lz4 {
            Lz4FrameDecoder::default().consume(&mut data, CCompression::Lz4)
        } else {
            UncompressedFrameDecoder::default().consume(&mut data, CCompression::None)
        }
        .unwrap();
        assert_eq!(envelopes.len(), 5, "lz4 {lz4}");
        for envelope in &envelopes {
            assert_eq!(envelope.version, Version::V5);
            check_their_parse(envelope);
        }
    }
}

/// A prepared result: v4 carries the partition key indexes, v3 has no such field (a v3
/// driver reading one took the count for a column's type and failed).
#[test]
fn our_prepared_results_parse_with_their_body_parser_in_v3_and_v4() {
    let spec = |name: &str| ColumnSpec {
        keyspace: "ks".into(),
        table: "t".into(),
        name: name.into(),
        column_type: ColumnType::Int,
    };
    for (ours, theirs) in [
        (ProtocolVersion::V3, Version::V3),
        (ProtocolVersion::V4, Version::V4),
    ] {
        let frame = ResponseFrame::new(
            7,
            Response::Result(ResultBody::Prepared(Prepared {
                id: bytes::Bytes::from_static(&[9; 16]),
                result_metadata_id: None,
                metadata: PreparedMetadata {
                    pk_indexes: vec![0],
                    columns: vec![spec("k"), spec("c")],
                },
                result_metadata: RowsMetadata::new(vec![spec("k"), spec("c"), spec("v")]),
            })),
        );
        let mut buf = BytesMut::new();
        frame.encode(ours, None, &mut buf).unwrap();
        let parsed = Envelope::from_buffer(&buf, CCompression::None).unwrap();
        assert_eq!(parsed.envelope.version, theirs);
        let body = parsed.envelope.response_body().unwrap();
        let debug = format!("{body:?}");
        let pk = if ours == ProtocolVersion::V4 {
            "pk_indexes: [0]"
        } else {
            "pk_indexes: []"
        };
        assert!(debug.contains(pk), "{ours:?}: {debug}");
        assert!(debug.contains("name: \"c\""), "{ours:?}: {debug}");
        assert!(debug.contains("columns_count: 3"), "{ours:?}: {debug}");
    }
}
