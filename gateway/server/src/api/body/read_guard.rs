//! Guards on reading a request body, so that a slow or greedy client cannot hold
//! connections: a deadline over the whole body, and a per-tenant cap on bodies
//! being read at once.
//!
//! The server wraps every body in a [`GuardedBody`] and puts a [`ReadClaim`] in the
//! request's extensions; authentication names the tenant on the claim. The tenant's
//! slot is taken when the body is first read and given back when it ends or is
//! dropped, so the cap counts reads, not whole requests.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a body read was stopped by a guard (not by the client or the network).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BodyReadRefused {
    /// The whole body did not arrive within `limits.body_read_timeout`.
    #[error("the request body did not arrive in time")]
    TimedOut,
    /// The tenant already has `limits.body_reads_per_tenant` bodies being read.
    #[error("too many request bodies are being read at once for this tenant")]
    TooManyReads,
}

/// Counts the bodies being read per tenant. Entries go when their count reaches
/// zero, so the map holds only tenants with reads in progress.
#[derive(Debug)]
pub(crate) struct TenantReadGate {
    limit: usize,
    reading: Mutex<HashMap<String, usize>>,
}

impl TenantReadGate {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            reading: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for one more read by `tenant`, or `None` when it has `limit` already.
    fn try_enter(self: &Arc<Self>, tenant: &str) -> Option<ReadSlot> {
        let mut reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
        let count = reading.entry(tenant.to_owned()).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(ReadSlot {
            gate: Arc::clone(self),
            tenant: tenant.to_owned(),
        })
    }

    /// Bodies being read for `tenant` now.
    #[cfg(test)]
    pub(crate) fn reading(&self, tenant: &str) -> usize {
        let reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
        reading.get(tenant).copied().unwrap_or(0)
    }
}

/// One read in progress; dropping it frees the tenant's slot.
#[derive(Debug)]
struct ReadSlot {
    gate: Arc<TenantReadGate>,
    tenant: String,
}

impl Drop for ReadSlot {
    fn drop(&mut self) {
        let mut reading = self
            .gate
            .reading
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = reading.get_mut(&self.tenant) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                reading.remove(&self.tenant);
            }
        }
    }
}

/// Shared by a request's extensions and its body: authentication names the
/// tenant here, and the body takes that tenant's slot when it is read.
#[derive(Debug, Clone)]
pub(crate) struct ReadClaim {
    gate: Arc<TenantReadGate>,
    tenant: Arc<OnceLock<String>>,
}

impl ReadClaim {
    pub(crate) fn new(gate: Arc<TenantReadGate>) -> Self {
        Self {
            gate,
            tenant: Arc::new(OnceLock::new()),
        }
    }

    /// Names the authenticated tenant whose cap this body counts against. The
    /// admin names none: its reads are bounded by the deadline alone.
    pub(crate) fn name_tenant(&self, tenant: &str) {
        let _ = self.tenant.set(tenant.to_owned());
    }
}

/// A request body that fails with [`BodyReadRefused`] past its deadline or when
/// its tenant has no free read slot.
pub(crate) struct GuardedBody<B> {
    inner: Pin<Box<B>>,
    deadline: Pin<Box<Sleep>>,
    claim: ReadClaim,
    started: bool,
    slot: Option<ReadSlot>,
}

impl<B> GuardedBody<B> {
    pub(crate) fn new(inner: B, deadline: Instant, claim: ReadClaim) -> Self {
        Self {
            inner: Box::pin(inner),
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            claim,
            started: false,
            slot: None,
        }
    }

    fn refuse(&mut self, why: BodyReadRefused) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.slot = None;
        Poll::Ready(Some(Err(Box::new(why))))
    }
}

impl<B> Body for GuardedBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if !this.started {
            this.started = true;
            // An empty body (a GET) reads nothing, so it takes no slot.
            if !this.inner.is_end_stream()
                && let Some(tenant) = this.claim.tenant.get()
            {
                match this.claim.gate.try_enter(tenant) {
                    Some(slot) => this.slot = Some(slot),
                    None => return this.refuse(BodyReadRefused::TooManyReads),
                }
            }
        }
        match this.inner.as_mut().poll_frame(cx) {
            Poll::Ready(None) => {
                this.slot = None;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(e))) => {
                this.slot = None;
                Poll::Ready(Some(Err(e.into())))
            }
            Poll::Ready(Some(Ok(_))) if this.deadline.is_elapsed() => {
                this.refuse(BodyReadRefused::TimedOut)
            }
            Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(frame))),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => this.refuse(BodyReadRefused::TimedOut),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The guard's refusal somewhere in `error`'s chain of sources, if any.
pub(crate) fn refusal(error: &(dyn std::error::Error + 'static)) -> Option<BodyReadRefused> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(why) = e.downcast_ref::<BodyReadRefused>() {
            return Some(*why);
        }
        current = e.source();
    }
    None
}
