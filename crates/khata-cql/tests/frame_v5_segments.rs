//! v5 framing: segments round-trip in both layouts, small envelopes share a self-contained
//! segment, a large envelope is split over non-self-contained segments and reassembled, and
//! corrupted headers or payloads are fatal typed errors.

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    Consistency, DecoderConfig, FrameDecoder, FrameError, FramedDecoder, MAX_SEGMENT_PAYLOAD,
    ProtocolVersion, Query, QueryParameters, Request, RequestFrame, SegmentDecoder, SegmentError,
    SegmentWriter, crc24, encode_segment,
};

fn envelope(stream: i16, query_len: usize) -> BytesMut {
    let mut buf = BytesMut::new();
    RequestFrame {
        version: ProtocolVersion::V5,
        stream,
        tracing: false,
        custom_payload: None,
        request: Request::Query(Query {
            query: "x".repeat(query_len),
            parameters: QueryParameters::new(Consistency::One),
        }),
    }
    .encode(None, &mut buf)
    .unwrap();
    buf
}

fn framed_decoder(lz4: bool) -> FramedDecoder {
    FramedDecoder::new(
        lz4,
        FrameDecoder::new(DecoderConfig {
            accept_v5: true,
            ..DecoderConfig::default()
        }),
    )
}

#[test]
fn segment_round_trips_in_both_layouts() {
    for lz4 in [false, true] {
        for payload in [
            Bytes::new(),
            Bytes::from_static(b"hello"),
            Bytes::from(vec![7u8; MAX_SEGMENT_PAYLOAD]),
            Bytes::from(
                (0..5000u32)
                    .map(|i| (i * 7919 % 251) as u8)
                    .collect::<Vec<_>>(),
            ),
        ] {
            for self_contained in [false, true] {
                let mut out = BytesMut::new();
                encode_segment(&payload, self_contained, lz4, &mut out).unwrap();
                let segment = SegmentDecoder::new(lz4).decode(&mut out).unwrap().unwrap();
                assert!(out.is_empty());
                assert_eq!(segment.self_contained, self_contained);
                assert_eq!(segment.payload, payload);
            }
        }
    }
}

#[test]
fn payload_over_the_maximum_is_refused() {
    let payload = vec![0u8; MAX_SEGMENT_PAYLOAD + 1];
    let err = encode_segment(&payload, true, false, &mut BytesMut::new()).unwrap_err();
    assert_eq!(err, SegmentError::PayloadTooLarge(MAX_SEGMENT_PAYLOAD + 1));
}

#[test]
fn uncompressed_header_layout_and_crc24() {
    let mut out = BytesMut::new();
    encode_segment(b"abc", true, false, &mut out).unwrap();
    // 3 + (1 << 17), little-endian.
    assert_eq!(&out[..3], &[0x03, 0x00, 0x02]);
    let crc = crc24(&out[..3]);
    assert_eq!(&out[3..6], &crc.to_le_bytes()[..3]);
    assert_eq!(&out[6..9], b"abc");
    assert_eq!(out.len(), 6 + 3 + 4);
}

#[test]
fn many_envelopes_share_one_self_contained_segment() {
    for lz4 in [false, true] {
        let mut writer = SegmentWriter::new(lz4);
        let mut out = BytesMut::new();
        for stream in 0..10 {
            writer
                .push_envelope(&envelope(stream, 20), &mut out)
                .unwrap();
        }
        writer.flush(&mut out).unwrap();
        let mut probe = out.clone();
        let segment = SegmentDecoder::new(lz4)
            .decode(&mut probe)
            .unwrap()
            .unwrap();
        assert!(segment.self_contained);
        assert!(probe.is_empty(), "one segment");
        let mut decoder = framed_decoder(lz4);
        for stream in 0..10 {
            let frame = decoder.decode(&mut out).unwrap().unwrap();
            assert_eq!(frame.header.stream, stream);
            assert_eq!(frame.header.version, ProtocolVersion::V5);
        }
        assert_eq!(decoder.decode(&mut out).unwrap(), None);
    }
}

