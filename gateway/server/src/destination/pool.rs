//! Connected publishers, one per broker endpoint, made on first use and kept
//! while they work.
//!
//! Connecting and publishing both run within the attempt's deadline, so a
//! broker that hangs holds one attempt, never a runtime worker. A failure that
//! may have broken the connection drops it; the next attempt connects afresh.
//! At most [`MAX_CONNECTED`] are kept: past that, the one used longest ago is
//! closed.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::aws::{self, KinesisPublisher, SnsPublisher, SqsPublisher};
use super::connect::{ConnectRefusal, Target};
use super::nats::NatsPublisher;
use super::rabbitmq::RabbitmqPublisher;
use super::redis::RedisPublisher;
use super::{
    AwsHttpClient, BrokerDestination, BrokerMessage, Credentials, NamedCredentials, PublishFailure,
    Publisher, Receipt,
};
use crate::address_guard::AddressGuard;
use crate::policy::FailureKind;

/// The most broker connections one gateway keeps.
pub(crate) const MAX_CONNECTED: usize = 1024;

/// One endpoint's publisher, made once however many attempts wait for it.
struct Slot {
    /// The settings it was made for: a change to them makes a new one.
    destination: BrokerDestination,
    publisher: OnceCell<Arc<dyn Publisher>>,
    last_used_ms: AtomicU64,
}

/// Every broker endpoint's publisher, shared by the delivery workers.
pub(crate) struct Publishers {
    guard: AddressGuard,
    named: BTreeMap<String, NamedCredentials>,
    /// The guarded HTTP client the AWS kinds' SDK sends through.
    aws_http: AwsHttpClient,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    epoch: std::time::Instant,
}

impl Publishers {
    /// Publishers that connect through `guard`, with the operator's `named`
    /// credentials; the AWS kinds send through `aws_http`.
    pub(crate) fn new(
        guard: AddressGuard,
        named: BTreeMap<String, NamedCredentials>,
        aws_http: AwsHttpClient,
    ) -> Self {
        Self {
            guard,
            named,
            aws_http,
            slots: Mutex::new(HashMap::new()),
            epoch: std::time::Instant::now(),
        }
    }

    /// Publishes `message` to `endpoint_id`'s `destination`, connecting first
    /// if need be, all before `deadline`.
    ///
    /// # Errors
    /// [`ConnectRefusal::Blocked`] when the guard refuses the host, else the
    /// failure of the connection or the publish.
    pub(crate) async fn publish(
        &self,
        endpoint_id: &str,
        destination: &BrokerDestination,
        message: &BrokerMessage,
        deadline: Instant,
    ) -> Result<Receipt, ConnectRefusal> {
        let slot = self.slot(endpoint_id, destination);
        let connect = slot
            .publisher
            .get_or_try_init(|| self.connect(endpoint_id, destination, deadline));
        let publisher = match tokio::time::timeout_at(deadline, connect).await {
            Ok(Ok(p)) => Arc::clone(p),
            Ok(Err(refusal)) => {
                self.drop_slot(endpoint_id, &slot);
                return Err(refusal);
            }
            Err(_) => {
                self.drop_slot(endpoint_id, &slot);
                return Err(timed_out("no connection to the broker within timeout_ms"));
            }
        };
        let outcome = tokio::time::timeout_at(deadline, publisher.publish(message)).await;
        let failure = match outcome {
            Ok(Ok(receipt)) => return Ok(receipt),
            Ok(Err(f)) => f,
            Err(_) => PublishFailure::new(
                FailureKind::Timeout,
                "the broker did not confirm within timeout_ms",
            ),
        };
        if failure.breaks_connection() {
            self.drop_slot(endpoint_id, &slot);
        }
        Err(ConnectRefusal::Failed(failure))
    }

