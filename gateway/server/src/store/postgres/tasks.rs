//! Background tasks: one row each, the record whole as JSON, the runner's
//! node, token and lease end beside it for claims to read.

use deadpool_postgres::GenericClient;

use super::{PgStore, from_json, ms, pg_error, to_json};
use crate::ids::{TaskId, TenantId};
use crate::store::{StoreError, TASK_SCAN_LIMIT, TaskClaim, TaskPage, TaskRecord};

/// A running task no live node holds, oldest first, locked: never claimed,
/// its lease passed (`$1` now), or its node gone (its presence lock, which
/// `statements::PRESENCE_LOCK_CLASS` names, is no longer held: the process
/// died).
const CLAIMABLE: &str = "SELECT record FROM tasks
     WHERE state = 'running' AND (runner_token IS NULL OR runner_until_ms <= $1
         OR NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
             AND classid = 26727 AND objsubid = 2 AND granted
             AND objid = (hashtext(runner)::bigint & 4294967295)::oid))
     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";

const _: () = assert!(
    super::statements::PRESENCE_LOCK_CLASS == 26727,
    "CLAIMABLE spells it"
);

/// Inserts a new task (alone, or in the transaction that asked for it).
pub(super) async fn insert_task(
    client: &impl GenericClient,
    task: &TaskRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO tasks (id, tenant_id, state, record) VALUES ($1, $2, $3, $4)",
            &[
                &task.id,
                &task.tenant_id,
                &task.state.as_str(),
                &to_json(task),
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// Writes a task over its row, runner columns with it.
async fn write_task(client: &impl GenericClient, task: &TaskRecord) -> Result<(), StoreError> {
    let runner = task.runner.as_ref();
    client
        .execute(
            "UPDATE tasks SET state = $2, runner = $3, runner_token = $4,
                 runner_until_ms = $5, record = $6 WHERE id = $1",
            &[
                &task.id,
                &task.state.as_str(),
                &runner.map(|r| r.node.as_str()),
                &runner.map(|r| r.token.as_str()),
                &ms(runner.map_or(0, |r| r.until_ms)),
                &to_json(task),
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

impl PgStore {
    pub async fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        insert_task(&*self.client().await?, task).await
    }

    pub async fn task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT record FROM tasks WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        row.map(|r| from_json(r.get(0), "task")).transpose()
    }

    pub async fn list_tasks(
        &self,
        tenant: Option<&TenantId>,
        limit: usize,
        cursor: Option<&TaskId>,
    ) -> Result<TaskPage, StoreError> {
        // The index on (tenant_id, id) reads only what is returned: no scan cap
        // is needed beyond the limit, which the API bounds.
        let limit = limit.min(TASK_SCAN_LIMIT);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT record FROM tasks
                 WHERE ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR id < $2)
                 ORDER BY id DESC LIMIT $3",
                &[
                    &tenant.map(TenantId::as_str),
                    &cursor.map(TaskId::as_str),
                    &(limit as i64 + 1),
                ],
            )
            .await
            .map_err(pg_error)?;
        let mut tasks = rows
            .iter()
            .map(|r| from_json::<TaskRecord>(r.get(0), "task"))
            .collect::<Result<Vec<_>, _>>()?;
        let more = tasks.len() > limit;
        tasks.truncate(limit);
        let next = more.then(|| tasks.last().map(|t| t.id.clone())).flatten();
        Ok(TaskPage { tasks, next })
    }

    pub async fn claim_task(&self, claim: &TaskClaim) -> Result<Option<TaskRecord>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let Some(row) = tx
            .query_opt(CLAIMABLE, &[&ms(claim.now_ms)])
            .await
            .map_err(pg_error)?
        else {
            return Ok(None);
        };
        let mut task: TaskRecord = from_json(row.get(0), "task")?;
        task.runner = Some(claim.runner());
        write_task(&tx, &task).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(Some(task))
    }

    pub async fn save_task(&self, task: &TaskRecord, token: &str) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let held = tx
            .query_opt(
                "SELECT 1 FROM tasks WHERE id = $1 AND runner_token = $2 FOR UPDATE",
                &[&task.id, &token],
            )
            .await
            .map_err(pg_error)?
            .is_some();
        if !held {
            return Ok(false);
        }
        write_task(&tx, task).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(true)
    }

    pub(crate) async fn sweep_tasks(
        &self,
        before_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let n = self
            .client()
            .await?
            .execute(
                "DELETE FROM tasks WHERE id IN (
                     SELECT id FROM tasks WHERE state <> 'running'
                       AND (record::jsonb->>'finished_at_ms')::bigint < $1
                     LIMIT $2)",
                &[&ms(before_ms), &(limit as i64)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n as usize)
    }
}
