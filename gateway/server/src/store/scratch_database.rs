//! Scratch PostgreSQL databases for tests and drills: each run creates its own
//! database on the server `HOOKGATE_TEST_POSTGRES` names and drops it however
//! the run ends, so runs never share state and never leave any behind. A
//! server that cannot be reached is a failure that says how to start it, never
//! a skipped test.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio_postgres::{Client, NoTls};

/// The variable naming the server scratch databases are made on.
pub const SERVER_ENV: &str = crate::config::TEST_POSTGRES_ENV;
/// The server used when `HOOKGATE_TEST_POSTGRES` is unset.
pub const DEFAULT_TEST_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
/// Every scratch database's name starts so; the rest is its creation time
/// (Unix seconds) and a random part.
const PREFIX: &str = "hookgate_test_";
/// Leftovers of crashed runs older than this are dropped at the next creation.
const LEFTOVER_AGE_S: u64 = 3_600;

/// Why a scratch database could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error(
        "PostgreSQL is not reachable at {url} ({source}); start it with \
         `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, \
         or set HOOKGATE_TEST_POSTGRES to a server that runs"
    )]
    Unreachable {
        url: String,
        source: tokio_postgres::Error,
    },
    #[error("PostgreSQL at {url}: {source}")]
    Sql {
        url: String,
        source: tokio_postgres::Error,
    },
}

/// A database made for one run; dropped (`WITH (FORCE)`) when this is dropped,
/// even while a failed test unwinds.
#[derive(Debug)]
pub struct ScratchDatabase {
    /// The server's URL (the maintenance database).
    server: String,
    /// The scratch database's name.
    pub name: String,
    /// A URL for the scratch database.
    pub url: String,
}

impl ScratchDatabase {
    /// Creates a scratch database on `HOOKGATE_TEST_POSTGRES` (or the default),
    /// first dropping leftovers of earlier runs older than an hour.
    ///
    /// # Errors
    /// `Unreachable` with how to start PostgreSQL, or `Sql`.
    pub async fn create() -> Result<Self, ScratchError> {
        let server = std::env::var(SERVER_ENV).unwrap_or_else(|_| DEFAULT_TEST_POSTGRES.into());
        Self::create_on(&server).await
    }

    /// Creates a scratch database on the server at `server` (a URL of any
    /// database on it), as [`ScratchDatabase::create`] does.
    ///
    /// # Errors
    /// As [`ScratchDatabase::create`].
    pub async fn create_on(server: &str) -> Result<Self, ScratchError> {
        let server = server.to_owned();
        let client = connect(&server).await?;
        let sql = |source| ScratchError::Sql {
            url: server.clone(),
            source,
        };
        let now = unix_s();
        let rows = client
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'hookgate\\_test\\_%'",
                &[],
            )
            .await
            .map_err(sql)?;
        for row in rows {
            let name: String = row.get(0);
            if is_leftover(&name, now) {
                // Another run may drop it at the same moment; either way it goes.
                let _ = client.batch_execute(&drop_sql(&name)).await;
            }
        }
        let name = format!("{PREFIX}{now}_{:016x}", rand::random::<u64>());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .map_err(sql)?;
        let url = with_database(&server, &name);
        Ok(Self { server, name, url })
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        // Drop runs outside any runtime (or inside one that must not block), so
        // the statement gets a thread and a runtime of its own.
        let (server, sql) = (self.server.clone(), drop_sql(&self.name));
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let client = connect(&server).await.ok()?;
                client.batch_execute(&sql).await.ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!(
                "could not drop scratch database {}; the next run drops it",
                self.name
            );
        }
    }
}

/// A client on `url`, its connection driven on the current runtime.
async fn connect(url: &str) -> Result<Client, ScratchError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|source| ScratchError::Unreachable {
            url: url.to_owned(),
            source,
        })?;
    tokio::spawn(connection);
    Ok(client)
}

fn drop_sql(name: &str) -> String {
    format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")
}

/// Whether `name` is a scratch database made more than an hour before `now_s`.
fn is_leftover(name: &str, now_s: u64) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let made: Option<u64> = rest.split('_').next().and_then(|t| t.parse().ok());
    made.is_some_and(|made| now_s.saturating_sub(made) > LEFTOVER_AGE_S)
}

/// `server` with its database replaced by `name` (URL form, as the tests use).
fn with_database(server: &str, name: &str) -> String {
    let (base, query) = server
        .split_once('?')
        .map_or((server, None), |(b, q)| (b, Some(q)));
    let base = match base.rfind('/') {
        Some(i) if i > base.find("//").map_or(0, |j| j + 1) => &base[..i],
        _ => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

fn unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_scratch_databases_older_than_an_hour_are_leftovers() {
        assert!(is_leftover("hookgate_test_1000_ab", 1000 + 3_601));
        assert!(!is_leftover("hookgate_test_1000_ab", 1000 + 3_600));
        assert!(!is_leftover("hookgate_test_x_ab", 1_000_000));
        assert!(!is_leftover("test", 1_000_000));
    }

    #[test]
    fn the_scratch_url_names_the_scratch_database() {
        let url = "postgres://postgres@127.0.0.1:5432/test";
        assert_eq!(
            with_database(url, "s1"),
            "postgres://postgres@127.0.0.1:5432/s1"
        );
        assert_eq!(
            with_database("postgres://u@h/test?sslmode=disable", "s1"),
            "postgres://u@h/s1?sslmode=disable"
        );
        assert_eq!(with_database("postgres://u@h", "s1"), "postgres://u@h/s1");
    }

    /// Never skips: an unreachable server fails here, saying how to start it.
    #[tokio::test]
    async fn a_scratch_database_is_usable_and_gone_after_its_run_even_a_failed_one() {
        let server_url = std::env::var(SERVER_ENV).unwrap_or_else(|_| DEFAULT_TEST_POSTGRES.into());
        let server = connect(&server_url).await.unwrap_or_else(|e| panic!("{e}"));
        let exists = async |name: &str| {
            let rows = server
                .query("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
                .await
                .unwrap();
            !rows.is_empty()
        };
        // A crashed run's database, made in 1970: the next creation drops it.
        let stale = format!("{PREFIX}1000_{:016x}", rand::random::<u64>());
        let create = format!("CREATE DATABASE {stale}");
        server.batch_execute(&create).await.unwrap();
        let db = ScratchDatabase::create()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!exists(&stale).await, "{stale} was left behind");
        let client = connect(&db.url).await.unwrap();
        let row = client
            .query_one("SELECT current_database()", &[])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), db.name);
        drop(client);
        // A test that fails while holding its database still drops it.
        let name = db.name.clone();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _held = db;
            panic!("a failing test");
        }));
        assert!(unwound.is_err());
        assert!(!exists(&name).await, "{name} was not dropped");
    }
}