    /// The endpoint's slot for these settings, made (and the oldest closed,
    /// past [`MAX_CONNECTED`]) if need be.
    fn slot(&self, endpoint_id: &str, destination: &BrokerDestination) -> Arc<Slot> {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get(endpoint_id)
            && slot.destination == *destination
        {
            slot.last_used_ms.store(now, Ordering::Relaxed);
            return Arc::clone(slot);
        }
        if slots.len() >= MAX_CONNECTED
            && let Some(oldest) = slots
                .iter()
                .min_by_key(|(_, s)| s.last_used_ms.load(Ordering::Relaxed))
                .map(|(id, _)| id.clone())
        {
            slots.remove(&oldest);
        }
        let slot = Arc::new(Slot {
            destination: destination.clone(),
            publisher: OnceCell::new(),
            last_used_ms: AtomicU64::new(now),
        });
        slots.insert(endpoint_id.to_owned(), Arc::clone(&slot));
        slot
    }

    /// Forgets `slot` if it is still the endpoint's, so the next attempt
    /// connects afresh.
    fn drop_slot(&self, endpoint_id: &str, slot: &Arc<Slot>) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.get(endpoint_id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(endpoint_id);
        }
    }

    async fn connect(
        &self,
        endpoint_id: &str,
        destination: &BrokerDestination,
        deadline: Instant,
    ) -> Result<Arc<dyn Publisher>, ConnectRefusal> {
        let url = url::Url::parse(&destination.url()).map_err(|e| {
            ConnectRefusal::Failed(PublishFailure::new(
                FailureKind::Protocol,
                format!("destination url: {e}"),
            ))
        })?;
        let credentials = self.credentials(destination.credentials())?;
        let target = Target::vet(&self.guard, &url, credentials).await?;
        let left = deadline.saturating_duration_since(Instant::now());
        Ok(match destination {
            BrokerDestination::Rabbitmq(s) => {
                Arc::new(RabbitmqPublisher::connect(s, target).await?) as Arc<dyn Publisher>
            }
            BrokerDestination::Nats(s) => Arc::new(
                NatsPublisher::connect(s, target, left.max(Duration::from_millis(100))).await?,
            ),
            BrokerDestination::Redis(s) => Arc::new(RedisPublisher::connect(s, target).await?),
            BrokerDestination::Sqs(s) => {
                let config = self.aws_config(&s.region, &s.endpoint_url, &target)?;
                Arc::new(SqsPublisher::new(&config, s, endpoint_id))
            }
            BrokerDestination::Sns(s) => {
                let config = self.aws_config(&s.region, &s.endpoint_url, &target)?;
                Arc::new(SnsPublisher::new(&config, s, endpoint_id))
            }
            BrokerDestination::Kinesis(s) => {
                let config = self.aws_config(&s.region, &s.endpoint_url, &target)?;
                Arc::new(KinesisPublisher::new(&config, s, endpoint_id))
            }
        })
    }

    /// The AWS SDK's config for a destination whose host `target` vetted.
    fn aws_config(
        &self,
        region: &str,
        endpoint_url: &Option<String>,
        target: &Target,
    ) -> Result<aws_types::SdkConfig, PublishFailure> {
        aws::sdk_config(
            region,
            endpoint_url.as_deref(),
            target.credentials.as_ref(),
            self.aws_http.clone(),
        )
    }

    /// The credentials to present: as given, or the operator's by name.
    fn credentials(
        &self,
        given: Option<&Credentials>,
    ) -> Result<Option<Credentials>, ConnectRefusal> {
        let Some(given) = given else {
            return Ok(None);
        };
        let Some(name) = &given.name else {
            return Ok(Some(given.clone()));
        };
        let refused = |why: String| {
            ConnectRefusal::Failed(PublishFailure::new(FailureKind::AuthRefused, why))
        };
        let named = self.named.get(name).ok_or_else(|| {
            refused(format!(
                "no credentials named {name:?} in the gateway's config"
            ))
        })?;
        named
            .resolved()
            .map(Some)
            .map_err(|e| refused(format!("credentials {name:?}: {e}")))
    }
}

fn timed_out(why: &str) -> ConnectRefusal {
    ConnectRefusal::Failed(PublishFailure::new(FailureKind::Timeout, why))
}
