//! Background tasks: work too long for one request (deleting a tenant,
//! recovering an endpoint), kept in the store so that a restart resumes it and
//! a cluster runs each one on one node at a time.
//!
//! A node claims a running task, which writes a fresh runner token into it and
//! a lease end; each step it takes is saved only where the token is still its
//! own, so a node that lost the task (its lease passed while it was paused)
//! cannot write over the node that took it. Steps are made to be taken again:
//! a task resumed from its last saved step redoes at most one step.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::ids::{EndpointId, TaskId, TenantId};

/// How long a claim holds a task without a saved step; a node that dies
/// gives its tasks up at once on PostgreSQL (its presence lock goes with it),
/// one that is paused keeps them this long.
pub(crate) const TASK_LEASE_MS: u64 = 30_000;

/// Task records a list reads at most per request.
pub(crate) const TASK_SCAN_LIMIT: usize = 1000;

/// A page of tasks, and where the next page starts (`None`: the last page).
#[derive(Debug, Default)]
pub struct TaskPage {
    pub tasks: Vec<TaskRecord>,
    pub next: Option<TaskId>,
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Running,
    Finished,
    Failed,
}

impl TaskState {
    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Finished => "finished",
            Self::Failed => "failed",
        }
    }
}

/// What a task does, with what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskWork {
    /// Removes every record of the tenant, then the tenant.
    TenantDelete,
    /// Replays the endpoint's dead deliveries made from `since_ms` on.
    EndpointRecover {
        endpoint_id: EndpointId,
        since_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until_ms: Option<u64>,
    },
    /// Gives the endpoint a delivery of each event from `since_ms` on that
    /// reaches it now and has none to it.
    ReplayMissing {
        endpoint_id: EndpointId,
        since_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until_ms: Option<u64>,
    },
}

impl TaskWork {
    /// The kind, as shown.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TenantDelete => "tenant_delete",
            Self::EndpointRecover { .. } => "endpoint_recover",
            Self::ReplayMissing { .. } => "replay_missing",
        }
    }
}

/// Which node holds a task, under which token, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRunner {
    pub node: String,
    pub token: String,
    pub until_ms: u64,
}

/// A background task, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: TaskId,
    pub tenant_id: TenantId,
    pub work: TaskWork,
    pub state: TaskState,
    /// Records looked at so far.
    pub examined: u64,
    /// Records changed so far (removed, replayed, created: the kind says).
    pub changed: u64,
    /// Where the next step starts; the task's own business.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<TaskRunner>,
}

impl TaskRecord {
    /// A task that has not started.
    pub(crate) fn new(tenant_id: TenantId, work: TaskWork, now_ms: u64) -> Self {
        Self {
            id: TaskId::generate(now_ms),
            tenant_id,
            work,
            state: TaskState::Running,
            examined: 0,
            changed: 0,
            resume: None,
            error: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            finished_at_ms: None,
            runner: None,
        }
    }

    /// Ends it: finished, or failed with `error`.
    pub(crate) fn end(&mut self, error: Option<String>, now_ms: u64) {
        self.state = match error {
            Some(_) => TaskState::Failed,
            None => TaskState::Finished,
        };
        self.error = error;
        self.finished_at_ms = Some(now_ms);
        self.updated_at_ms = now_ms;
        self.runner = None;
    }

    /// Whether `token` still holds it.
    pub(crate) fn held_by(&self, token: &str) -> bool {
        self.runner.as_ref().is_some_and(|r| r.token == token)
    }
}

/// A claim on a task: who takes it and for how long.
#[derive(Debug, Clone)]
pub struct TaskClaim {
    pub node: String,
    pub token: String,
    pub now_ms: u64,
}

impl TaskClaim {
    /// A claim by `node` with a fresh token.
    pub(crate) fn new(node: &str, now_ms: u64) -> Self {
        Self {
            node: node.to_owned(),
            token: hex::encode(rand::random::<[u8; 16]>()),
            now_ms,
        }
    }

    /// The runner it writes into the task.
    pub(crate) fn runner(&self) -> TaskRunner {
        TaskRunner {
            node: self.node.clone(),
            token: self.token.clone(),
            until_ms: self.now_ms + TASK_LEASE_MS,
        }
    }
}

impl Store {
    /// Stores a new task.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        on_backend!(self, s => s.create_task(task).await)
    }

    /// One task of `tenant`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn task(
        &self,
        tenant: &TenantId,
        id: &TaskId,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let found = on_backend!(self, s => sync s.task(id))?;
        Ok(found.filter(|t| t.tenant_id == *tenant))
    }

    /// One task, whoever's it is (the admin's view, which outlives a deleted tenant).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn any_task(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        on_backend!(self, s => sync s.task(id))
    }

    /// Tasks newest first, of `tenant` or of all, before `cursor` if given,
    /// reading at most [`TASK_SCAN_LIMIT`] records.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_tasks(
        &self,
        tenant: Option<&TenantId>,
        limit: usize,
        cursor: Option<&TaskId>,
    ) -> Result<TaskPage, StoreError> {
        on_backend!(self, s => sync s.list_tasks(tenant, limit, cursor))
    }

    /// Takes a running task no live node holds, for `claim`; `None` if there is none.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn claim_task(&self, claim: &TaskClaim) -> Result<Option<TaskRecord>, StoreError> {
        on_backend!(self, s => s.claim_task(claim).await)
    }

    /// Saves a step of `task`, held by `token`: `false`, and nothing written,
    /// if another claim has taken it since. Saving renews the lease.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn save_task(&self, task: &TaskRecord, token: &str) -> Result<bool, StoreError> {
        on_backend!(self, s => s.save_task(task, token).await)
    }

    /// Forgets up to `limit` tasks that ended before `before_ms`; answers how
    /// many. Running tasks stay, however old.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_tasks(&self, before_ms: u64, limit: usize) -> Result<usize, StoreError> {
        on_backend!(self, s => s.sweep_tasks(before_ms, limit).await)
    }
}
