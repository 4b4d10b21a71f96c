//! The upload gate: one compile at a time in the whole gateway, at most
//! [`COMPILE_LIMIT`] for checks 1–9, and [`UPLOADS_PER_HOUR`] uploads per tenant
//! in any rolling hour. Plugin changes (upload, rollback, delete) are also
//! serialised here, so the store and the loaded plugins change in the same order.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::PluginServiceError;
use crate::ids::TenantId;
use crate::plugin_runtime::{COMPILE_LIMIT, CheckedPlugin, PluginError, PluginHost};

/// Uploads a tenant may make in any rolling hour, refused or not.
pub(crate) const UPLOADS_PER_HOUR: usize = 10;
/// How long an upload waits for the compiler before giving up.
const COMPILER_WAIT: Duration = Duration::from_secs(30);
const HOUR_MS: u64 = 60 * 60 * 1_000;

/// The upload limits and the lock over plugin changes.
#[derive(Debug)]
pub(super) struct UploadGate {
    compiler: Arc<Semaphore>,
    changes: tokio::sync::Mutex<()>,
    /// Per tenant, the times of its uploads within the last hour.
    recent: Mutex<HashMap<String, VecDeque<u64>>>,
}

impl Default for UploadGate {
    fn default() -> Self {
        Self {
            compiler: Arc::new(Semaphore::new(1)),
            changes: tokio::sync::Mutex::new(()),
            recent: Mutex::new(HashMap::new()),
        }
    }
}

impl UploadGate {
    /// Counts an upload by `tenant` at `now_ms`.
    ///
    /// # Errors
    /// The milliseconds until the oldest upload of the last hour ages out, when
    /// the tenant already made [`UPLOADS_PER_HOUR`].
    pub(super) fn admit(&self, tenant: &TenantId, now_ms: u64) -> Result<(), u64> {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|_, times| {
            times
                .back()
                .is_some_and(|t| now_ms.saturating_sub(*t) < HOUR_MS)
        });
        let times = recent.entry(tenant.to_string()).or_default();
        while times
            .front()
            .is_some_and(|t| now_ms.saturating_sub(*t) >= HOUR_MS)
        {
            times.pop_front();
        }
        if times.len() >= UPLOADS_PER_HOUR {
            let oldest = times.front().copied().unwrap_or(now_ms);
            return Err((oldest + HOUR_MS).saturating_sub(now_ms));
        }
        times.push_back(now_ms);
        Ok(())
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_uploads_per_tenant_in_any_rolling_hour() {
        let gate = UploadGate::default();
        for i in 0..10 {
            assert_eq!(
                gate.admit(&TenantId::from("a"), 1_000 + i * 60_000),
                Ok(()),
                "upload {i}"
            );
        }
        assert_eq!(
            gate.admit(&TenantId::from("a"), 1_000 + 10 * 60_000),
            Err(HOUR_MS - 10 * 60_000)
        );
        assert_eq!(
            gate.admit(&TenantId::from("b"), 1_000),
            Ok(()),
            "tenants are counted apart"
        );
        // An hour after the first, one slot is free again.
        assert_eq!(gate.admit(&TenantId::from("a"), 1_000 + HOUR_MS), Ok(()));
        assert!(
            gate.admit(&TenantId::from("a"), 1_000 + HOUR_MS + 1)
                .is_err()
        );
    }
}
