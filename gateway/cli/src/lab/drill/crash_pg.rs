//! This machine's PostgreSQL server, as the crash drill's long form handles it:
//! restarted with `pg_ctlcluster` (the one cluster under /etc/postgresql), and probed
//! with a plain connection to tell how long it did not answer; and the queue
//! entries a killed node still holds there.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use super::{DrillError, secs};

/// Where the Debian/Ubuntu packaging keeps one directory per installed version.
const CLUSTERS: &str = "/etc/postgresql";
/// The cluster the machine's server runs as.
const CLUSTER: &str = "main";
/// How often the server is probed while it restarts.
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// How long one probe may take (a server mid-restart may accept and then stall).
const PROBE_LIMIT: Duration = Duration::from_secs(1);

/// Restarts the machine's PostgreSQL server and waits for the command; how long it
/// took. Blocking.
///
/// # Errors
/// When the version cannot be found or the command fails or exits non-zero: the
/// drill must not pass without the restart it promised.
pub(super) fn restart_server() -> Result<Duration, DrillError> {
    let version = version(Path::new(CLUSTERS))?;
    let began = Instant::now();
    let output = Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", &version, CLUSTER, "restart"])
        .output()
        .map_err(|e| DrillError::Database(format!("cannot run pg_ctlcluster: {e}")))?;
    if !output.status.success() {
        return Err(DrillError::Database(format!(
            "`pg_ctlcluster --skip-systemctl-redirect {version} {CLUSTER} restart` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(began.elapsed())
}

/// The one PostgreSQL version installed (`ls /etc/postgresql`).
fn version(clusters: &Path) -> Result<String, DrillError> {
    let entries = std::fs::read_dir(clusters).map_err(|e| {
        DrillError::Database(format!(
            "cannot list {}: {e} (is PostgreSQL installed on this machine?)",
            clusters.display()
        ))
    })?;
    let mut versions: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    match versions.len() {
        1 => Ok(versions.remove(0)),
        n => Err(DrillError::Database(format!(
            "{} holds {n} PostgreSQL versions ({versions:?}); the restart needs exactly one",
            clusters.display()
        ))),
    }
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

    #[test]
    fn the_version_is_the_one_directory_and_anything_else_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(version(dir.path()).is_err());
        std::fs::create_dir(dir.path().join("15")).unwrap();
        assert_eq!(version(dir.path()).unwrap(), "15");
        std::fs::create_dir(dir.path().join("16")).unwrap();
        assert!(
            version(dir.path())
                .unwrap_err()
                .to_string()
                .contains("2 PostgreSQL versions")
        );
        assert!(version(&dir.path().join("none")).is_err());
    }
}
