//! This machine's PostgreSQL server, as the crash drill's long form handles it:
//! restarted with `pg_ctlcluster` (the cluster `pg_lsclusters` lists on the port
//! the drill's URL names, which must be on this machine), and probed with a plain
//! connection to tell how long it did not answer; and the queue entries a killed
//! node still holds there.

use std::process::Command;
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;
use tokio_postgres::config::Host;

use super::{DrillError, secs};

/// How often the server is probed while it restarts.
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// How long one probe may take (a server mid-restart may accept and then stall).
const PROBE_LIMIT: Duration = Duration::from_secs(1);

/// A PostgreSQL cluster of this machine, as `pg_ctlcluster` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LocalCluster {
    version: String,
    name: String,
}

/// Restarts the server `url` names, and waits for the command; how long it took.
/// Blocking.
///
/// # Errors
/// When the URL names no cluster of this machine, or the command fails or exits
/// non-zero: the drill must not pass without the restart it promised, nor restart
/// a server it was not aimed at.
pub(super) fn restart_server(url: &str) -> Result<Duration, DrillError> {
    let listed = Command::new("pg_lsclusters")
        .arg("--no-header")
        .output()
        .map_err(|e| DrillError::Database(format!("cannot run pg_lsclusters: {e}")))?;
    let listed = String::from_utf8_lossy(&listed.stdout);
    let cluster = cluster_for(url, &listed).map_err(DrillError::Database)?;
    let LocalCluster { version, name } = &cluster;
    let began = Instant::now();
    let output = Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", version, name, "restart"])
        .output()
        .map_err(|e| DrillError::Database(format!("cannot run pg_ctlcluster: {e}")))?;
    if !output.status.success() {
        return Err(DrillError::Database(format!(
            "`pg_ctlcluster --skip-systemctl-redirect {version} {name} restart` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(began.elapsed())
}

/// The cluster of this machine that serves `url`: the one `pg_lsclusters` (its
/// `listed` lines: version, name, port, …) shows on the URL's port, when the URL's
/// host is this machine.
///
/// # Errors
/// A message saying why no cluster can be named: the URL does not parse, names
/// another host, or no listed cluster has its port.
pub(super) fn cluster_for(url: &str, listed: &str) -> Result<LocalCluster, String> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| format!("the store URL does not parse: {e}"))?;
    let local = config.get_hosts().iter().all(|host| match host {
        Host::Tcp(name) => matches!(name.as_str(), "127.0.0.1" | "localhost" | "::1" | "[::1]"),
        Host::Unix(_) => true,
    });
    if !local {
        return Err(
            "the store URL names another machine; the drill restarts only a server of this one"
                .to_owned(),
        );
    }
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let mut found = listed.lines().filter_map(|line| {
        let mut columns = line.split_whitespace();
        let (version, name, listens) = (columns.next()?, columns.next()?, columns.next()?);
        (listens.parse::<u16>().ok()? == port).then(|| LocalCluster {
            version: version.to_owned(),
            name: name.to_owned(),
        })
    });
    found.next().ok_or_else(|| {
        format!("no PostgreSQL cluster of this machine listens on port {port} (pg_lsclusters)")
    })
}

/// Probes the database until it has failed at least once and answers again: the
/// time from the first failure to the first answer after it, and that answer's time.
pub(super) async fn watch_downtime(
    url: &str,
    limit: Duration,
) -> Result<(Duration, Instant), DrillError> {
    let began = Instant::now();
    let mut down_since = None;
    loop {
        let up = answers(url).await;
        match (up, down_since) {
            (false, None) => down_since = Some(Instant::now()),
            (true, Some(since)) => return Ok((since.elapsed(), Instant::now())),
            _ => {}
        }
        if began.elapsed() > limit {
            let state = if down_since.is_some() {
                "did not come back"
            } else {
                "never went down"
            };
            return Err(DrillError::Database(format!(
                "the PostgreSQL server {state} within {} of its restart",
                secs(limit)
            )));
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
}

/// Whether the database at `url` answers a query now.
pub(super) async fn answers(url: &str) -> bool {
    let probe = async {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.ok()?;
        let driver = tokio::spawn(connection);
        let answered = client.simple_query("SELECT 1").await.is_ok();
        drop(client);
        let _ = driver.await;
        answered.then_some(())
    };
    matches!(tokio::time::timeout(PROBE_LIMIT, probe).await, Ok(Some(())))
}

/// Client connections to other databases of the server (other users' work, which a
/// restart cuts too); `None` when the server cannot tell.
pub(super) async fn other_sessions(url: &str, own: &str) -> Option<i64> {
    let count = async {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.ok()?;
        let driver = tokio::spawn(connection);
        let row = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' \
                 AND datname IS DISTINCT FROM $1",
                &[&own],
            )
            .await
            .ok();
        drop(client);
        let _ = driver.await;
        row.map(|r| r.get::<_, i64>(0))
    };
    tokio::time::timeout(PROBE_LIMIT, count)
        .await
        .ok()
        .flatten()
}

/// Queue entries leased by `node_id` in the database at `url`; `None` when it
/// cannot be read.
pub(super) async fn leased_by(url: &str, node_id: &str) -> Option<u64> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.ok()?;
    let connection = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(*) FROM queue WHERE leased_by = $1",
            &[&node_id],
        )
        .await
        .ok();
    drop(client);
    let _ = connection.await;
    row.and_then(|r| u64::try_from(r.get::<_, i64>(0)).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: &str = "15 main 5432 online postgres /var/lib/postgresql/15/main /var/log/a.log\n\
                          15 drill 5433 online postgres /var/lib/postgresql/15/drill /var/log/b.log\n";

    fn cluster(version: &str, name: &str) -> LocalCluster {
        LocalCluster {
            version: version.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Item 3 of issue 37: the restart target follows `--store-url`.
    #[test]
    fn the_drills_restart_target_follows_the_store_url() {
        let on = |url: &str| cluster_for(url, LISTED);
        assert_eq!(
            on("postgres://postgres@127.0.0.1:5433/test"),
            Ok(cluster("15", "drill"))
        );
        assert_eq!(
            on("postgres://postgres@localhost/test"),
            Ok(cluster("15", "main"))
        );
        assert_eq!(
            on("host=127.0.0.1 port=5433 user=postgres"),
            Ok(cluster("15", "drill"))
        );
        let elsewhere = on("postgres://postgres@db.internal:5432/test").unwrap_err();
        assert!(elsewhere.contains("another machine"), "{elsewhere}");
        let none = on("postgres://postgres@127.0.0.1:6000/test").unwrap_err();
        assert!(none.contains("port 6000"), "{none}");
    }
}
