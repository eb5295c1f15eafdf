//! The OPTIONS round trip: the protocol's floor on this machine.
//!
//! OPTIONS asks the server which versions and compressions it supports; the answer
//! (SUPPORTED) is fixed, so a node spends nothing on it but reading a frame, dispatching it and
//! writing one back. Throughput of OPTIONS with the same connections and requests in flight as
//! a real workload is therefore the most that workload could reach here, and the ratio of the
//! two says how much of the machine the node's actual work takes.
//!
//! The driver has no OPTIONS call, so this plays the client with `khata_cql::frame`: each
//! connection sends STARTUP (v4, no compression), waits for READY, then keeps its share of the
//! requests in flight, one per stream id, sending a new OPTIONS on a stream as soon as its
//! SUPPORTED arrives. Responses are decoded (as the driver decodes what it receives) and
//! whatever replacements one read produces go out in one write, as the driver coalesces
//! writes too.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use khata_cql::frame::{
    HEADER_LEN, ProtocolVersion, Request, RequestFrame, Response, ResponseFrame, Startup, StringMap,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::CqlArgs;
use super::load::{Summary, duration_nanos};

/// The largest response body accepted (SUPPORTED is a few hundred bytes).
const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Bytes read from the socket at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Runs the OPTIONS load: `args.concurrency` in flight over `args.connections` connections.
pub async fn run(address: SocketAddr, args: &CqlArgs) -> Summary {
    let start = Instant::now();
    let measure_from = start + Duration::from_secs(args.warmup);
    let end = measure_from + Duration::from_secs(args.duration);
    let connections = args.connections.max(1);
    let mut tasks = Vec::with_capacity(connections);
    for i in 0..connections {
        // Spread the requests in flight as evenly as the driver spreads them over its pool.
        let share =
            args.concurrency / connections + usize::from(i < args.concurrency % connections);
        if share == 0 {
            continue;
        }
        tasks.push(tokio::spawn(connection(address, share, measure_from, end)));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        match task.await.expect("OPTIONS task") {
            Ok(nanos) => all.extend(nanos),
            Err(e) => {
                eprintln!("OPTIONS connection failed: {e}");
                errors += 1;
            }
        }
    }
    Summary::from_samples(all, errors, args.duration as f64)
}

/// One OPTIONS round trip on a new connection (before STARTUP, as drivers do): whether the
/// node is serving.
pub async fn round_trip(address: SocketAddr) -> Result<(), String> {
    let mut socket = TcpStream::connect(address)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    socket
        .write_all(&encode(0, Request::Options)?)
        .await
        .map_err(|e| e.to_string())?;
    let mut buf = BytesMut::new();
    match read_response(&mut socket, &mut buf).await?.response {
        Response::Supported(_) => Ok(()),
        other => Err(format!("OPTIONS answered with {other:?}")),
    }
}

/// One connection's closed loop of `in_flight` OPTIONS requests; the latencies of those that
/// started in the measured window.
async fn connection(
    address: SocketAddr,
    in_flight: usize,
    measure_from: Instant,
    end: Instant,
) -> Result<Vec<u64>, String> {
    let mut socket = TcpStream::connect(address)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    socket.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);

    let startup = encode(
        0,
        Request::Startup(Startup {
            cql_version: "3.0.0".into(),
            compression: None,
            options: StringMap::new(),
        }),
    )?;
    socket
        .write_all(&startup)
        .await
        .map_err(|e| e.to_string())?;
    match read_response(&mut socket, &mut buf).await?.response {
        Response::Ready => {}
        other => return Err(format!("STARTUP answered with {other:?}")),
    }

    let streams = i16::try_from(in_flight).map_err(|_| "too many requests in flight")?;
    let requests: Vec<Bytes> = (0..streams)
        .map(|s| encode(s, Request::Options))
        .collect::<Result<_, _>>()?;
    let mut sent_at = vec![Instant::now(); requests.len()];
    let mut out = BytesMut::new();
    for (stream, frame) in requests.iter().enumerate() {
        sent_at[stream] = Instant::now();
        out.extend_from_slice(frame);
    }
    socket.write_all(&out).await.map_err(|e| e.to_string())?;
    out.clear();

    let mut outstanding = requests.len();
    let mut nanos = Vec::new();
    while outstanding > 0 {
        if socket.read_buf(&mut buf).await.map_err(|e| e.to_string())? == 0 {
            return Err("the server closed the connection".into());
        }
        let now = Instant::now();
        while let Some(frame) = take_frame(&mut buf)? {
            let (_, response) = ResponseFrame::decode(&frame, None, MAX_RESPONSE_BYTES)
                .map_err(|e| format!("bad response frame: {e}"))?;
            if !matches!(response.response, Response::Supported(_)) {
                return Err(format!("OPTIONS answered with {:?}", response.response));
            }
            let stream = usize::try_from(response.stream)
                .ok()
                .filter(|&s| s < requests.len())
                .ok_or_else(|| format!("response on unknown stream {}", response.stream))?;
            if sent_at[stream] >= measure_from {
                nanos.push(duration_nanos(now.duration_since(sent_at[stream])));
            }
            if now < end {
                sent_at[stream] = now;
                out.extend_from_slice(&requests[stream]);
            } else {
                outstanding -= 1;
            }
        }
        if !out.is_empty() {
            socket.write_all(&out).await.map_err(|e| e.to_string())?;
            out.clear();
        }
    }
    Ok(nanos)
}

/// A v4 request frame on `stream`.
fn encode(stream: i16, request: Request) -> Result<Bytes, String> {
    let mut out = BytesMut::new();
    RequestFrame {
        version: ProtocolVersion::V4,
        stream,
        tracing: false,
        custom_payload: None,
        request,
    }
    .encode(None, &mut out)
    .map_err(|e| format!("encoding a request: {e}"))?;
    Ok(out.freeze())
}

/// Reads until one whole response frame is buffered, and decodes it.
async fn read_response(
    socket: &mut TcpStream,
    buf: &mut BytesMut,
) -> Result<ResponseFrame, String> {
    loop {
        if let Some(frame) = take_frame(buf)? {
            return ResponseFrame::decode(&frame, None, MAX_RESPONSE_BYTES)
                .map(|(_, response)| response)
                .map_err(|e| format!("bad response frame: {e}"));
        }
        if socket.read_buf(buf).await.map_err(|e| e.to_string())? == 0 {
            return Err("the server closed the connection".into());
        }
    }
}

/// Splits one whole frame (header and body) off the front of `buf`, if it is all there.
fn take_frame(buf: &mut BytesMut) -> Result<Option<Bytes>, String> {
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let length = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) as usize;
    if length > MAX_RESPONSE_BYTES {
        return Err(format!("response frame of {length} bytes"));
    }
    if buf.remaining() < HEADER_LEN + length {
        return Ok(None);
    }
    Ok(Some(buf.split_to(HEADER_LEN + length).freeze()))
}
