//! What the host reports about its plugins while it runs, for the rest of the
//! gateway to act on: today only that a version was disabled. Each subscriber
//! gets every event on its own channel, so the store and telemetry each see it
//! without the host knowing either.

use std::sync::Mutex;

use tokio::sync::mpsc;

/// Something that happened to a loaded plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginEvent {
    /// A version was disabled after [`super::DISABLE_AFTER_FAILURES`] counted
    /// failures in a row; its endpoints use the built-in policy from now on.
    Disabled {
        tenant: String,
        name: String,
        version: u32,
        /// The failure that disabled it, as in `fallback:<reason>`.
        reason: &'static str,
    },
}

/// The subscribers' channels. Unbounded: a version is disabled at most once per
/// run, so the events are few, and none may be lost.
#[derive(Debug, Default)]
pub(crate) struct PluginEvents {
    subscribers: Mutex<Vec<mpsc::UnboundedSender<PluginEvent>>>,
}

impl PluginEvents {
    /// A new channel that gets every event from now on.
    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<PluginEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().push(tx);
        rx
    }

    /// Tells every subscriber still listening.
    pub(crate) fn send(&self, event: &PluginEvent) {
        self.lock().retain(|tx| tx.send(event.clone()).is_ok());
    }

    /// Drops every sender: each subscriber reads what is queued, then its channel ends.
    pub(crate) fn close(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<PluginEvent>>> {
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subscriber_gets_every_event_and_a_closed_one_is_dropped() {
        let events = PluginEvents::default();
        let (mut a, b) = (events.subscribe(), events.subscribe());
        drop(b);
        let disabled = PluginEvent::Disabled {
            tenant: "acme".into(),
            name: "p".into(),
            version: 2,
            reason: "trap",
        };
        events.send(&disabled);
        assert_eq!(a.try_recv(), Ok(disabled));
        assert_eq!(events.lock().len(), 1);
    }

    #[test]
    fn a_closed_channel_ends_after_what_was_sent() {
        let events = PluginEvents::default();
        let mut a = events.subscribe();
        let disabled = PluginEvent::Disabled {
            tenant: "acme".into(),
            name: "p".into(),
            version: 1,
            reason: "trap",
        };
        events.send(&disabled);
        events.close();
        assert_eq!(a.try_recv(), Ok(disabled));
        assert_eq!(a.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
    }
}
