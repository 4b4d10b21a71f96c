//! One step of deleting a tenant. Its delete was accepted already: the tenant
//! takes no new work and names nothing. The steps remove the rest in order:
//! its endpoints and its operator endpoints (through their own delete, so the
//! scheduler lets go of them and their pending deliveries end), its plugins (so the plugin host unloads
//! them), then its records and its operator endpoints' in batches, and last the tenant's own record.
//! `resume` says which part the next step works on.

use super::{Step, StepError};
use crate::context::AppContext;
use crate::operator_events::tenant_namespace;
use crate::plugins::PluginServiceError;
use crate::store::TaskRecord;

/// The parts, in order, as `resume` names them.
const PLUGINS: &str = "plugins";
const RECORDS: &str = "records";

/// Takes one step of `task`, a tenant delete.
pub(super) async fn step(ctx: &AppContext, task: &mut TaskRecord) -> Result<Step, StepError> {
    let tenant = task.tenant_id.clone();
    let batch = ctx.config.tasks.batch as usize;
    match task.resume.as_deref() {
        None => {
            // Endpoints until a batch's worth of deliveries has ended: its
            // own, then its operator endpoints.
            let mut endpoints = ctx.store.endpoints_of(&tenant).await?;
            endpoints.extend(ctx.store.endpoints_of(&tenant_namespace(&tenant)).await?);
            if endpoints.is_empty() {
                task.resume = Some(PLUGINS.into());
                return Ok(Step::More);
            }
            let mut ended = 0;
            for ep in endpoints {
                ended += ctx.store.delete_endpoint(&ep, ctx.clock.now_ms()).await?;
                ctx.telemetry.alerts().forget_endpoint(&ep.id);
                task.examined += 1;
                task.changed += 1;
                if ended >= batch {
                    break;
                }
            }
            Ok(Step::More)
        }
        Some(PLUGINS) => {
            for plugin in ctx.store.plugins_of(&tenant).await? {
                match ctx.plugins.delete(&tenant, &plugin.name).await {
                    Ok(()) | Err(PluginServiceError::NotFound) => {}
                    // The config owns it; its stored versions go with the records.
                    Err(PluginServiceError::Preloaded { .. }) => {}
                    Err(PluginServiceError::Store(e)) => return Err(e.into()),
                    Err(e) => {
                        return Err(StepError::Failed(format!("plugin {}: {e}", plugin.name)));
                    }
                }
                task.examined += 1;
                task.changed += 1;
            }
            task.resume = Some(RECORDS.into());
            Ok(Step::More)
        }
        Some(RECORDS) => {
            // Its customers' portal sessions end before anything else goes.
            ctx.store.revoke_portal_sessions(&tenant).await?;
            let mut removed = ctx.store.purge_tenant(&tenant, batch).await?;
            if removed == 0 {
                let ns = tenant_namespace(&tenant);
                removed = ctx.store.purge_tenant(&ns, batch).await?;
            }
            task.examined += removed as u64;
            task.changed += removed as u64;
            if removed > 0 {
                return Ok(Step::More);
            }
            ctx.store.remove_tenant(&tenant).await?;
            ctx.telemetry.tenant_removed(&tenant);
            Ok(Step::Done)
        }
        Some(other) => Err(StepError::Failed(format!(
            "unknown step {other:?} (written by a newer hookgate?)"
        ))),
    }
}
