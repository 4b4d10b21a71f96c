//! The background task runner: each gateway takes one task at a time from the
//! store (`Store::claim_task`), runs it step by step, and saves every step
//! under its claim, so a task outlives the process that started it (a restart
//! or another node resumes it from its last saved step) and two nodes never
//! both advance it.
//!
//! What one step of each kind does is in its own file; a step is bounded
//! (`tasks.batch` records) and may be taken again after a crash.

mod endpoint_recover;
mod replay_missing;
mod tenant_delete;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::context::AppContext;
use crate::store::{StoreError, TASK_LEASE_MS, TaskClaim, TaskRecord, TaskWork};

/// How often an idle runner looks for a task nobody holds.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// How long a runner waits after the store failed a step before trying it again.
const STORE_RETRY: Duration = Duration::from_secs(1);

/// What one step left to do.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// More steps follow.
    More,
    /// The task is done.
    Done,
}

/// Why a step did not complete.
#[derive(Debug, thiserror::Error)]
enum StepError {
    /// The store failed; the step is tried again.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The task cannot go on; it ends failed with this message.
    #[error("{0}")]
    Failed(String),
}

/// Runs tasks until `shutdown`.
pub(crate) async fn run(ctx: Arc<AppContext>, shutdown: CancellationToken) {
    loop {
        let claim = TaskClaim::new(ctx.store.node_id(), ctx.clock.now_ms());
        match ctx.store.claim_task(&claim).await {
            Ok(Some(task)) => {
                tracing::info!(task = %task.id, kind = task.work.kind(), tenant = %task.tenant_id, "task taken");
                run_task(&ctx, task, &claim.token, &shutdown).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "cannot look for tasks; trying again"),
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = ctx.task_wake.notified() => {}
            () = tokio::time::sleep(IDLE_POLL) => {}
        }
    }
}

/// Takes `task`'s steps, saving each under `token`, until it ends, another
/// node takes it, or `shutdown`.
async fn run_task(
    ctx: &AppContext,
    mut task: TaskRecord,
    token: &str,
    shutdown: &CancellationToken,
) {
    let pause = Duration::from_millis(ctx.config.tasks.pause);
    while !shutdown.is_cancelled() {
        let step = match &task.work {
            TaskWork::TenantDelete => tenant_delete::step(ctx, &mut task).await,
            TaskWork::EndpointRecover { .. } => endpoint_recover::step(ctx, &mut task).await,
            TaskWork::ReplayMissing { .. } => replay_missing::step(ctx, &mut task).await,
        };
        let now = ctx.clock.now_ms();
        match step {
            Ok(Step::More) => {}
            Ok(Step::Done) => task.end(None, now),
            Err(StepError::Failed(message)) => {
                tracing::warn!(task = %task.id, error = %message, "task failed");
                task.end(Some(message), now);
            }
            Err(StepError::Store(e)) => {
                tracing::warn!(task = %task.id, error = %e, "task step failed; trying again");
                tokio::time::sleep(STORE_RETRY).await;
                continue;
            }
        }
        task.updated_at_ms = now;
        if let Some(runner) = task.runner.as_mut() {
            runner.until_ms = now + TASK_LEASE_MS;
        }
        match save(ctx, &task, token, shutdown).await {
            Some(true) if task.runner.is_none() => {
                tracing::info!(task = %task.id, state = task.state.as_str(), "task ended");
                return;
            }
            Some(true) => {}
            Some(false) => {
                tracing::warn!(task = %task.id, "task taken by another node; left to it");
                return;
            }
            None => return,
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
}

/// Saves a step, trying again while the store fails; `None` at shutdown (the
/// step unsaved is taken again, which every step allows).
async fn save(
    ctx: &AppContext,
    task: &TaskRecord,
    token: &str,
    shutdown: &CancellationToken,
) -> Option<bool> {
    loop {
        match ctx.store.save_task(task, token).await {
            Ok(held) => return Some(held),
            Err(e) => {
                tracing::warn!(task = %task.id, error = %e, "cannot save a task step; trying again");
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return None,
            () = tokio::time::sleep(STORE_RETRY) => {}
        }
    }
}