#[test]
fn a_large_envelope_is_split_and_reassembled_byte_by_byte() {
    for lz4 in [false, true] {
        let big = envelope(3, 300_000);
        let mut writer = SegmentWriter::new(lz4);
        let mut out = BytesMut::new();
        writer.push_envelope(&envelope(1, 10), &mut out).unwrap();
        writer.push_envelope(&big, &mut out).unwrap();
        writer.push_envelope(&envelope(2, 10), &mut out).unwrap();
        writer.flush(&mut out).unwrap();
        let mut decoder = framed_decoder(lz4);
        let mut buf = BytesMut::new();
        let mut streams = Vec::new();
        for chunk in out.chunks(4096) {
            buf.extend_from_slice(chunk);
            while let Some(frame) = decoder.decode(&mut buf).unwrap() {
                let request = RequestFrame::decode(frame.clone()).unwrap();
                if frame.header.stream == 3 {
                    let Request::Query(q) = request.request else {
                        panic!()
                    };
                    assert_eq!(q.query.len(), 300_000);
                }
                streams.push(frame.header.stream);
            }
        }
        assert_eq!(streams, vec![1, 3, 2]);
    }
}

#[test]
fn corrupted_header_or_payload_is_a_fatal_error() {
    let mut out = BytesMut::new();
    encode_segment(&envelope(1, 5), true, false, &mut out).unwrap();
    let mut bad_header = out.clone();
    bad_header[0] ^= 0x01;
    let err = framed_decoder(false).decode(&mut bad_header).unwrap_err();
    assert!(matches!(
        err,
        FrameError::Segment(SegmentError::HeaderCrc { .. })
    ));
    assert!(err.is_fatal());
    let mut bad_payload = out.clone();
    bad_payload[8] ^= 0x40;
    let err = framed_decoder(false).decode(&mut bad_payload).unwrap_err();
    assert!(matches!(
        err,
        FrameError::Segment(SegmentError::PayloadCrc { .. })
    ));
}

#[test]
fn a_self_contained_segment_with_a_partial_envelope_is_an_error() {
    let e = envelope(1, 50);
    let mut out = BytesMut::new();
    encode_segment(&e[..20], true, false, &mut out).unwrap();
    let err = framed_decoder(false).decode(&mut out).unwrap_err();
    assert!(
        matches!(err, FrameError::Segment(SegmentError::Sequence(_))),
        "{err:?}"
    );
}

fn framed_decoder_with_limit(max_frame_size_bytes: usize) -> FramedDecoder {
    FramedDecoder::new(
        false,
        FrameDecoder::new(DecoderConfig {
            accept_v5: true,
            max_frame_size_bytes,
        }),
    )
}

#[test]
fn an_oversized_envelope_over_segments_is_refused_and_skipped() {
    let mut writer = SegmentWriter::new(false);
    let mut out = BytesMut::new();
    writer
        .push_envelope(&envelope(1, 300_000), &mut out)
        .unwrap();
    writer.push_envelope(&envelope(2, 10), &mut out).unwrap();
    writer.flush(&mut out).unwrap();
    let mut decoder = framed_decoder_with_limit(64 * 1024);
    let mut buf = BytesMut::new();
    let mut outcomes = Vec::new();
    for chunk in out.chunks(10_000) {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => outcomes.push(Ok(frame.header.stream)),
                Ok(None) => break,
                Err(e) => {
                    assert!(!e.is_fatal(), "{e}");
                    outcomes.push(Err(e.stream()));
                }
            }
        }
    }
    assert_eq!(outcomes, vec![Err(Some(1)), Ok(2)]);
}

#[test]
fn a_self_contained_segment_ending_inside_a_refused_envelope_is_fatal() {
    // The header declares more than the limit and more than its self-contained segment holds:
    // the envelope is refused, and then the framing is known to be broken. (The bytes of the
    // next segment must not be skipped as the rest of the refused envelope.)
    let big = envelope(1, 100_000);
    let mut out = BytesMut::new();
    encode_segment(&big[..50], true, false, &mut out).unwrap();
    encode_segment(&envelope(2, 10), true, false, &mut out).unwrap();
    let mut decoder = framed_decoder_with_limit(64 * 1024);
    let refused = decoder.decode(&mut out).unwrap_err();
    assert!(matches!(refused, FrameError::TooLarge { stream: 1, .. }));
    assert!(!refused.is_fatal());
    let broken = decoder.decode(&mut out).unwrap_err();
    assert!(
        matches!(broken, FrameError::Segment(SegmentError::Sequence(_))),
        "{broken:?}"
    );
    assert!(broken.is_fatal());
}
