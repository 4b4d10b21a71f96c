//! This node's delivery places, shared fairly among tenants.
//!
//! The node holds at most `cluster.node_max_in_flight` attempts over all
//! endpoints, and one tenant at most `cluster.tenant_max_in_flight` of them, so
//! a tenant whose receivers are slow can never take every place. Within those
//! caps idle places are used by whoever has work; but while another tenant
//! waits for a place, a tenant holding its even share of the node (the node's
//! places divided among the tenants that hold or want them) takes no more, so
//! each place that comes free goes to a tenant below its share. Endpoints
//! refused a place wait here and are due again as attempts finish.

use std::collections::{HashMap, HashSet};

use crate::delivery::in_flight::{InFlight, InFlightGuard};
use crate::ids::{EndpointId, TenantId};

/// This node's places, each tenant's count of them, and who waits.
pub(super) struct NodePlaces {
    node: InFlight,
    max: usize,
    tenant_max: usize,
    tenants: HashMap<TenantId, InFlight>,
    /// Endpoints refused a place, by tenant; due again when one comes free.
    waiting: HashMap<TenantId, HashSet<EndpointId>>,
    /// Tenants whose waiting endpoints were called back this pass: they still
    /// want places until their turns have been served.
    called: HashSet<TenantId>,
}

/// One attempt's place: the node's and its tenant's, given back on drop.
#[derive(Debug)]
pub(crate) struct NodePlace {
    _node: InFlightGuard,
    _tenant: InFlightGuard,
}

impl NodePlaces {
    pub(super) fn new(max: usize, tenant_max: usize) -> Self {
        let max = max.max(1);
        Self {
            node: InFlight::default(),
            max,
            tenant_max: tenant_max.clamp(1, max),
            tenants: HashMap::new(),
            waiting: HashMap::new(),
            called: HashSet::new(),
        }
    }

    /// The places `tenant`'s endpoint may take now; with none, the endpoint
    /// waits for the next attempt to finish.
    pub(super) fn free_for(&mut self, tenant: &TenantId, endpoint: &EndpointId) -> usize {
        let held = self.held(tenant);
        let mut free = self
            .node
            .free(self.max)
            .min(self.tenant_max.saturating_sub(held));
        if free > 0
            && let Some(share) = self.share_while_others_wait(tenant)
        {
            free = free.min(share.saturating_sub(held));
        }
        if free == 0 {
            let waiting = self.waiting.entry(tenant.clone()).or_default();
            waiting.insert(endpoint.clone());
        }
        free
    }

    /// Takes one place for `tenant`, within the node's and the tenant's caps.
    pub(super) fn try_take(&mut self, tenant: &TenantId) -> Option<NodePlace> {
        // On every attempt's start: the tenant's id is cloned only the first time.
        if !self.tenants.contains_key(tenant) {
            self.tenants.insert(tenant.clone(), InFlight::default());
        }
        let tenant = self.tenants.get(tenant)?.try_start(self.tenant_max)?;
        // A place of the tenant's taken without the node's is given back on drop.
        let node = self.node.try_start(self.max)?;
        Some(NodePlace {
            _node: node,
            _tenant: tenant,
        })
    }

    /// The endpoints that waited for a place, once one is free again; their
    /// tenants count as wanting places until [`Self::pass_over`].
    pub(super) fn take_waiting(&mut self) -> Vec<EndpointId> {
        if self.waiting.is_empty() || self.node.free(self.max) == 0 {
            return Vec::new();
        }
        let mut due = Vec::new();
        for (tenant, endpoints) in self.waiting.drain() {
            self.called.insert(tenant);
            due.extend(endpoints);
        }
        due
    }

    /// A pass over the due endpoints is over: the tenants called back have
    /// had their turns (any refused again wait anew), and tenants holding no
    /// place are forgotten.
    pub(super) fn pass_over(&mut self) {
        self.called.clear();
        if self.tenants.len() > self.max {
            self.tenants.retain(|_, count| count.count() > 0);
        }
    }

    fn held(&self, tenant: &TenantId) -> usize {
        self.tenants.get(tenant).map_or(0, InFlight::count)
    }

    /// While a tenant other than `tenant` wants a place, `tenant`'s even share
    /// of the node: its places divided among the tenants that hold or want them.
    fn share_while_others_wait(&self, tenant: &TenantId) -> Option<usize> {
        let wanting = self.waiting.keys().chain(&self.called);
        let others_want = wanting
            .clone()
            .any(|t| t != tenant && self.held(t) < self.tenant_max);
        if !others_want {
            return None;
        }
        let mut active: HashSet<&TenantId> = self
            .tenants
            .iter()
            .filter(|(_, count)| count.count() > 0)
            .map(|(t, _)| t)
            .collect();
        active.extend(wanting);
        active.insert(tenant);
        Some((self.max / active.len()).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(t: &str, e: &str) -> (TenantId, EndpointId) {
        (TenantId::from(t), EndpointId::from(e))
    }

    #[test]
    fn a_tenant_alone_uses_idle_places_up_to_its_cap() {
        let mut places = NodePlaces::new(8, 6);
        let (hog, ep) = ids("hog", "ep_h");
        assert_eq!(places.free_for(&hog, &ep), 6);
        let held: Vec<_> = (0..6).map(|_| places.try_take(&hog).unwrap()).collect();
        assert!(places.try_take(&hog).is_none(), "past the tenant's cap");
        assert_eq!(places.free_for(&hog, &ep), 0);
        // Another tenant finds the two places the cap left.
        let (other, ep_o) = ids("other", "ep_o");
        assert_eq!(places.free_for(&other, &ep_o), 2);
        drop(held);
        assert_eq!(places.take_waiting(), vec![ep]);
    }

    #[test]
    fn while_another_tenant_waits_a_tenant_at_its_share_takes_no_more() {
        let mut places = NodePlaces::new(4, 4);
        let (hog, ep_h) = ids("hog", "ep_h");
        let (victim, ep_v) = ids("victim", "ep_v");
        let mut held: Vec<_> = (0..4).map(|_| places.try_take(&hog).unwrap()).collect();
        assert_eq!(places.free_for(&victim, &ep_v), 0, "the node is full");
        held.pop();
        // A place came free: the victim is called back, and until its turn the
        // hog (3 held, share 4 / 2) is refused.
        assert_eq!(places.take_waiting(), vec![ep_v.clone()]);
        assert_eq!(places.free_for(&hog, &ep_h), 0);
        assert_eq!(places.free_for(&victim, &ep_v), 1);
        let _victims = places.try_take(&victim).unwrap();
        places.pass_over();
        // The hog waits for the next place too; it is no longer refused for
        // the victim's sake once the victim wants nothing.
        held.pop();
        assert_eq!(places.take_waiting(), vec![ep_h.clone()]);
        places.pass_over();
        assert_eq!(places.free_for(&hog, &ep_h), 1);
    }
}
