//! The event-type catalog as ingest and endpoint writes consult it: every type
//! held in memory (the catalog is bounded by `limits.catalog_event_types`),
//! each validating type's schema compiled once. It is read again whole when a
//! type changes, here or on another node (the store's change feed), and once a
//! minute besides, so a change notice lost between nodes heals by itself.
//! Reading it again reuses the compiled schemas of types that did not change.

mod openapi_import;
mod schema;

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

pub(crate) use openapi_import::{ImportError, ImportedType, types_of_document};
pub(crate) use schema::{PayloadRejected, PayloadSchema};

use crate::event_type;
use crate::store::{Change, Changes, EventTypeRecord, Store, StoreError};

/// How often the catalog is read again even if no change was heard.
const REFRESH: Duration = Duration::from_secs(60);
/// Types read per store call while reading the catalog whole.
const READ_PAGE: usize = 500;

/// One type as the catalog holds it.
#[derive(Debug)]
struct Entry {
    record: EventTypeRecord,
    /// Compiled when the type validates and has a schema.
    schema: Option<Arc<PayloadSchema>>,
}

/// Why an endpoint's subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SubscriptionRefused {
    #[error("event type {0} is not in the catalog (this gateway accepts only catalog types)")]
    Unknown(String),
    #[error("event type {0} is archived: it cannot be newly subscribed")]
    Archived(String),
}

impl SubscriptionRefused {
    /// The name refused.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Unknown(n) | Self::Archived(n) => n,
        }
    }
}

/// The catalog in memory; shared by the API handlers.
pub(crate) struct EventCatalog {
    store: Store,
    types: RwLock<Arc<HashMap<String, Entry>>>,
}

impl EventCatalog {
    /// The catalog as the store holds it now.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn load(store: Store) -> Result<Self, StoreError> {
        let catalog = Self {
            store,
            types: RwLock::default(),
        };
        catalog.reload().await?;
        Ok(catalog)
    }

    fn current(&self) -> Arc<HashMap<String, Entry>> {
        Arc::clone(&self.types.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Reads the catalog again whole, keeping the compiled schemas of types
    /// whose schema and flag did not change.
    ///
    /// # Errors
    /// On a storage failure (the catalog held stays as it was).
    pub(crate) async fn reload(&self) -> Result<(), StoreError> {
        let before = self.current();
        let mut types = HashMap::with_capacity(before.len());
        let mut after: Option<String> = None;
        loop {
            let page = self.store.event_types(after.as_deref(), READ_PAGE).await?;
            let full = page.len() == READ_PAGE;
            after = page.last().map(|r| r.name.clone());
            for record in page {
                let kept = before.get(&record.name).filter(|old| {
                    old.record.validate == record.validate
                        && old.record.latest_schema() == record.latest_schema()
                });
                let schema = match kept {
                    Some(old) => old.schema.clone(),
                    None => compiled(&record),
                };
                types.insert(record.name.clone(), Entry { record, schema });
            }
            if !full {
                break;
            }
        }
        *self.types.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(types);
        Ok(())
    }

    /// Follows the store's changes until `stop`: the catalog is read again
    /// after each change of a type, and every [`REFRESH`] besides.
    pub(crate) fn spawn_follower(
        self: &Arc<Self>,
        mut changes: Changes,
        stop: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let catalog = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(REFRESH);
            tick.tick().await;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    change = changes.recv() => match change {
                        Some(Change::EventType { .. }) => {}
                        Some(_) => continue,
                        None => return,
                    },
                    _ = tick.tick() => {}
                }
                // Changes heard meanwhile are covered by this one reading.
                while changes.try_recv().is_some() {}
                if let Err(e) = catalog.reload().await {
                    tracing::warn!(error = %e, "cannot read the event-type catalog; keeping the one held");
                }
            }
        })
    }

    /// Checks an ingested payload against its type's schema, if the type
    /// validates. The payload is parsed only then.
    ///
    /// # Errors
    /// Where and why it does not match.
    pub(crate) fn check_payload(
        &self,
        event_type: &str,
        payload: &RawValue,
    ) -> Result<(), PayloadRejected> {
        let types = self.current();
        let Some(schema) = types.get(event_type).and_then(|e| e.schema.as_ref()) else {
            return Ok(());
        };
        // The body was parsed as JSON already, so this parse cannot fail;
        // `null` would then be checked, never skipped.
        let value: Value = serde_json::from_str(payload.get()).unwrap_or(Value::Null);
        schema.check(event_type, &value)
    }

    /// Checks the names an endpoint subscribes to (`wanted`, after `before`,
    /// what it had): a name it newly takes must not be archived and, when
    /// `strict`, must be in the catalog. Patterns (`*`, `order.*`) pass.
    ///
    /// # Errors
    /// The first name refused.
    pub(crate) fn check_subscription(
        &self,
        wanted: &[String],
        before: &[String],
        strict: bool,
    ) -> Result<(), SubscriptionRefused> {
        let types = self.current();
        for name in wanted {
            if event_type::is_pattern(name) || before.contains(name) {
                continue;
            }
            match types.get(name) {
                Some(e) if e.record.archived => {
                    return Err(SubscriptionRefused::Archived(name.clone()));
                }
                None if strict => return Err(SubscriptionRefused::Unknown(name.clone())),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The compiled schema of a validating type. A stored schema was checked when
/// it was written; one this build refuses validates nothing, and says so.
fn compiled(record: &EventTypeRecord) -> Option<Arc<PayloadSchema>> {
    if !record.validate {
        return None;
    }
    let (version, doc) = record.latest_schema()?;
    match PayloadSchema::compile(version, doc) {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => {
            tracing::warn!(event_type = %record.name, error = %e,
                "a stored schema is refused by this build; its payloads are not checked");
            None
        }
    }
}
