//! `hookgate migrate --store-url`: applies the schema once, says so, refuses a
//! database a newer hookgate wrote (as `serve` does), and names a bad URL. Each
//! test has a scratch database of its own.

use std::process::{Command, Output};

use hookgate_server::lab::ScratchDatabase;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn migrate(url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .args(["migrate", "--store-url", url])
        .env_remove("HOOKGATE_STORE__URL")
        .output()
        .unwrap()
}

/// stdout and stderr as text.
fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn migrate_applies_the_schema_once_and_a_newer_one_is_refused() {
    let rt = runtime();
    let db = rt
        .block_on(ScratchDatabase::create())
        .unwrap_or_else(|e| panic!("{e}"));
    let first = migrate(&db.url);
    let (stdout, stderr) = text(&first);
    assert_eq!(first.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "applied migration(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11; schema at version 11"
        ),
        "{stdout}"
    );
    let again = migrate(&db.url);
    let (stdout, _) = text(&again);
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout.contains("already at version 11"), "{stdout}");

    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .execute("INSERT INTO hookgate_schema VALUES (99, 0)", &[])
            .await
            .unwrap();
    });
    let newer = migrate(&db.url);
    let (_, stderr) = text(&newer);
    assert_eq!(newer.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("schema version 99") && stderr.contains("newer hookgate"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");

    // `serve` refuses it the same way, in one line.
    let dir = tempfile::tempdir().unwrap();
    let serve = Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .arg("serve")
        .env("HOOKGATE_LISTEN", "127.0.0.1:0")
        .env("HOOKGATE_STORE__DATA_DIR", dir.path())
        .env("HOOKGATE_STORE__BACKEND", "postgres")
        .env("HOOKGATE_STORE__URL", &db.url)
        .env("HOOKGATE_LOG", "error")
        .output()
        .unwrap();
    let (_, stderr) = text(&serve);
    assert_eq!(serve.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot use the database at"), "{stderr}");
    assert!(stderr.contains("newer hookgate"), "{stderr}");
}

#[test]
fn the_admin_token_is_reset_in_the_shared_database() {
    let rt = runtime();
    let db = rt
        .block_on(ScratchDatabase::create())
        .unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .args(["admin", "reset-token", "--store-url", &db.url])
        .env_remove("HOOKGATE_STORE__URL")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let token = stderr
        .lines()
        .find_map(|l| l.split("store it now): ").nth(1))
        .unwrap_or_else(|| panic!("no token printed: {stderr}"))
        .trim()
        .to_owned();
    let stored: Vec<u8> = rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let row = client
            .query_one(
                "SELECT value FROM meta WHERE key = 'admin_token_sha256'",
                &[],
            )
            .await
            .unwrap();
        row.get(0)
    });
    assert_eq!(stored, hookgate_server::hash_token(&token).to_vec());
}

#[test]
fn bad_and_unreachable_store_urls_are_named() {
    let bad = migrate("postgres://postgres@127.0.0.1/test?sslmode=bogus");
    let (_, stderr) = text(&bad);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--store-url") && stderr.contains("sslmode `bogus`"),
        "{stderr}"
    );
    // Port 1 on loopback: nothing listens there.
    let gone = migrate("postgres://postgres:s3cret@127.0.0.1:1/test?sslmode=disable");
    let (_, stderr) = text(&gone);
    assert_eq!(gone.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains("s3cret"),
        "the password is never printed: {stderr}"
    );
    assert!(stderr.contains("127.0.0.1:1"), "{stderr}");
}
