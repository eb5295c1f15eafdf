//! Differential: a node speaking v5 to `cassandra-protocol` 4.x, a client codec written
//! independently of khata's. Its envelopes and its segment encoders (uncompressed and LZ4, an
//! envelope larger than a segment split by its own non-self-contained encoder) go to the node;
//! the node's segments come back through its decoders and its body parsers: SUPPORTED, READY,
//! Rows, Prepared with a result metadata id, and Metadata_changed after an ALTER TABLE.

mod support;

use cassandra_protocol::compression::Compression as CCompression;
use cassandra_protocol::consistency::Consistency;
use cassandra_protocol::frame::frame_decoder::{
    FrameDecoder, LegacyFrameDecoder, Lz4FrameDecoder, UncompressedFrameDecoder,
};
use cassandra_protocol::frame::frame_encoder::{
    FrameEncoder, Lz4FrameEncoder, UncompressedFrameEncoder,
};
use cassandra_protocol::frame::message_error::ErrorType;
use cassandra_protocol::frame::message_response::ResponseBody;
use cassandra_protocol::frame::message_result::ResResultBody;
use cassandra_protocol::frame::{Envelope, Flags, Opcode, Version};
use cassandra_protocol::query::{QueryParams, QueryValues};
use cassandra_protocol::types::CBytesShort;
use cassandra_protocol::types::value::Value;
use std::time::Duration;
use support::TestNode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Their codec over a socket.
struct TheirClient {
    socket: TcpStream,
    encoder: Option<Box<dyn FrameEncoder + Send>>,
    decoder: Box<dyn FrameDecoder + Send>,
    /// Envelopes decoded and not yet handed out.
    ready: Vec<Envelope>,
    next_stream: i16,
}

impl TheirClient {
    async fn connect(node: &TestNode, lz4: bool) -> Self {
        let mut client = TheirClient {
            socket: TcpStream::connect(node.cql_address()).await.unwrap(),
            encoder: None,
            decoder: Box::<LegacyFrameDecoder>::default(),
            ready: Vec::new(),
            next_stream: 0,
        };
        let supported = client.request(Envelope::new_req_options(Version::V5)).await;
        let Ok(ResponseBody::Supported(supported)) = supported.response_body() else {
            panic!("{supported:?}");
        };
        assert!(supported.data["PROTOCOL_VERSIONS"].contains(&"5/v5".to_string()));
        let compression = lz4.then(|| "lz4".to_string());
        let ready = client
            .request(Envelope::new_req_startup(compression, Version::V5))
            .await;
        assert_eq!(ready.opcode, Opcode::Ready);
        assert_eq!(ready.version, Version::V5);
        if lz4 {
            client.encoder = Some(Box::<Lz4FrameEncoder>::default());
            client.decoder = Box::<Lz4FrameDecoder>::default();
        } else {
            client.encoder = Some(Box::<UncompressedFrameEncoder>::default());
            client.decoder = Box::<UncompressedFrameDecoder>::default();
        }
        client
    }

    async fn request(&mut self, mut envelope: Envelope) -> Envelope {
        let stream = self.next_stream;
        self.next_stream += 1;
        envelope.stream_id = stream;
        let bytes = envelope.encode_with(CCompression::None).unwrap();
        let mut wire = Vec::new();
        match self.encoder.as_mut() {
            None => wire.extend_from_slice(&bytes),
            Some(encoder) if encoder.can_fit(bytes.len()) => {
                encoder.reset();
                encoder.add_envelope(bytes);
                wire.extend_from_slice(encoder.finalize_self_contained());
            }
            Some(encoder) => {
                let mut at = 0;
                while at < bytes.len() {
                    encoder.reset();
                    let (consumed, frame) = encoder.finalize_non_self_contained(&bytes[at..]);
                    wire.extend_from_slice(frame);
                    at += consumed;
                }
            }
        }
        self.socket.write_all(&wire).await.unwrap();
        let response = self.response().await;
        assert_eq!(response.stream_id, stream);
        response
    }

    async fn response(&mut self) -> Envelope {
        loop {
            if !self.ready.is_empty() {
                return self.ready.remove(0);
            }
            let mut chunk = vec![0u8; 64 * 1024];
            let n = tokio::time::timeout(TIMEOUT, self.socket.read(&mut chunk))
                .await
                .expect("answered in time")
                .unwrap();
            assert!(n > 0, "the node closed the connection");
            chunk.truncate(n);
            let envelopes = self
                .decoder
                .consume(&mut chunk, CCompression::None)
                .unwrap();
            self.ready.extend(envelopes);
        }
    }
}

