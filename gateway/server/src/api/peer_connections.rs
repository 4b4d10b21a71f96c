//! Open connections per client address, capped by `limits.connections_per_peer`,
//! so one address that opens connections and sends nothing cannot take every
//! place `limits.max_connections` allows. The head deadline closes such
//! connections soon; this keeps the others served meanwhile.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Each address's open connections.
#[derive(Debug)]
pub(super) struct PeerConnections {
    most: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of an address, counted until dropped.
#[derive(Debug)]
pub(super) struct PeerConnection {
    peers: Arc<PeerConnections>,
    addr: IpAddr,
}

impl PeerConnections {
    pub(super) fn new(most: usize) -> Arc<Self> {
        Arc::new(Self {
            most: most.max(1),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// Counts a new connection from `addr`, unless it has its most open.
    pub(super) fn try_open(self: &Arc<Self>, addr: IpAddr) -> Option<PeerConnection> {
        let addr = addr.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(addr).or_insert(0);
        if *count >= self.most {
            return None;
        }
        *count += 1;
        Some(PeerConnection {
            peers: Arc::clone(self),
            addr,
        })
    }
}

impl Drop for PeerConnection {
    fn drop(&mut self) {
        let mut open = self.peers.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.addr) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_has_its_own_cap() {
        let peers = PeerConnections::new(2);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let held = [peers.try_open(a).unwrap(), peers.try_open(a).unwrap()];
        assert!(peers.try_open(a).is_none());
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(peers.try_open(mapped).is_none(), "the same address, mapped");
        assert!(peers.try_open(b).is_some());
        drop(held);
        assert!(peers.try_open(a).is_some());
        assert!(
            peers.open.lock().unwrap().len() <= 1,
            "closed addresses are forgotten"
        );
    }
}
