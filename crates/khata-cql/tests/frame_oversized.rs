//! An oversized frame is refused from its header, before its body is buffered, with a protocol
//! error on its stream; its body is skipped as it arrives and the next frame decodes normally.

use bytes::{BufMut, BytesMut};
use khata_cql::frame::{
    Compression, DecoderConfig, FrameDecoder, FrameError, ProtocolVersion, Request, RequestFrame,
    Response, ResponseFrame, encode_frame_error,
};

fn options_frame(stream: i16) -> BytesMut {
    let mut buf = BytesMut::new();
    RequestFrame {
        version: ProtocolVersion::V4,
        stream,
        tracing: false,
        custom_payload: None,
        request: Request::Options,
    }
    .encode(None, &mut buf)
    .unwrap();
    buf
}

#[test]
fn default_limit_is_16_mib() {
    assert_eq!(
        DecoderConfig::default().max_frame_size_bytes,
        16 * 1024 * 1024
    );
}

#[test]
fn oversized_header_is_an_error_before_the_body_arrives_and_the_body_is_skipped() {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: 1024,
        accept_v5: false,
    });
    let mut buf = BytesMut::new();
    // A QUERY header declaring 1 MiB, and only 10 bytes of its body so far.
    buf.put_slice(&[0x04, 0x00, 0x00, 0x07, 0x07]);
    buf.put_u32(1 << 20);
    buf.put_slice(&[0u8; 10]);
    let err = decoder.decode(&mut buf).unwrap_err();
    assert_eq!(
        err,
        FrameError::TooLarge {
            stream: 7,
            length: 1 << 20,
            max: 1024
        }
    );
    assert!(!err.is_fatal());
    assert!(buf.is_empty(), "nothing of the oversized frame is kept");

    // The answer: a v4 protocol error on stream 7.
    let mut answer = BytesMut::new();
    encode_frame_error(&err, Some(ProtocolVersion::V4), &mut answer);
    let (header, frame) = ResponseFrame::decode(&answer, None, 1 << 20).unwrap();
    assert_eq!(header.stream, 7);
    match frame.response {
        Response::Error(e) => {
            assert_eq!(e.code(), 0x000A);
            assert!(
                e.message.contains("exceeds maximum allowed length 1024"),
                "{}",
                e.message
            );
        }
        other => panic!("{other:?}"),
    }

    // The rest of the body arrives in pieces, then a valid frame: the body is dropped and
    // the next frame decodes.
    let mut remaining = (1usize << 20) - 10;
    while remaining > 0 {
        let n = remaining.min(64 * 1024);
        buf.put_slice(&vec![0xEE; n]);
        remaining -= n;
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
    }
    buf.extend_from_slice(&options_frame(8));
    let frame = decoder.decode(&mut buf).unwrap().unwrap();
    assert_eq!(frame.header.stream, 8);
}

#[test]
fn a_frame_at_the_limit_is_accepted() {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: 16,
        accept_v5: false,
    });
    let mut buf = BytesMut::new();
    buf.put_slice(&[0x04, 0x00, 0x00, 0x01, 0x0F]); // AUTH_RESPONSE
    buf.put_u32(16);
    buf.put_i32(12);
    buf.put_slice(&[1u8; 12]);
    assert!(decoder.decode(&mut buf).unwrap().is_some());
}

#[test]
fn a_compressed_body_declaring_more_than_the_limit_is_refused_before_allocating() {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: 1024,
        accept_v5: false,
    });
    decoder.set_compression(Some(Compression::Lz4));
    let mut buf = BytesMut::new();
    buf.put_slice(&[0x04, 0x01, 0x00, 0x03, 0x07]);
    buf.put_u32(8);
    buf.put_u32(u32::MAX); // declared uncompressed length: 4 GiB
    buf.put_u32(0);
    let err = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(err, FrameError::TooLarge { stream: 3, .. }),
        "{err:?}"
    );
    assert!(!err.is_fatal());
    // Snappy's declared length is checked the same way.
    decoder.set_compression(Some(Compression::Snappy));
    let mut buf = BytesMut::new();
    buf.put_slice(&[0x04, 0x01, 0x00, 0x04, 0x07]);
    buf.put_u32(5);
    buf.put_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]); // varint 2^32 - 1
    let err = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(err, FrameError::TooLarge { stream: 4, .. }),
        "{err:?}"
    );
}

#[test]
fn a_truncated_frame_is_none_until_complete() {
    let whole = options_frame(2);
    let mut decoder = FrameDecoder::new(DecoderConfig::default());
    let mut buf = BytesMut::new();
    for (i, b) in whole.iter().enumerate() {
        assert_eq!(decoder.decode(&mut buf).unwrap(), None, "after {i} bytes");
        buf.put_u8(*b);
    }
    assert!(decoder.decode(&mut buf).unwrap().is_some());
}
