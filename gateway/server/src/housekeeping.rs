//! Periodic upkeep off the delivery path: free-disk checks, alert rules and (on
//! PostgreSQL) vacuuming a churned delivery queue every two seconds; every
//! `sweep_interval`, retention (in small batches, yielding between them, ended
//! background tasks and endpoint stats past their history with it) and the
//! expiry of idempotency keys. Alert rules, the vacuum and the sweeps are
//! singleton work: they run only while the store grants them.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::context::AppContext;
use crate::store::{RetentionRules, Singleton};

/// Events examined per retention batch: small, so delivery never waits on it.
const SWEEP_BATCH: usize = 256;

/// Runs until `shutdown`.
pub(crate) async fn run(ctx: Arc<AppContext>, shutdown: CancellationToken) {
    let mut disk_tick = tokio::time::interval(Duration::from_secs(2));
    let mut sweep_tick = tokio::time::interval(Duration::from_millis(ctx.config.sweep_interval));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = disk_tick.tick() => {
                ctx.store.check_space();
                if granted(&ctx, Singleton::AlertRules).await {
                    ctx.telemetry.alerts().tick(ctx.clock.now_ms());
                }
                if ctx.store.postgres().is_some()
                    && granted(&ctx, Singleton::TableUpkeep).await
                    && let Err(e) = ctx.store.tidy_tables().await
                {
                    tracing::warn!(error = %e, "table upkeep failed; trying again next round");
                }
            }
            _ = sweep_tick.tick() => sweep(&ctx, &shutdown).await,
        }
    }
}

/// Whether the store grants `work` to this gateway now.
async fn granted(ctx: &AppContext, work: Singleton) -> bool {
    match ctx.store.singleton(work).await {
        Ok(grant) => grant.is_some(),
        Err(e) => {
            tracing::warn!(error = %e, work = work.name(), "cannot ask for singleton work; skipped");
            false
        }
    }
}

/// One full pass of retention and idempotency expiry.
async fn sweep(ctx: &AppContext, shutdown: &CancellationToken) {
    if granted(ctx, Singleton::Retention).await {
        retention(ctx, shutdown).await;
        // Ended tasks are kept as long as events, then forgotten.
        let before = ctx.clock.now_ms().saturating_sub(ctx.config.retention);
        if let Err(e) = ctx.store.sweep_tasks(before, SWEEP_BATCH).await {
            tracing::warn!(error = %e, "task sweep failed; retrying next interval");
        }
        stats_history(ctx, shutdown).await;
    }
    if granted(ctx, Singleton::IdempotencySweep).await {
        if let Err(e) = ctx.store.sweep_idempotency(ctx.clock.now_ms()).await {
            tracing::warn!(error = %e, "idempotency sweep failed");
        }
        // Expired portal sessions are refused already; this forgets them.
        let now = ctx.clock.now_ms();
        if let Err(e) = ctx.store.sweep_portal_sessions(now, SWEEP_BATCH).await {
            tracing::warn!(error = %e, "portal session sweep failed");
        }
    }
}

/// Drops endpoint stats buckets older than the history kept, batch by batch,
/// until none is left or shutdown.
async fn stats_history(ctx: &AppContext, shutdown: &CancellationToken) {
    let window = crate::endpoint_stats::StatsWindow::of(&ctx.config.stats);
    let before = window.history_start(ctx.clock.now_ms());
    while !shutdown.is_cancelled() {
        match ctx.store.sweep_endpoint_stats(before, SWEEP_BATCH).await {
            Ok(removed) if removed == SWEEP_BATCH => tokio::task::yield_now().await,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "stats sweep failed; retrying next interval");
                return;
            }
        }
    }
}

/// Retention, batch by batch, until the sweep wraps around or shutdown.
async fn retention(ctx: &AppContext, shutdown: &CancellationToken) {
    let mut cursor = None;
    let mut total = crate::store::SweepStats::default();
    loop {
        let rules = RetentionRules {
            now_ms: ctx.clock.now_ms(),
            retention_ms: ctx.config.retention,
            dlq_retention_ms: ctx.config.dlq_retention,
        };
        match ctx
            .store
            .sweep_retention(cursor.take(), SWEEP_BATCH, rules)
            .await
        {
            Ok((mut stats, next)) => {
                // The moves go to the counts now; the total keeps the tallies.
                for (tenant, (pending, dead)) in std::mem::take(&mut stats.moved) {
                    ctx.telemetry.counts_changed(&tenant, pending, dead);
                }
                total.add(stats);
                match next {
                    Some(c) if !shutdown.is_cancelled() => cursor = Some(c),
                    _ => break,
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "retention sweep failed; retrying next interval");
                break;
            }
        }
        tokio::task::yield_now().await;
    }
    if total != crate::store::SweepStats::default() {
        tracing::info!(
            events_removed = total.events_removed,
            deliveries_removed = total.deliveries_removed,
            deliveries_ended = total.deliveries_ended,
            "retention sweep"
        );
    }
}
