//! Attempts by id and in lists: a tenant's attempts, or one endpoint's, read
//! through an index ordered by attempt id (so by start time); one delivery's
//! or one event's, read from their attempt logs. Pages are made by
//! [`super::pages`], the same as every list.
//!
//! Only attempts with ids are listed: those made before attempts had ids stay
//! on their delivery's log.

use super::pages::{IdOrder, IdWindow, Page, PageQuery, Paged, read_page};
use super::{AttemptOf, AttemptRecord, Recorded, Store, StoreError};
use crate::ids::{ATTEMPT, AttemptId, DeliveryId, EndpointId, EventId, TenantId};

/// An attempt as a list or a read by id shows it: the record with its id and
/// what it was an attempt of.
#[derive(Debug, Clone)]
pub struct ListedAttempt {
    pub id: AttemptId,
    pub of: AttemptOf,
    pub record: AttemptRecord,
}

impl ListedAttempt {
    /// The listed form of `record`, if it has an id (`None`: made before
    /// attempts had ids).
    pub(crate) fn new(record: AttemptRecord) -> Option<Self> {
        Some(Self {
            id: record.id.clone()?,
            of: record.of.clone()?,
            record,
        })
    }
}

impl Paged for ListedAttempt {
    type Id = AttemptId;
    const PREFIX: &'static str = ATTEMPT;
    fn page_id(&self) -> &AttemptId {
        &self.id
    }
}

/// Whose attempts a list reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptScope {
    /// Every attempt of the tenant, through its index.
    Tenant,
    /// One endpoint's, through its index.
    Endpoint(EndpointId),
    /// One delivery's, from its log.
    Delivery(DeliveryId),
    /// Every delivery's of one event, from their logs.
    Event(EventId),
}

/// What a page of attempts reads.
pub(crate) type AttemptQuery = PageQuery<AttemptId>;

/// One page of attempts, in the list's order.
pub(crate) type AttemptPage = Page<ListedAttempt>;

impl Store {
    /// A page of `tenant`'s attempts in `scope` that `keep` keeps.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_attempts(
        &self,
        tenant: &TenantId,
        scope: &AttemptScope,
        query: &AttemptQuery,
        keep: impl Fn(&ListedAttempt) -> bool,
    ) -> Result<AttemptPage, StoreError> {
        let endpoint = match scope {
            AttemptScope::Tenant => None,
            AttemptScope::Endpoint(ep) => Some(ep),
            AttemptScope::Delivery(_) | AttemptScope::Event(_) => {
                let logged = self.logged_attempts(tenant, scope).await?;
                return read_page(
                    query,
                    |window, order, want| {
                        std::future::ready(Ok(in_window(&logged, &window, order, want)))
                    },
                    keep,
                )
                .await;
            }
        };
        read_page(
            query,
            |window, order, want| async move {
                on_backend!(self, s => s.attempts_between(tenant, endpoint, &window, order, want).await)
            },
            keep,
        )
        .await
    }

    /// One of `tenant`'s attempts by id.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn attempt(
        &self,
        tenant: &TenantId,
        id: &AttemptId,
    ) -> Result<Option<ListedAttempt>, StoreError> {
        on_backend!(self, s => s.attempt_by_id(tenant, id).await)
    }

    /// The listed attempts of one delivery or one event's deliveries, oldest
    /// first: a delivery's log is bounded by its retry policy, so this reads
    /// them whole.
    async fn logged_attempts(
        &self,
        tenant: &TenantId,
        scope: &AttemptScope,
    ) -> Result<Vec<ListedAttempt>, StoreError> {
        let deliveries: Vec<DeliveryId> = match scope {
            AttemptScope::Delivery(id) => match self.delivery(tenant, id).await? {
                Some(d) => vec![d.id],
                None => Vec::new(),
            },
            AttemptScope::Event(id) => match self.event(tenant, id).await? {
                Some(ev) => ev.deliveries.into_iter().map(|(d, _)| d).collect(),
                None => Vec::new(),
            },
            AttemptScope::Tenant | AttemptScope::Endpoint(_) => Vec::new(),
        };
        let mut out = Vec::new();
        for d in &deliveries {
            out.extend(
                self.attempt_log(tenant, d)
                    .await?
                    .into_iter()
                    .filter_map(ListedAttempt::new),
            );
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}

/// Up to `want` of `sorted` (oldest first) strictly inside `window`, in `order`.
fn in_window(
    sorted: &[ListedAttempt],
    window: &IdWindow,
    order: IdOrder,
    want: usize,
) -> Vec<ListedAttempt> {
    let inside = |a: &&ListedAttempt| {
        window.after.as_deref().is_none_or(|w| a.id.as_str() > w)
            && window.before.as_deref().is_none_or(|w| a.id.as_str() < w)
    };
    match order {
        IdOrder::Ascending => sorted.iter().filter(inside).take(want).cloned().collect(),
        IdOrder::Descending => sorted
            .iter()
            .rev()
            .filter(inside)
            .take(want)
            .cloned()
            .collect(),
    }
}

/// How an attempt ended its turn: the delivery was settled delivered, a retry
/// was scheduled, the delivery ended dead, or its transform skipped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    Retry,
    Dead,
    Skipped,
}

impl AttemptOutcome {
    pub const ALL: [Self; 4] = [Self::Delivered, Self::Retry, Self::Dead, Self::Skipped];

    /// The name the API shows and filters by.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retry => "retry",
            Self::Dead => "dead",
            Self::Skipped => "skipped",
        }
    }

    /// The outcome named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// The class of an attempt's answer: its status's hundreds, or a transport
/// failure (no status at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    Success,
    Redirect,
    ClientError,
    ServerError,
    Transport,
}

impl StatusClass {
    pub const ALL: [Self; 5] = [
        Self::Success,
        Self::Redirect,
        Self::ClientError,
        Self::ServerError,
        Self::Transport,
    ];

    /// The name the API filters by (`2xx` ... `5xx`, `transport`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "2xx",
            Self::Redirect => "3xx",
            Self::ClientError => "4xx",
            Self::ServerError => "5xx",
            Self::Transport => "transport",
        }
    }

    /// The class named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl AttemptRecord {
    /// How the attempt ended its turn.
    pub fn outcome(&self) -> AttemptOutcome {
        if self.verdict == Recorded::Known(crate::policy::VerdictKind::Skipped) {
            AttemptOutcome::Skipped
        } else if self.dead_reason.is_some() {
            AttemptOutcome::Dead
        } else if self.next_attempt_at_ms.is_some() {
            AttemptOutcome::Retry
        } else {
            AttemptOutcome::Delivered
        }
    }

    /// The class of its answer. A status outside 200–599 (a receiver's 1xx
    /// or nonsense) counts with the transport failures: it is no answer.
    pub fn status_class(&self) -> StatusClass {
        match self.status {
            Some(200..=299) => StatusClass::Success,
            Some(300..=399) => StatusClass::Redirect,
            Some(400..=499) => StatusClass::ClientError,
            Some(500..=599) => StatusClass::ServerError,
            _ => StatusClass::Transport,
        }
    }
}