fn query(cql: &str) -> Envelope {
    Envelope::new_req_query(
        cql.to_string(),
        Consistency::One,
        None,
        false,
        None,
        None,
        None,
        None,
        None,
        None,
        Flags::empty(),
        Version::V5,
    )
}

fn result(envelope: &Envelope) -> ResResultBody {
    match envelope.response_body() {
        Ok(ResponseBody::Result(r)) => r,
        other => panic!("expected a result, got {other:?}"),
    }
}

fn execute(id: &CBytesShort, metadata_id: &CBytesShort, k: i32) -> Envelope {
    let params = QueryParams {
        consistency: Consistency::One,
        with_names: false,
        values: Some(QueryValues::SimpleValues(vec![Value::Some(
            k.to_be_bytes().to_vec(),
        )])),
        page_size: None,
        paging_state: None,
        serial_consistency: None,
        timestamp: None,
        keyspace: None,
        now_in_seconds: None,
    };
    Envelope::new_req_execute(id, Some(metadata_id), &params, Flags::empty(), Version::V5)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn their_client_codec_talks_v5_to_the_node() {
    let mut node = TestNode::start().await;
    for lz4 in [false, true] {
        let ks = if lz4 { "theirs_lz4" } else { "theirs_plain" };
        let mut client = TheirClient::connect(&node, lz4).await;
        for cql in [
            format!(
                "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
            ),
            format!("CREATE TABLE {ks}.t (k int PRIMARY KEY, v blob)"),
        ] {
            let r = client.request(query(&cql)).await;
            assert!(
                matches!(result(&r), ResResultBody::SchemaChange(_)),
                "{r:?}"
            );
        }
        // 200 KB of blob as a literal: their encoder splits the request over segments.
        let blob: Vec<u8> = (0..100_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let insert = format!("INSERT INTO {ks}.t (k, v) VALUES (1, 0x{})", hex(&blob));
        assert!(matches!(
            result(&client.request(query(&insert)).await),
            ResResultBody::Void
        ));

        let prepare = Envelope::new_req_prepare(
            format!("SELECT * FROM {ks}.t WHERE k = ?"),
            None,
            Flags::empty(),
            Version::V5,
        );
        let ResResultBody::Prepared(prepared) = result(&client.request(prepare).await) else {
            panic!("prepared");
        };
        let metadata_id = prepared.result_metadata_id.clone().expect("v5");
        assert_eq!(prepared.result_metadata.col_specs.len(), 2);

        let ResResultBody::Rows(rows) =
            result(&client.request(execute(&prepared.id, &metadata_id, 1)).await)
        else {
            panic!("rows");
        };
        assert_eq!(rows.rows_count, 1);
        assert_eq!(rows.metadata.new_metadata_id, None);
        assert_eq!(rows.rows_content[0][1].as_slice(), Some(&blob[..]));

        let alter = format!("ALTER TABLE {ks}.t ADD extra text");
        assert!(matches!(
            result(&client.request(query(&alter)).await),
            ResResultBody::SchemaChange(_)
        ));
        // The statement is forgotten, as Cassandra evicts it on ALTER TABLE; prepared
        // again, an EXECUTE holding the old result metadata id gets Metadata_changed.
        match client
            .request(execute(&prepared.id, &metadata_id, 1))
            .await
            .response_body()
        {
            Ok(ResponseBody::Error(e)) => {
                assert!(matches!(e.ty, ErrorType::Unprepared(_)), "{e:?}")
            }
            other => panic!("expected Unprepared, got {other:?}"),
        }
        let prepare = Envelope::new_req_prepare(
            format!("SELECT * FROM {ks}.t WHERE k = ?"),
            None,
            Flags::empty(),
            Version::V5,
        );
        let ResResultBody::Prepared(again) = result(&client.request(prepare).await) else {
            panic!("prepared");
        };
        assert_eq!(again.id, prepared.id);
        let ResResultBody::Rows(rows) =
            result(&client.request(execute(&prepared.id, &metadata_id, 1)).await)
        else {
            panic!("rows");
        };
        let new_id = rows
            .metadata
            .new_metadata_id
            .clone()
            .expect("Metadata_changed");
        assert_ne!(new_id, metadata_id);
        let names: Vec<&str> = rows
            .metadata
            .col_specs
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, vec!["k", "extra", "v"]);
    }
    node.stop().await;
}
