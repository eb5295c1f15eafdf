//! Prepared statements and bound values over protocol v4, with a client written on khata-cql's
//! frame types, as drivers other than Python's use them:
//!
//! - statements a schema change makes stale, as a driver that skips result metadata sees them:
//!   after ALTER TABLE changes a table's columns, DROP TABLE or DROP KEYSPACE, the statements
//!   prepared on it are forgotten (EXECUTE gets Unprepared, as Cassandra's `QueryProcessor`
//!   evicts them), so a client never decodes new rows with an old column list; preparing again
//!   gives the new columns. A change that leaves the columns alone (a table option, another
//!   table) keeps them;
//! - named values (flag 0x40) matched to the markers' names exactly, `?` named after its
//!   column; a marker left without a value is a wrong count, never an unset value.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    BoundValues, Consistency, ErrorKind, Execute, HEADER_LEN, Prepare, Prepared, ProtocolVersion,
    Query, QueryParameters, Request, RequestFrame, Response, ResponseFrame, ResultBody, Startup,
    Value,
};
use support::TestNode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TIMEOUT: Duration = Duration::from_secs(30);

struct V4Client {
    socket: TcpStream,
    inbox: BytesMut,
    next_stream: i16,
}

impl V4Client {
    async fn connect(addr: SocketAddr) -> Self {
        let mut client = V4Client {
            socket: TcpStream::connect(addr).await.expect("connects"),
            inbox: BytesMut::new(),
            next_stream: 0,
        };
        let ready = client
            .request(Request::Startup(Startup {
                cql_version: "3.0.0".into(),
                compression: None,
                options: Default::default(),
            }))
            .await;
        assert_eq!(ready, Response::Ready);
        client
    }

    async fn request(&mut self, request: Request) -> Response {
        let stream = self.next_stream;
        self.next_stream += 1;
        let mut out = BytesMut::new();
        RequestFrame {
            version: ProtocolVersion::V4,
            stream,
            tracing: false,
            custom_payload: None,
            request,
        }
        .encode(None, &mut out)
        .expect("encodes");
        self.socket.write_all(&out).await.expect("writes");
        loop {
            if self.inbox.len() >= HEADER_LEN {
                let length = u32::from_be_bytes([
                    self.inbox[5],
                    self.inbox[6],
                    self.inbox[7],
                    self.inbox[8],
                ]) as usize;
                if self.inbox.len() >= HEADER_LEN + length {
                    let bytes = self.inbox.split_to(HEADER_LEN + length);
                    let (_, frame) =
                        ResponseFrame::decode(&bytes, None, 64 << 20).expect("a valid response");
                    assert_eq!(frame.stream, stream);
                    return frame.response;
                }
            }
            let read = tokio::time::timeout(TIMEOUT, self.socket.read_buf(&mut self.inbox))
                .await
                .expect("the server answers in time")
                .expect("reads");
            assert!(read > 0, "the server closed the connection");
        }
    }

    async fn query(&mut self, cql: &str) -> Response {
        let response = self
            .request(Request::Query(Query {
                query: cql.into(),
                parameters: QueryParameters::new(Consistency::One),
            }))
            .await;
        assert!(
            !matches!(response, Response::Error(_)),
            "{cql}: {response:?}"
        );
        response
    }

    async fn prepare(&mut self, cql: &str) -> Prepared {
        match self
            .request(Request::Prepare(Prepare {
                query: cql.into(),
                keyspace: None,
            }))
            .await
        {
            Response::Result(ResultBody::Prepared(p)) => p,
            other => panic!("{cql}: {other:?}"),
        }
    }

    /// EXECUTE with Skip_metadata, as drivers that cache result metadata send it.
    async fn execute(&mut self, id: &Bytes, values: Vec<Value>) -> Response {
        let mut parameters = QueryParameters::new(Consistency::One);
        parameters.values = BoundValues::Positional(values);
        parameters.skip_metadata = true;
        self.request(Request::Execute(Execute {
            id: id.clone(),
            result_metadata_id: None,
            parameters,
        }))
        .await
    }
}

