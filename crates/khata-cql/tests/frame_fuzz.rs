//! The decoders never panic: random bytes and mutated valid frames either decode or give a
//! typed error, and a valid frame cut short is `None` until its last byte arrives. The same for
//! v5 segment streams: mutated streams (small envelopes packed together, a large one split over
//! non-self-contained segments), arbitrary payloads behind valid checksums, and streams fed in
//! arbitrary chunks, in both segment layouts.

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    Batch, BatchStatement, BatchType, BoundValues, Compression, Consistency, DecoderConfig,
    Execute, FrameDecoder, FramedDecoder, ProtocolVersion, Query, QueryParameters, Request,
    RequestFrame, ResponseFrame, SegmentWriter, Value, encode_segment,
};
use proptest::prelude::*;

fn valid_frames() -> Vec<BytesMut> {
    valid_frames_in(ProtocolVersion::V4)
}

fn valid_frames_in(version: ProtocolVersion) -> Vec<BytesMut> {
    let mut params = QueryParameters::new(Consistency::One);
    params.values =
        BoundValues::Positional(vec![Value::Set(Bytes::from_static(b"1234")), Value::Null]);
    params.page_size = Some(100);
    params.paging_state = Some(Bytes::from_static(b"state"));
    let requests = [
        Request::Options,
        Request::Query(Query {
            query: "SELECT * FROM t WHERE k = ?".into(),
            parameters: params.clone(),
        }),
        Request::Execute(Execute {
            id: Bytes::from_static(b"0123456789abcdef"),
            result_metadata_id: None,
            parameters: params,
        }),
        Request::Batch(Batch {
            batch_type: BatchType::Logged,
            statements: vec![BatchStatement::Query {
                query: "INSERT".into(),
                values: BoundValues::Positional(vec![Value::NotSet]),
            }],
            consistency: Consistency::Quorum,
            serial_consistency: None,
            default_timestamp: Some(1),
            keyspace: None,
            now_in_seconds: None,
        }),
    ];
    requests
        .into_iter()
        .map(|request| {
            let mut buf = BytesMut::new();
            RequestFrame {
                version,
                stream: 1,
                tracing: false,
                custom_payload: None,
                request,
            }
            .encode(None, &mut buf)
            .unwrap();
            buf
        })
        .collect()
}

/// Runs the decoder over `input` fed in chunks until it stops making progress, decoding each
/// frame's body too. Any outcome but a panic is fine.
fn drive(input: &[u8], chunk: usize, compression: Option<Compression>) {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: 64 * 1024,
        accept_v5: true,
    });
    decoder.set_compression(compression);
    let mut buf = BytesMut::new();
    for piece in input.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    let _ = RequestFrame::decode(frame);
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = e.stream();
                    if e.is_fatal() {
                        return;
                    }
                }
            }
        }
    }
}

/// A v5 segment stream: the valid envelopes packed into self-contained segments, then one
/// envelope of `large_len` bytes of query text split over non-self-contained segments, then the
/// valid envelopes again. Returns the stream and the envelopes it carries, in order.
fn segment_stream(lz4: bool, large_len: usize) -> (Vec<u8>, Vec<BytesMut>) {
    let mut envelopes = valid_frames_in(ProtocolVersion::V5);
    let mut large = BytesMut::new();
    RequestFrame {
        version: ProtocolVersion::V5,
        stream: 9,
        tracing: false,
        custom_payload: None,
        request: Request::Query(Query {
            query: "q".repeat(large_len),
            parameters: QueryParameters::new(Consistency::One),
        }),
    }
    .encode(None, &mut large)
    .unwrap();
    envelopes.push(large);
    envelopes.extend(valid_frames_in(ProtocolVersion::V5));
    let mut out = BytesMut::new();
    let mut writer = SegmentWriter::new(lz4);
    for e in &envelopes {
        writer.push_envelope(e, &mut out).unwrap();
    }
    writer.flush(&mut out).unwrap();
    (out.to_vec(), envelopes)
}

/// A framed decoder with a small envelope limit, so that oversized envelopes are exercised.
fn framed(lz4: bool) -> FramedDecoder {
    FramedDecoder::new(
        lz4,
        FrameDecoder::new(DecoderConfig {
            max_frame_size_bytes: 64 * 1024,
            accept_v5: true,
        }),
    )
}

