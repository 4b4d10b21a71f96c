//! The upload gate: one compile at a time in the whole gateway, and at most
//! [`COMPILE_LIMIT`] for checks 1–9. Plugin changes (upload, rollback, delete)
//! are also serialised here, so the store and the loaded plugins change in the
//! same order. [`UPLOADS_PER_HOUR`] per tenant in any rolling hour are counted
//! in the store (`Store::admit_plugin_upload`), so the limit holds across the
//! nodes of a cluster and across restarts.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::PluginServiceError;
use crate::plugin_runtime::{COMPILE_LIMIT, CheckedPlugin, PluginError, PluginHost};

/// Uploads a tenant may make in any rolling hour, refused or not.
pub(crate) const UPLOADS_PER_HOUR: usize = 10;
/// How long an upload waits for the compiler before giving up.
const COMPILER_WAIT: Duration = Duration::from_secs(30);
/// The window [`UPLOADS_PER_HOUR`] counts in.
pub(crate) const HOUR_MS: u64 = 60 * 60 * 1_000;

/// The compiler's one place and the lock over plugin changes.
#[derive(Debug)]
pub(super) struct UploadGate {
    compiler: Arc<Semaphore>,
    changes: tokio::sync::Mutex<()>,
}

impl Default for UploadGate {
    fn default() -> Self {
        Self {
            compiler: Arc::new(Semaphore::new(1)),
            changes: tokio::sync::Mutex::new(()),
        }
    }
}

impl UploadGate {
    /// Holds plugin changes (the store write and the host's update) in order.
    pub(super) async fn changes(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.changes.lock().await
    }

    /// Runs upload checks 1–9 on a blocking thread, one upload at a time, within
    /// [`COMPILE_LIMIT`]. The compiler stays taken until the checks really end, even
    /// after the caller stopped waiting, so two compiles never overlap.
    ///
    /// # Errors
    /// `Rejected` naming the failed check (an overrun of the limit is a compile
    /// refusal); `Busy` when the compiler stayed taken for 30 s.
    pub(super) async fn check(
        &self,
        host: &Arc<PluginHost>,
        bytes: bytes::Bytes,
    ) -> Result<CheckedPlugin, PluginServiceError> {
        let compiler = Arc::clone(&self.compiler);
        let permit = tokio::time::timeout(COMPILER_WAIT, compiler.acquire_owned())
            .await
            .map_err(|_| PluginServiceError::Busy)?
            .map_err(|_| PluginServiceError::Busy)?;
        let job_host = Arc::clone(host);
        let job = tokio::task::spawn_blocking(move || {
            let checked = job_host.check(&bytes);
            drop(permit);
            checked
        });
        let refused = match tokio::time::timeout(COMPILE_LIMIT, job).await {
            Ok(Ok(checked)) => return checked.map_err(PluginServiceError::Rejected),
            Ok(Err(e)) => PluginError::Engine(format!("the checks stopped: {e}")),
            Err(_) => PluginError::Compile(format!(
                "checks did not finish within {} s",
                COMPILE_LIMIT.as_secs()
            )),
        };
        Err(PluginServiceError::Rejected(refused))
    }
}
