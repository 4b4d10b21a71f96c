//! One node of the cluster drill: a `hookgate serve` child process with its own
//! node id, listen port and data dir, started, SIGKILLed and started again under
//! the same id. The senders assigned to it follow its address through a watch.
//!
//! Two readings tell what a node has in flight when it is killed: its own
//! `GET /v1/cluster` answer (`leases`, the engine's exact in-flight count), and the
//! client ports of its open TCP connections to the receiver, read from `/proc`, so
//! that the receiver can name the requests that came from it.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use tokio::sync::{Notify, watch};

use super::DrillError;
use super::api::GatewayApi;
use crate::lab::child_gateway::{GatewayProcess, GatewaySpec};

/// The setting that fixes a node's id.
const NODE_ID_VAR: &str = "HOOKGATE_CLUSTER__NODE_ID";

/// A node of the drilled cluster.
pub(super) struct Node {
    /// The id it is given (`cluster.node_id`), and the one it reports running
    /// under, read back after each start.
    pub(super) name: String,
    pub(super) id: String,
    spec: GatewaySpec,
    process: Option<GatewayProcess>,
    /// The tenant's client on this node, `None` while it is down.
    current: watch::Sender<Option<GatewayApi>>,
    /// Ingest calls to this node awaiting their answer.
    pub(super) sending_now: Arc<AtomicUsize>,
    /// Woken whenever an ingest call to this node starts.
    pub(super) call_started: Arc<Notify>,
}

impl Node {
    /// Node `index` over `base` (the shared settings): its own id and data dir.
    pub(super) fn new(index: usize, base: &GatewaySpec, work: &std::path::Path) -> Self {
        let name = format!("drill-node-{}", index + 1);
        let mut spec = base.clone();
        spec.data_dir = work.join(&name);
        spec.set(NODE_ID_VAR, &name);
        Self {
            id: name.clone(),
            name,
            spec,
            process: None,
            current: watch::channel(None).0,
            sending_now: Arc::default(),
            call_started: Arc::default(),
        }
    }

    /// What its senders follow.
    pub(super) fn follow(&self) -> watch::Receiver<Option<GatewayApi>> {
        self.current.subscribe()
    }

    /// Starts the process (again) and checks that it runs under its id; how
    /// long until it listened.
    pub(super) async fn start(&mut self) -> Result<Duration, DrillError> {
        let began = Instant::now();
        let process = self.spec.spawn().await?;
        let took = began.elapsed();
        self.process = Some(process);
        let view = self.cluster().await?;
        self.id = view["node_id"]
            .as_str()
            .ok_or_else(|| DrillError::Api(format!("/v1/cluster names no node id: {view}")))?
            .to_owned();
        if self.id != self.name {
            return Err(DrillError::Gateway(format!(
                "node {} runs as {}: its cluster.node_id was not applied",
                self.name, self.id
            )));
        }
        Ok(took)
    }

    /// Its answer to `GET /v1/cluster`.
    pub(super) async fn cluster(&self) -> Result<serde_json::Value, DrillError> {
        Ok(self
            .admin()?
            .expect(Method::GET, "/v1/cluster", None, StatusCode::OK)
            .await?)
    }

    fn process(&self) -> Result<&GatewayProcess, DrillError> {
        self.process
            .as_ref()
            .ok_or_else(|| DrillError::Gateway(format!("node {} is not running", self.id)))
    }

    /// A client of this node with the admin token.
    pub(super) fn admin(&self) -> Result<GatewayApi, DrillError> {
        Ok(GatewayApi::new(self.process()?.addr, &self.spec.admin)?)
    }

    /// A client of this node with `token`.
    pub(super) fn client(&self, token: &str) -> Result<GatewayApi, DrillError> {
        Ok(GatewayApi::new(self.process()?.addr, token)?)
    }

    /// Points its senders at it, with the tenant's `token`.
    pub(super) fn open_to_senders(&self, token: &str) -> Result<(), DrillError> {
        self.current.send_replace(Some(self.client(token)?));
        Ok(())
    }

    /// The leases it holds, as it answers `GET /v1/cluster` itself.
    pub(super) async fn leases(&self) -> Result<u64, DrillError> {
        let view = self.cluster().await?;
        let nodes = view["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        nodes
            .iter()
            .find(|n| n["this_node"] == true)
            .and_then(|n| n["leases"].as_u64())
            .ok_or_else(|| DrillError::Api(format!("/v1/cluster names no node of its own: {view}")))
    }

    /// The local ports of its TCP connections to `remote_port` on loopback (empty
    /// when `/proc` cannot tell).
    pub(super) fn ports_to(&self, remote_port: u16) -> HashSet<u16> {
        self.process
            .as_ref()
            .map(|p| connected_ports(p.pid(), remote_port))
            .unwrap_or_default()
    }

    /// SIGKILL; its senders wait until it is started again.
    pub(super) fn kill(&mut self) {
        self.current.send_replace(None);
        if let Some(process) = self.process.take() {
            process.kill();
        }
    }

    /// SIGTERM: its exit code (`None`: it did not exit in time, or was not running).
    pub(super) async fn terminate(&mut self) -> Option<i32> {
        self.current.send_replace(None);
        let status = self.process.take()?.terminate().await?;
        Some(status.code().unwrap_or(-1))
    }
}

/// The local ports of process `pid`'s TCP sockets connected to `remote_port`: its
/// socket inodes (`/proc/<pid>/fd`) looked up in its network namespace's tables.
fn connected_ports(pid: u32, remote_port: u16) -> HashSet<u16> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    let inodes: HashSet<u64> = fds
        .filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/net/{t}")).ok())
        .flat_map(|table| ports_in_table(&table, &inodes, remote_port))
        .collect()
}

/// The local ports of the rows of a `/proc/net/tcp` table whose inode is in
/// `inodes` and whose remote port is `remote_port`.
fn ports_in_table(table: &str, inodes: &HashSet<u64>, remote_port: u16) -> Vec<u16> {
    let port = |addr: &str| {
        let (_, hex) = addr.rsplit_once(':')?;
        u16::from_str_radix(hex, 16).ok()
    };
    table
        .lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            let inode: u64 = cols.get(9)?.parse().ok()?;
            let ours = inodes.contains(&inode) && port(cols.get(2)?)? == remote_port;
            ours.then(|| port(cols[1])).flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_processs_sockets_to_the_receiver_are_kept() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
            0: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000 0 111 1 0 20 4 30 10 -1\n\
            1: 0100007F:9C41 0100007F:1F91 01 00000000:00000000 00:00000000 00000000  1000 0 112 1 0 20 4 30 10 -1\n\
            2: 0100007F:9C42 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000 0 999 1 0 20 4 30 10 -1\n\
            garbage\n";
        let inodes: HashSet<u64> = [111, 112].into();
        assert_eq!(ports_in_table(table, &inodes, 0x1F90), vec![0x9C40]);
        assert!(ports_in_table("", &inodes, 0x1F90).is_empty());
    }

    #[test]
    fn a_missing_process_has_no_ports() {
        assert!(connected_ports(u32::MAX, 80).is_empty());
    }
}
