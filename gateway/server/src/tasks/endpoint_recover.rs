//! One step of recovering an endpoint: replays a batch of its dead deliveries
//! made in the task's time range, oldest page first as the delivery list
//! reads them, saving the list's cursor. A step taken again finds the ones it
//! replayed pending, and leaves them.

use super::{Step, StepError};
use crate::context::AppContext;
use crate::store::{DeliveryFilter, DeliveryState, ReplayOutcome, TaskRecord, TaskWork};

/// Most deliveries one page of the list holds.
const PAGE: usize = 250;

/// Takes one step of `task`, an endpoint recovery.
pub(super) async fn step(ctx: &AppContext, task: &mut TaskRecord) -> Result<Step, StepError> {
    let TaskWork::EndpointRecover {
        endpoint_id,
        since_ms,
        until_ms,
    } = &task.work
    else {
        return Err(StepError::Failed("not an endpoint recovery".into()));
    };
    let filter = DeliveryFilter {
        state: Some(DeliveryState::Dead),
        endpoint_id: Some(endpoint_id.to_string()),
        since_ms: Some(*since_ms),
        until_ms: *until_ms,
        ..DeliveryFilter::default()
    };
    let tenant = task.tenant_id.clone();
    let limit = (ctx.config.tasks.batch as usize).min(PAGE);
    let page = ctx
        .store
        .list_deliveries(&tenant, &filter, |_| true, limit, task.resume.as_deref())
        .await?;
    for d in &page.data {
        let now = ctx.clock.now_ms();
        match ctx
            .writes
            .replay_delivery(&tenant, &d.id, false, now)
            .await?
        {
            ReplayOutcome::Replayed(..) => task.changed += 1,
            ReplayOutcome::EndpointGone => {
                return Err(StepError::Failed("the endpoint was deleted".into()));
            }
            // Replayed by someone else since it was listed, or gone.
            ReplayOutcome::Pending | ReplayOutcome::NotFound | ReplayOutcome::NeedsForce => {}
        }
    }
    task.examined += page.scanned as u64;
    task.resume = page.next_cursor;
    Ok(if task.resume.is_some() {
        Step::More
    } else {
        Step::Done
    })
}