fn int(v: i32) -> Value {
    Value::Set(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn unprepared(response: &Response, id: &Bytes) {
    match response {
        Response::Error(e) => match &e.kind {
            ErrorKind::Unprepared { id: got } => assert_eq!(got, id),
            other => panic!("expected Unprepared, got {other:?}: {}", e.message),
        },
        other => panic!("expected Unprepared, got {other:?}"),
    }
}

fn row_width(response: &Response) -> usize {
    match response {
        Response::Result(ResultBody::Rows(rows)) => rows.metadata.column_count,
        other => panic!("expected rows, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_changes_evict_the_statements_they_make_stale() {
    let mut node = TestNode::start().await;
    let mut client = V4Client::connect(node.cql_address()).await;
    // A ready connection refuses a second STARTUP, as Cassandra does.
    match client
        .request(Request::Startup(Startup {
            cql_version: "3.0.0".into(),
            compression: None,
            options: Default::default(),
        }))
        .await
    {
        Response::Error(e) => {
            assert!(matches!(e.kind, ErrorKind::ProtocolError), "{e:?}");
            assert_eq!(
                e.message,
                "Unexpected message STARTUP, the connection is already initialized"
            );
        }
        other => panic!("{other:?}"),
    }
    client
        .query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        .await;
    client
        .query("CREATE TABLE ks.t (k int PRIMARY KEY, a int)")
        .await;
    client
        .query("CREATE TABLE ks.other (k int PRIMARY KEY)")
        .await;
    client.query("INSERT INTO ks.t (k, a) VALUES (1, 10)").await;
    let star = client.prepare("SELECT * FROM ks.t WHERE k = ?").await;
    assert_eq!(star.result_metadata.column_count, 2);
    assert_eq!(row_width(&client.execute(&star.id, vec![int(1)]).await), 2);

    // Changes that leave ks.t's columns alone keep the statement.
    client
        .query("ALTER TABLE ks.t WITH comment = 'still two columns'")
        .await;
    client.query("ALTER TABLE ks.other ADD x int").await;
    assert_eq!(row_width(&client.execute(&star.id, vec![int(1)]).await), 2);

    // A column added: the statement is forgotten, and prepared again it has three columns.
    client.query("ALTER TABLE ks.t ADD b int").await;
    unprepared(&client.execute(&star.id, vec![int(1)]).await, &star.id);
    let again = client.prepare("SELECT * FROM ks.t WHERE k = ?").await;
    assert_eq!(again.id, star.id, "the same text prepares to the same id");
    assert_eq!(again.result_metadata.column_count, 3);
    assert_eq!(row_width(&client.execute(&star.id, vec![int(1)]).await), 3);

    // Dropped and created again with the same columns: another table, another preparation.
    let insert = client
        .prepare("INSERT INTO ks.t (k, a) VALUES (?, ?)")
        .await;
    client.query("DROP TABLE ks.t").await;
    client
        .query("CREATE TABLE ks.t (k int PRIMARY KEY, a int, b int)")
        .await;
    unprepared(
        &client.execute(&insert.id, vec![int(2), int(20)]).await,
        &insert.id,
    );
    unprepared(&client.execute(&star.id, vec![int(1)]).await, &star.id);

    // The keyspace dropped: preparing again says why.
    let insert = client
        .prepare("INSERT INTO ks.t (k, a) VALUES (?, ?)")
        .await;
    client.query("DROP KEYSPACE ks").await;
    unprepared(
        &client.execute(&insert.id, vec![int(2), int(20)]).await,
        &insert.id,
    );
    match client
        .request(Request::Prepare(Prepare {
            query: "INSERT INTO ks.t (k, a) VALUES (?, ?)".into(),
            keyspace: None,
        }))
        .await
    {
        Response::Error(e) => assert!(e.message.contains("does not exist"), "{}", e.message),
        other => panic!("{other:?}"),
    }
    node.stop().await;
}

fn named(values: &[(&str, i32)]) -> QueryParameters {
    let mut parameters = QueryParameters::new(Consistency::One);
    parameters.values = BoundValues::Named(
        values
            .iter()
            .map(|(name, v)| (name.to_string(), int(*v)))
            .collect(),
    );
    parameters
}

fn invalid(response: &Response, says: &str) {
    match response {
        Response::Error(e) => {
            assert!(matches!(e.kind, ErrorKind::Invalid), "{e:?}");
            assert_eq!(e.message, says);
        }
        other => panic!("expected Invalid ({says}), got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_values_bind_by_the_markers_names() {
    let mut node = TestNode::start().await;
    let mut client = V4Client::connect(node.cql_address()).await;
    client
        .query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        .await;
    client
        .query("CREATE TABLE ks.kv (k int, c int, v int, PRIMARY KEY (k, c))")
        .await;
    // `:k` and `:v`, in another order than the markers.
    let insert = Request::Query(Query {
        query: "INSERT INTO ks.kv (k, c, v) VALUES (:k, 0, :v)".into(),
        parameters: named(&[("v", 10), ("k", 1)]),
    });
    assert_eq!(
        client.request(insert).await,
        Response::Result(ResultBody::Void)
    );
    // A value missing: no partial write with the rest unset.
    let partial = Request::Query(Query {
        query: "INSERT INTO ks.kv (k, c, v) VALUES (:k, 1, :v)".into(),
        parameters: named(&[("k", 1)]),
    });
    invalid(
        &client.request(partial).await,
        "Invalid amount of bind variables",
    );
    // `?` markers are named after their columns; an unknown name leaves the count short.
    let select = client
        .prepare("SELECT v FROM ks.kv WHERE k = ? AND c = ?")
        .await;
    let execute = |parameters| {
        Request::Execute(Execute {
            id: select.id.clone(),
            result_metadata_id: None,
            parameters,
        })
    };
    match client.request(execute(named(&[("c", 0), ("k", 1)]))).await {
        Response::Result(ResultBody::Rows(rows)) => assert_eq!(rows.rows_count, 1),
        other => panic!("{other:?}"),
    }
    invalid(
        &client.request(execute(named(&[("k", 1), ("zz", 0)]))).await,
        "there were 2 markers(?) in CQL but 1 bound variables",
    );
    // A LIMIT is an int, a USING TIMESTAMP a bigint, of exactly their widths.
    let limited = client
        .prepare("SELECT v FROM ks.kv WHERE k = ? LIMIT ?")
        .await;
    let long = Value::Set(Bytes::copy_from_slice(&5i64.to_be_bytes()));
    invalid(
        &client.execute(&limited.id, vec![int(1), long]).await,
        "Expected 4 or 0 byte int (8)",
    );
    let stamped = client
        .prepare("INSERT INTO ks.kv (k, c, v) VALUES (1, 2, 3) USING TIMESTAMP ?")
        .await;
    invalid(
        &client.execute(&stamped.id, vec![int(5)]).await,
        "Expected 8 or 0 byte long (4)",
    );
    // Names match exactly, as in Cassandra.
    invalid(
        &client.request(execute(named(&[("K", 1), ("c", 0)]))).await,
        "there were 2 markers(?) in CQL but 1 bound variables",
    );
    node.stop().await;
}
