//! `[store]` with `backend = "postgres"`: its keys, their defaults, and the
//! messages that name a bad one.

use std::path::PathBuf;

use super::super::Config;
use super::*;

fn load(file: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(file, std::iter::empty())
}

#[test]
fn postgres_keys_default_and_load() {
    let c =
        load("[store]\nbackend = 'postgres'\nurl = 'postgres://hg:pw@db:5432/hookgate'").unwrap();
    assert_eq!(c.store.backend, StoreBackend::Postgres);
    assert_eq!((c.store.pool_size, c.store.lease_margin_ms), (16, 30_000));
    let c = load(
        "[store]\nbackend = 'postgres'\nurl = 'postgres://db/hg?sslmode=verify-full'\n\
         pool_size = 4\nlease_margin = '2s'",
    )
    .unwrap();
    assert_eq!((c.store.pool_size, c.store.lease_margin_ms), (4, 2_000));
    let env = [
        ("HOOKGATE_STORE__BACKEND", "postgres"),
        ("HOOKGATE_STORE__URL", "postgres://db/hg"),
    ];
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    let c = Config::from_toml_str("", env).unwrap();
    assert_eq!(c.store.url.as_deref(), Some("postgres://db/hg"));
}

#[test]
fn bad_postgres_keys_are_named() {
    let cases = [
        ("[store]\nbackend = 'postgres'", "store.url", "must be set"),
        (
            "[store]\nbackend = 'postgres'\nurl = 'postgres://db/hg?sslmode=verify'",
            "store.url",
            "sslmode `verify`",
        ),
        (
            "[store]\nbackend = 'postgres'\nurl = 'postgres://db/hg'\npool_size = 0",
            "store.pool_size",
            "from 1 to 1024",
        ),
        (
            "[store]\nbackend = 'postgres'\nurl = 'postgres://db/hg'\nlease_margin = '10ms'",
            "store.lease_margin",
            "at least 1s",
        ),
        (
            "[store]\nbackend = 'postgres'\nurl = 'postgres://db/hg'\nca_file = '/nonexistent/ca.pem'",
            "store.ca_file",
            "/nonexistent/ca.pem",
        ),
    ];
    for (file, key, says) in cases {
        let e = load(file).unwrap_err().to_string();
        assert!(e.starts_with(&format!("config key `{key}`")), "{e}");
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn the_password_never_shows_in_the_config_debug() {
    let c = load("[store]\nbackend = 'postgres'\nurl = 'postgres://hg:s3cret@db/hg'").unwrap();
    let shown = format!("{c:?}");
    assert!(
        !shown.contains("s3cret") && shown.contains("hg:redacted@db"),
        "{shown}"
    );
    assert_eq!(
        redact_password("host=db password=s3cret user=hg"),
        "host=db password=redacted user=hg"
    );
    assert_eq!(c.store.ca_file, None::<PathBuf>);
}

/// Item 4 of tenant fairness: every form the parser takes hides its password.
#[test]
fn the_database_password_is_never_printed() {
    let forms = [
        (
            "postgres://hg:S3cr3tPw@db/hg",
            "postgres://hg:redacted@db/hg",
        ),
        (
            "postgresql://hg:S3cr3tPw@db:5433/hg?sslmode=require",
            "postgresql://hg:redacted@db:5433/hg?sslmode=require",
        ),
        (
            "postgres://hg@db/hg?password=S3cr3tPw",
            "postgres://hg@db/hg?password=redacted",
        ),
        (
            "postgres://hg@db/hg?sslmode=disable&password=S3cr3tPw%20x",
            "postgres://hg@db/hg?sslmode=disable&password=redacted",
        ),
        (
            "postgres://hg:S3cr%33tPw@db/hg",
            "postgres://hg:redacted@db/hg",
        ),
        (
            "host=db password=S3cr3tPw user=hg",
            "host=db password=redacted user=hg",
        ),
        (
            "host=db password='S3cr3tPw P' user=hg",
            "host=db password=redacted user=hg",
        ),
        (
            "host=db password='S3cr\\'3tPw' user=hg",
            "host=db password=redacted user=hg",
        ),
        (
            "host=db password = S3cr3tPw user=hg",
            "host=db password = redacted user=hg",
        ),
        ("user=hg password=S3cr3tPw", "user=hg password=redacted"),
    ];
    for (url, shown) in forms {
        assert_eq!(redact_password(url), shown, "{url}");
    }
    // A form the text pass misses is described from what the parser read.
    let odd = "host=db\tpassword=S3cr3tPw\tuser=hg";
    let shown = redact_password(odd);
    assert!(
        !shown.contains("S3cr3tPw") && shown.contains("redacted"),
        "{shown}"
    );
}
