//! An axum router served on a listener until the node stops: the admin API and the DynamoDB
//! endpoint both run in one of these.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracing::warn;

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
