//! HTTP servers that run until the node stops: the admin API (an axum router) and the DynamoDB
//! endpoint (its own HTTP/1.1 connections, `khata_dynamo::http1`, each served on one of the
//! endpoint's request threads: [`crate::request_threads`]).

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpStream};
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

    /// Serve each connection of `listener` with `serve` (given the socket, `TCP_NODELAY` on,
    /// and a flag that turns true when the server stops), one task per connection on one of
    /// `threads`, dealt round robin. Stopping works as for [`HttpServer::start`]: no new
    /// connections; `serve` is to finish the request it is answering and return; then the
    /// threads stop.
    pub fn start_connections<F, Fut>(
        name: &'static str,
        listener: TcpListener,
        serve: F,
        threads: RequestThreads,
    ) -> std::io::Result<Self>
    where
        F: Fn(TcpStream, watch::Receiver<bool>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_connections(name, listener, serve, threads, stopped));
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

/// The accept loop of [`HttpServer::start_connections`]. Dropping it (an aborted shutdown)
/// drops the connections' tasks with it.
async fn serve_connections<F, Fut>(
    name: &'static str,
    listener: TcpListener,
    serve: F,
    threads: RequestThreads,
    mut stopped: oneshot::Receiver<()>,
) where
    F: Fn(TcpStream, watch::Receiver<bool>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = std::io::Result<()>> + Send + 'static,
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
                let serve = serve.clone();
                let closing = closing_rx.clone();
                connections.spawn_on(async move {
                    let stream = match TcpStream::from_std(stream) {
                        Ok(stream) => stream,
                        Err(e) => {
                            warn!(error = %e, "{name} could not take a connection over");
                            return;
                        }
                    };
                    if let Err(e) = serve(stream, closing).await {
                        debug!(error = %e, "{name} connection ended");
                    }
                }, threads.next());
            }
        }
    }
    drop(listener);
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    // The connections are done: stop their threads (dropping what their requests left, as
    // the node's runtime would at its end).
    let _ = tokio::task::spawn_blocking(move || threads.stop()).await;
}
