//! A request in a version the server does not speak gets the exact error drivers step down on:
//! ERROR 0x000A, "Invalid or unsupported protocol version (N); supported versions are
//! (3/v3, 4/v4)", on the request's stream, in a frame the client can parse.

use bytes::{BufMut, BytesMut};
use khata_cql::frame::{
    DecoderConfig, FrameDecoder, FrameError, ProtocolVersion, Response, ResponseFrame,
    encode_frame_error,
};

/// An OPTIONS request header in the 9-byte layout with the given version byte.
fn options(version: u8, stream: i16) -> BytesMut {
    let mut buf = BytesMut::new();
    buf.put_u8(version);
    buf.put_u8(0);
    buf.put_i16(stream);
    buf.put_u8(0x05);
    buf.put_u32(0);
    buf
}

fn answer(buf: &mut BytesMut) -> (FrameError, BytesMut) {
    let err = FrameDecoder::new(DecoderConfig::default())
        .decode(buf)
        .unwrap_err();
    assert!(err.is_fatal());
    let mut out = BytesMut::new();
    encode_frame_error(&err, None, &mut out);
    (err, out)
}

#[test]
fn newer_versions_get_a_v4_protocol_error_on_their_stream() {
    for (version, stream) in [(0x42u8, 0i16), (0x41, 3), (5, 0), (6, 12), (0x7F, 1)] {
        let (err, out) = answer(&mut options(version, stream));
        assert_eq!(err.stream(), Some(stream));
        let (header, frame) = ResponseFrame::decode(&out, None, 1 << 20).unwrap();
        assert_eq!(out[0], 0x84, "answered as a v4 response");
        assert_eq!(header.version, ProtocolVersion::V4);
        assert_eq!(header.stream, stream);
        let Response::Error(e) = frame.response else {
            panic!("not an error")
        };
        assert_eq!(e.code(), 0x000A);
        assert_eq!(
            e.message,
            format!(
                "Invalid or unsupported protocol version ({version}); supported versions are (3/v3, 4/v4)"
            )
        );
        assert!(e.message.contains("unsupported protocol version"));
    }
}

#[test]
fn exact_bytes_for_the_python_driver_first_attempt() {
    let (_, out) = answer(&mut options(0x42, 0));
    let message =
        b"Invalid or unsupported protocol version (66); supported versions are (3/v3, 4/v4)";
    let mut expected = vec![0x84, 0x00, 0x00, 0x00, 0x00];
    expected.extend_from_slice(&((4 + 2 + message.len()) as u32).to_be_bytes());
    expected.extend_from_slice(&[0x00, 0x00, 0x00, 0x0A]);
    expected.extend_from_slice(&(message.len() as u16).to_be_bytes());
    expected.extend_from_slice(message);
    assert_eq!(&out[..], &expected[..]);
}

#[test]
fn v5_is_accepted_only_when_enabled() {
    let mut decoder = FrameDecoder::new(DecoderConfig {
        accept_v5: true,
        ..DecoderConfig::default()
    });
    let frame = decoder.decode(&mut options(5, 1)).unwrap().unwrap();
    assert_eq!(frame.header.version, ProtocolVersion::V5);
    let err = decoder.decode(&mut options(6, 1)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("supported versions are (3/v3, 4/v4, 5/v5)")
    );
}

#[test]
fn v1_and_v2_are_answered_in_their_own_header_layout() {
    for version in [1u8, 2] {
        // v1/v2 header: version, flags, one-byte stream, opcode, length.
        let mut buf = BytesMut::new();
        buf.put_slice(&[version, 0, 9, 0x05, 0, 0, 0, 0]);
        let (err, out) = answer(&mut buf);
        assert_eq!(err.stream(), Some(9));
        assert_eq!(&out[..4], &[version | 0x80, 0, 9, 0x00]);
        let len = u32::from_be_bytes([out[4], out[5], out[6], out[7]]) as usize;
        assert_eq!(out.len(), 8 + len);
        assert_eq!(&out[8..12], &[0, 0, 0, 0x0A]);
        let text = String::from_utf8_lossy(&out[14..]);
        assert_eq!(
            text,
            format!(
                "Invalid or unsupported protocol version ({version}); supported versions are (3/v3, 4/v4)"
            )
        );
    }
}

#[test]
fn the_version_byte_alone_waits_for_the_stream_id() {
    let mut decoder = FrameDecoder::new(DecoderConfig::default());
    let mut buf = BytesMut::from(&[0x42u8, 0x00][..]);
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
}

#[test]
fn a_different_version_after_pinning_is_a_mismatch() {
    let mut decoder = FrameDecoder::new(DecoderConfig::default());
    decoder.pin_version(ProtocolVersion::V4);
    let err = decoder.decode(&mut options(3, 4)).unwrap_err();
    assert!(matches!(
        err,
        FrameError::VersionMismatch {
            stream: 4,
            got: 3,
            expected: 4
        }
    ));
}
