//! Background tasks: one record each, and an entry per running task that
//! claims read. One process owns the embedded store and runs one task at a
//! time, so a claim may take any running task: one still marked as held was
//! held by a process that has since ended.

use super::{SledStore, StoreError, keys, records};
use crate::ids::{TaskId, TenantId};
use crate::store::{TASK_SCAN_LIMIT, TaskClaim, TaskPage, TaskRecord, TaskState};

impl SledStore {
    pub(crate) async fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        let mut batch = super::Writes::default();
        batch.insert(keys::task(&task.id), records::encode(task));
        if task.state == TaskState::Running {
            batch.insert(keys::running_task(&task.id), b"".to_vec());
        }
        self.commit(batch).await?;
        Ok(())
    }

    pub(crate) fn task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.get(&keys::task(id))
    }

    /// Tasks newest first; a tenant's are found among all, reading at most
    /// [`TASK_SCAN_LIMIT`] records per call.
    pub(crate) fn list_tasks(
        &self,
        tenant: Option<&TenantId>,
        limit: usize,
        cursor: Option<&TaskId>,
    ) -> Result<TaskPage, StoreError> {
        let end = cursor.map_or_else(|| keys::prefix_end(&keys::tasks()), |c| keys::task(c));
        let mut page = TaskPage::default();
        let scan = self.scan(move |r| r.range(keys::tasks()..end).rev());
        for (read, kv) in scan.enumerate() {
            let (_, v) = kv?;
            let task: TaskRecord = records::decode(&v)?;
            if page.tasks.len() == limit || read == TASK_SCAN_LIMIT {
                return Ok(page);
            }
            page.next = Some(task.id.clone());
            if tenant.is_none_or(|t| task.tenant_id == *t) {
                page.tasks.push(task);
            }
        }
        page.next = None;
        Ok(page)
    }

    pub(crate) async fn claim_task(
        &self,
        claim: &TaskClaim,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let running: Vec<_> = self
            .records()?
            .scan_prefix(keys::running_tasks())
            .keys()
            .collect::<Result<_, _>>()?;
        let prefix = keys::running_tasks().len();
        for key in running {
            let id = String::from_utf8_lossy(&key[prefix..]).into_owned();
            let mut batch = super::Writes::default();
            match self.task(&id)? {
                Some(mut task) if task.state == TaskState::Running => {
                    task.runner = Some(claim.runner());
                    batch.insert(keys::task(&id), records::encode(&task));
                    self.commit(batch).await?;
                    return Ok(Some(task));
                }
                // An entry left without a running task behind it.
                _ => {
                    batch.remove(&key);
                    self.commit(batch).await?;
                }
            }
        }
        Ok(None)
    }

    pub(crate) async fn save_task(
        &self,
        task: &TaskRecord,
        token: &str,
    ) -> Result<bool, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(stored) = self.task(&task.id)? else {
            return Ok(false);
        };
        if !stored.held_by(token) {
            return Ok(false);
        }
        let mut batch = super::Writes::default();
        batch.insert(keys::task(&task.id), records::encode(task));
        if task.state != TaskState::Running {
            batch.remove(keys::running_task(&task.id));
        }
        self.commit(batch).await?;
        Ok(true)
    }

    pub(crate) async fn sweep_tasks(
        &self,
        before_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let mut gone = super::Writes::default();
        let mut n = 0;
        for kv in self.scan(|r| r.scan_prefix(keys::tasks())) {
            let (k, v) = kv?;
            let task: TaskRecord = records::decode(&v)?;
            if task.finished_at_ms.is_some_and(|at| at < before_ms) {
                gone.require_unchanged(&k, v.to_vec());
                gone.remove(&k);
                n += 1;
                if n == limit {
                    break;
                }
            }
        }
        if n > 0 {
            self.commit(gone).await?;
        }
        Ok(n)
    }
}
