//! HTTP servers that run until the node stops: the admin API (an axum router) and the DynamoDB
//! endpoint (a plain hyper service on HTTP/1.1 connections, which spares each request axum's
//! routing and boxed bodies, each connection served on one of the endpoint's request threads:
//! [`crate::request_threads`]).

use std::convert::Infallible;
use std::error::Error as StdError;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, warn};

use crate::request_threads::RequestThreads;

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    /// What it serves, for log lines.
    name: &'static str,
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl HttpServer {
    /// Serve `router` on `listener`.
    pub fn start(
        name: &'static str,
        listener: TcpListener,
        router: Router,
    ) -> std::io::Result<Self> {
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        let task = tokio::spawn(async move {
            if let Err(e) = serve.await {
                warn!(error = %e, "{name} stopped");
            }
        });
        Ok(HttpServer {
            name,
            address,
            stop,
            task,
        })
    }

    /// Serve `service` on `listener` over HTTP/1.1 (keep-alive, pipelining as hyper does it),
    /// one task per connection on one of `threads`, dealt round robin, `TCP_NODELAY` on.
    /// Stopping works as for [`HttpServer::start`]: no new connections, each connection
    /// finishes the request it is answering and closes; then the threads stop.
    pub fn start_service<S, B>(
        name: &'static str,
        listener: TcpListener,
        service: S,
        threads: RequestThreads,
    ) -> std::io::Result<Self>
    where
        S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_connections(name, listener, service, threads, stopped));
        Ok(HttpServer {
            name,
            address,
            stop,
            task,
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stop accepting; requests in flight finish (idle keep-alive connections close) for up
    /// to `grace`, then the rest are dropped. (A major compaction the admin API started
    /// carries on in its blocking thread until it ends.)
    pub async fn shutdown(self, grace: Duration) {
        let _ = self.stop.send(());
        let mut task = self.task;
        if tokio::time::timeout(grace, &mut task).await.is_err() {
            warn!(
                "{} requests still running at shutdown; dropping them",
                self.name
            );
            task.abort();
        }
    }
}

/// The accept loop of [`HttpServer::start_service`]. Dropping it (an aborted shutdown) drops
/// the connections' tasks with it.
async fn serve_connections<S, B>(
    name: &'static str,
    listener: TcpListener,
    service: S,
    threads: RequestThreads,
    mut stopped: oneshot::Receiver<()>,
) where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let (closing, closing_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little, as axum does.
                        warn!(error = %e, "{name} could not accept a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                // The socket moves to the request thread's own event loop.
                let stream = match stream.into_std() {
                    Ok(stream) => stream,
                    Err(e) => {
                        warn!(error = %e, "{name} could not hand a connection over");
                        continue;
                    }
                };
                let service = service.clone();
                let mut closing = closing_rx.clone();
                connections.spawn_on(async move {
                    let stream = match tokio::net::TcpStream::from_std(stream) {
                        Ok(stream) => stream,
                        Err(e) => {
                            warn!(error = %e, "{name} could not take a connection over");
                            return;
                        }
                    };
                    let connection =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    tokio::pin!(connection);
                    let result = tokio::select! {
                        result = connection.as_mut() => result,
                        _ = closing.changed() => {
                            connection.as_mut().graceful_shutdown();
                            connection.await
                        }
                    };
                    if let Err(e) = result {
                        debug!(error = %e, "{name} connection ended");
                    }
                }, threads.next());
            }
        }
    }
    drop(listener);
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    // The connections are done: stop their threads (dropping what their requests left, such
    // as a write's task whose client went away, as the node's runtime would at its end).
    let _ = tokio::task::spawn_blocking(move || threads.stop()).await;
}
