//! One step of replaying what an endpoint missed: reads a batch of the
//! tenant's events in the task's time range, oldest first, and gives the
//! endpoint a delivery of each one that reaches it as it is now (its types,
//! channels and filter) and has none to it, saving where it got to. A step
//! taken again finds those deliveries there, and adds none twice.

use super::{Step, StepError};
use crate::context::AppContext;
use crate::ids::EventId;
use crate::routing::{self, EventRoute};
use crate::store::{EventQuery, ListCursor, ListOrder, TaskRecord, TaskWork};

/// Most events one step reads.
const PAGE: usize = 250;

/// Takes one step of `task`, a replay of an endpoint's missing deliveries.
pub(super) async fn step(ctx: &AppContext, task: &mut TaskRecord) -> Result<Step, StepError> {
    let TaskWork::ReplayMissing {
        endpoint_id,
        since_ms,
        until_ms,
    } = &task.work
    else {
        return Err(StepError::Failed(
            "not a replay of missing deliveries".into(),
        ));
    };
    let tenant = task.tenant_id.clone();
    let Some(endpoint) = ctx.store.endpoint(&tenant, endpoint_id).await? else {
        return Err(StepError::Failed("the endpoint was deleted".into()));
    };
    let query = EventQuery {
        order: ListOrder::OldestFirst,
        cursor: task
            .resume
            .clone()
            .map(|id| ListCursor::After(EventId::from(id))),
        since_ms: Some(*since_ms),
        until_ms: *until_ms,
        limit: (ctx.config.tasks.batch as usize).min(PAGE),
    };
    let page = ctx.store.list_events(&tenant, &query, |_| true).await?;
    let endpoints = std::slice::from_ref(&endpoint);
    for ev in &page.data {
        let route = EventRoute {
            event_type: &ev.event_type,
            channels: &ev.labels.channels,
            payload: &ev.payload,
        };
        let missing = ev.deliveries.iter().all(|(_, ep)| *ep != endpoint.id);
        if missing && !routing::reached(endpoints, &route).is_empty() {
            let now = ctx.clock.now_ms();
            if ctx
                .store
                .add_delivery(&tenant, &ev.id, &endpoint, now)
                .await?
                .is_some()
            {
                ctx.telemetry.counts_changed(&tenant, 1, 0);
                task.changed += 1;
            }
        }
    }
    task.examined += page.scanned as u64;
    task.resume = match page.next {
        Some(ListCursor::After(id) | ListCursor::Before(id)) => Some(id.to_string()),
        None => None,
    };
    Ok(if task.resume.is_some() {
        Step::More
    } else {
        Step::Done
    })
}
