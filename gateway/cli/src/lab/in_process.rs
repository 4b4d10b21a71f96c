//! A gateway running in this process on `127.0.0.1:0`, through the library's
//! `run_with`: what the demo, the benchmarks and the end-to-end tests start.
//!
//! It is stopped (gracefully) by [`InProcessGateway::stop`], or told to stop when
//! dropped.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hookgate_server::Config;
use hookgate_server::{RunError, RunOptions, run_with};
use http::Method;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::gateway_api::GatewayApi;

/// How long a started gateway may take to answer `/healthz`.
const READY_LIMIT: Duration = Duration::from_secs(20);

/// Why a gateway did not start or did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot bind a loopback port: {0}")]
    Bind(#[from] std::io::Error),
    #[error("the gateway did not answer /healthz within {READY_LIMIT:?}")]
    NotReady,
    #[error("the gateway stopped: {0}")]
    Stopped(String),
}

/// A gateway running in this process.
pub struct InProcessGateway {
    pub addr: SocketAddr,
    /// `http://127.0.0.1:port`.
    pub base: String,
    shutdown: CancellationToken,
    task: Option<JoinHandle<Result<(), RunError>>>,
}

impl InProcessGateway {
    /// Starts a gateway with `config` and `options` on a free loopback port, and
    /// waits (bounded) until its router answers `/healthz` (with any status: a
    /// gateway short of disk answers 503).
    ///
    /// # Errors
    /// When no port can be bound, or the gateway stops or stays silent.
    pub async fn start(config: Config, options: RunOptions) -> Result<Self, LaunchError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(run_with(config, listener, shutdown.clone(), options));
        let mut gateway = Self {
            addr,
            base: format!("http://{addr}"),
            shutdown,
            task: Some(task),
        };
        gateway.wait_ready().await?;
        Ok(gateway)
    }

    /// The listener is bound from the start; the router answers a little later.
    async fn wait_ready(&mut self) -> Result<(), LaunchError> {
        let api = GatewayApi::new(self.addr, "").map_err(|e| LaunchError::Stopped(e.0))?;
        let deadline = Instant::now() + READY_LIMIT;
        while Instant::now() < deadline {
            if api.call(Method::GET, "/healthz", None).await.is_ok() {
                return Ok(());
            }
            if self.task.as_ref().is_some_and(JoinHandle::is_finished) {
                return Err(LaunchError::Stopped(self.exited().await));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Err(LaunchError::NotReady)
    }

    /// Waits until the gateway stops on its own; says why. Cancel-safe, so it can
    /// race other work in a `select!`.
    pub async fn exited(&mut self) -> String {
        let Some(task) = self.task.as_mut() else {
            return "stopped".to_owned();
        };
        let why = match task.await {
            Ok(Ok(())) => "stopped".to_owned(),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
        self.task = None;
        why
    }

    /// Tells the gateway to stop, without waiting.
    pub fn cancel(&self) {
        self.shutdown.cancel();
    }

    /// Stops the gateway and waits for it to exit.
    ///
    /// # Errors
    /// When its run ended with an error (or panicked).
    pub async fn stop(mut self) -> Result<(), LaunchError> {
        self.shutdown.cancel();
        match self.task.take() {
            Some(task) => match task.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(LaunchError::Stopped(e.to_string())),
                Err(e) => Err(LaunchError::Stopped(e.to_string())),
            },
            None => Ok(()),
        }
    }

    /// Stops the gateway, waiting for it at most `limit`.
    pub async fn stop_within(self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.stop()).await;
    }
}

impl Drop for InProcessGateway {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