/// Runs a framed decoder over `input` fed in chunks, as the server does: non-fatal errors are
/// answered and decoding goes on; a fatal one ends the connection. Returns the frames decoded.
fn drive_framed(input: &[u8], chunk: usize, lz4: bool) -> Vec<khata_cql::frame::Frame> {
    let mut decoder = framed(lz4);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    let _ = RequestFrame::decode(frame.clone());
                    frames.push(frame);
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = e.stream();
                    if e.is_fatal() {
                        return frames;
                    }
                }
            }
        }
    }
    frames
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..512), chunk in 1usize..64) {
        drive(&input, chunk, None);
        drive(&input, chunk, Some(Compression::Lz4));
        drive(&input, chunk, Some(Compression::Snappy));
        let _ = ResponseFrame::decode(&input, Some(Compression::Lz4), 64 * 1024);
        let mut framed = FramedDecoder::new(true, FrameDecoder::new(DecoderConfig::default()));
        let _ = framed.decode(&mut BytesMut::from(&input[..]));
        let mut framed = FramedDecoder::new(false, FrameDecoder::new(DecoderConfig::default()));
        let _ = framed.decode(&mut BytesMut::from(&input[..]));
    }

    #[test]
    fn random_bodies_behind_a_valid_header_never_panic(
        opcode in prop_oneof![Just(1u8), Just(5), Just(7), Just(9), Just(10), Just(11), Just(13), Just(15)],
        version in 3u8..=5,
        flags in any::<u8>(),
        body in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut input = vec![version, flags & !0x01, 0, 1, opcode];
        input.extend_from_slice(&(body.len() as u32).to_be_bytes());
        input.extend_from_slice(&body);
        drive(&input, input.len(), None);
    }

    #[test]
    fn mutated_valid_frames_never_panic(
        which in 0usize..4,
        mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        chunk in 1usize..32,
    ) {
        let mut frame = valid_frames()[which].to_vec();
        for (at, byte) in mutations {
            let i = at % frame.len();
            frame[i] = byte;
        }
        drive(&frame, chunk, None);
        let _ = ResponseFrame::decode(&frame, None, 64 * 1024);
    }

    #[test]
    fn a_truncated_frame_is_none_until_complete(which in 0usize..4, cut in any::<usize>()) {
        let frame = valid_frames()[which].clone();
        let cut = cut % frame.len();
        let mut decoder = FrameDecoder::new(DecoderConfig::default());
        let mut buf = BytesMut::from(&frame[..cut]);
        prop_assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(&frame[cut..]);
        let decoded = decoder.decode(&mut buf).unwrap().expect("whole frame");
        prop_assert!(RequestFrame::decode(decoded).is_ok());
    }

    #[test]
    fn mutated_segments_never_panic(
        lz4 in any::<bool>(),
        mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
    ) {
        let mut out = BytesMut::new();
        let mut writer = SegmentWriter::new(lz4);
        for f in valid_frames() {
            let mut envelope = f.to_vec();
            envelope[0] = 5;
            writer.push_envelope(&envelope, &mut out).unwrap();
        }
        writer.flush(&mut out).unwrap();
        let mut bytes = out.to_vec();
        for (at, byte) in mutations {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        let mut decoder = FramedDecoder::new(lz4, FrameDecoder::new(DecoderConfig { accept_v5: true, ..DecoderConfig::default() }));
        let mut buf = BytesMut::from(&bytes[..]);
        while let Ok(Some(frame)) = decoder.decode(&mut buf) {
            let _ = RequestFrame::decode(frame);
        }
    }

    #[test]
    fn mutated_segment_streams_never_panic(
        lz4 in any::<bool>(),
        large_len in 100usize..300_000,
        mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        chunk in 1usize..70_000,
    ) {
        let (mut stream, _) = segment_stream(lz4, large_len);
        for (at, byte) in mutations {
            let i = at % stream.len();
            stream[i] = byte;
        }
        drive_framed(&stream, chunk, lz4);
    }

    #[test]
    fn arbitrary_payloads_behind_valid_checksums_never_panic(
        lz4 in any::<bool>(),
        segments in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..300)),
            1..8,
        ),
        chunk in 1usize..512,
    ) {
        // The checksums pass, so what is fuzzed is the envelope layer inside the framing.
        let mut stream = BytesMut::new();
        for (self_contained, payload) in &segments {
            let mut payload = payload.clone();
            if let Some(first) = payload.first_mut() {
                // Mostly v5 envelopes, so that headers get past the version check.
                *first = if *first < 200 { 5 } else { *first };
            }
            encode_segment(&payload, *self_contained, lz4, &mut stream).unwrap();
        }
        drive_framed(&stream, chunk, lz4);
    }

    #[test]
    fn a_segment_stream_in_any_chunks_decodes_to_its_envelopes(
        lz4 in any::<bool>(),
        large_len in 100usize..60_000,
        chunk in 1usize..20_000,
    ) {
        let (stream, envelopes) = segment_stream(lz4, large_len);
        let frames = drive_framed(&stream, chunk, lz4);
        prop_assert_eq!(frames.len(), envelopes.len());
        for (frame, envelope) in frames.iter().zip(&envelopes) {
            prop_assert_eq!(&frame.body[..], &envelope[9..]);
            prop_assert!(RequestFrame::decode(frame.clone()).is_ok());
        }
    }

    #[test]
    fn a_cut_segment_stream_is_none_until_complete(lz4 in any::<bool>(), cut in any::<usize>()) {
        let (stream, envelopes) = segment_stream(lz4, 150_000);
        let cut = cut % stream.len();
        let mut decoder = FramedDecoder::new(
            lz4,
            FrameDecoder::new(DecoderConfig { accept_v5: true, ..DecoderConfig::default() }),
        );
        let mut buf = BytesMut::from(&stream[..cut]);
        let mut decoded = 0;
        while let Some(_frame) = decoder.decode(&mut buf).expect("a valid prefix") {
            decoded += 1;
        }
        buf.extend_from_slice(&stream[cut..]);
        while let Some(_frame) = decoder.decode(&mut buf).expect("valid") {
            decoded += 1;
        }
        prop_assert_eq!(decoded, envelopes.len());
    }
}
