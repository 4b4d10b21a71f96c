//! Listing a tenant's events: pages in id order ([`super::pages`]) of what
//! each backend reads between two event ids.

use super::pages::{Page, PageQuery, Paged, read_page};
use super::{EventRecord, Store, StoreError};
use crate::ids::{EVENT, EventId, TenantId};

/// What a page of events reads.
pub(crate) type EventQuery = PageQuery<EventId>;

/// One page of events, in the list's order.
pub(crate) type EventPage = Page<EventRecord>;

impl Paged for EventRecord {
    type Id = EventId;
    const PREFIX: &'static str = EVENT;
    fn page_id(&self) -> &EventId {
        &self.id
    }
}

impl Store {
    /// A page of `tenant`'s events that `keep` keeps.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_events(
        &self,
        tenant: &TenantId,
        query: &EventQuery,
        keep: impl Fn(&EventRecord) -> bool,
    ) -> Result<EventPage, StoreError> {
        read_page(
            query,
            |window, order, want| async move {
                on_backend!(self, s => s.events_between(tenant, &window, order, want).await)
            },
            keep,
        )
        .await
    }
}
