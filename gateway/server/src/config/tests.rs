//! Config layering and refusal.

use super::values::parse_byte_size;
use super::*;
use std::io::Write as _;

type Loaded = Result<Config, ConfigError>;

fn load(file_text: Option<&str>, env: &[(&str, &str)]) -> Loaded {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    write!(file, "{}", file_text.unwrap_or_default()).unwrap();
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    Config::load(file_text.map(|_| file.path()), env)
}

fn file(text: &str) -> Loaded {
    load(Some(text), &[])
}

/// Loads with the one variable `HOOKGATE_{name}`.
fn env(name: &str, value: &str) -> Loaded {
    load(None, &[(&format!("HOOKGATE_{name}"), value)])
}

/// Asserts a refusal whose message starts by naming `key`.
fn names(loaded: Loaded, key: &str) -> String {
    let message = loaded.unwrap_err().to_string();
    let prefix = format!("config key `{key}`: ");
    assert!(message.starts_with(&prefix), "{message}");
    message
}

#[test]
fn defaults() {
    let c = load(None, &[]).unwrap();
    assert_eq!(c.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
    assert_eq!(c.store.data_dir, PathBuf::from("./hookgate-data"));
    assert_eq!((c.log.as_str(), c.log_format), ("info", LogFormat::Text));
    let store = &c.store;
    assert_eq!(
        (store.min_free_disk, store.cache_capacity),
        (1 << 30, 64 << 20)
    );
    assert_eq!((c.shutdown_grace_ms, c.limits.url_len), (10_000, 2048));
    assert!(c.admin_token.is_none() && c.allow_private_subnets.is_empty());
}

#[test]
fn layers_override_in_order() {
    let text = "log = 'debug'\nlisten = '0.0.0.0:9000'\n[limits]\nurl_len = 100\n";
    let c = file(text).unwrap();
    assert_eq!((c.log.as_str(), c.listen.port()), ("debug", 9000));
    assert_eq!(
        (c.limits.url_len, c.limits.json_body_bytes),
        (100, 256 * 1024)
    );
    let vars = [("HOOKGATE_LOG", "warn"), ("HOOKGATE_LIMITS__URL_LEN", "99")];
    let c = load(Some(text), &vars).unwrap();
    assert_eq!((c.log.as_str(), c.limits.url_len), ("warn", 99));
    let c = env("TLS__EXTRA_CA_FILE", "/etc/ca.pem").unwrap();
    assert_eq!(c.tls.extra_ca_file, Some(PathBuf::from("/etc/ca.pem")));
}

#[test]
fn cidr_lists() {
    let c = env("ALLOW_PRIVATE_SUBNETS", "127.0.0.0/8, ::1/128").unwrap();
    let want: Vec<IpNet> = vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
    assert_eq!(c.allow_private_subnets, want);
    let c = file("allow_private_subnets = ['10.0.0.0/8']").unwrap();
    assert_eq!(c.allow_private_subnets.len(), 1);
    let bad = env("ALLOW_PRIVATE_SUBNETS", "10.0.0.0/33");
    names(bad, "allow_private_subnets[0]");
}

#[test]
fn unknown_keys_refused_and_client_vars_ignored() {
    let e = file("[limits]\nnope = 1\n").unwrap_err();
    assert!(matches!(&e, ConfigError::UnknownKey { key, .. } if key == "limits.nope"));
    assert!(e.to_string().contains("(from file "), "{e}");
    let e = env("TLS__NOPE", "x").unwrap_err().to_string();
    assert!(
        e.contains("`tls.nope`") && e.contains("HOOKGATE_TLS__NOPE"),
        "{e}"
    );
    let vars = [("HOOKGATE_URL", "http://x"), ("HOOKGATE_TOKEN", "t")];
    assert!(load(None, &vars).is_ok());
    // The test setup's server for scratch databases is not config either.
    let vars = [(
        "HOOKGATE_TEST_POSTGRES",
        "postgres://postgres@127.0.0.1/test",
    )];
    assert!(load(None, &vars).is_ok());
}

#[test]
fn bad_values_name_their_key() {
    let e = names(file("listen = 'abc'"), "listen");
    assert!(e.contains("invalid socket address \"abc\""), "{e}");
    names(env("LOG_FORMAT", "xml"), "log_format");
    names(env("LIMITS__URL_LEN", "long"), "limits.url_len");
    names(env("LIMITS", "5"), "limits");
    let e = file("listen = ").unwrap_err().to_string();
    assert!(e.contains("not valid TOML"), "{e}");
    // One line, saying where.
    let e = file("log = 'info'\n[limits\n").unwrap_err().to_string();
    assert!(e.contains("at line 2, column "), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn byte_sizes_and_durations() {
    let c = file("[store]\nmin_free_disk = '1GiB'\ncache_capacity = '64MiB'").unwrap();
    assert_eq!(
        (c.store.min_free_disk, c.store.cache_capacity),
        (1 << 30, 64 << 20)
    );
    let c = env("STORE__MIN_FREE_DISK", "10MB").unwrap();
    assert_eq!(c.store.min_free_disk, 10_000_000);
    assert_eq!(
        parse_byte_size("2048").and(parse_byte_size("512 kib")),
        Ok(1 << 19)
    );
    assert!(parse_byte_size("1.5GiB").is_err() && parse_byte_size("GiB").is_err());
    names(env("STORE__MIN_FREE_DISK", "lots"), "store.min_free_disk");
    names(
        file("[store]\ncache_capacity = 1000"),
        "store.cache_capacity",
    );
    let c = file("shutdown_grace_ms = '10s'").unwrap();
    assert_eq!(c.shutdown_grace_ms, 10_000);
    let c = env("SHUTDOWN_GRACE_MS", "1m 30s").unwrap();
    assert_eq!(c.shutdown_grace_ms, 90_000);
    names(file("shutdown_grace_ms = -1"), "shutdown_grace_ms");
}

#[test]
fn validation() {
    let e = names(file("[limits]\nurl_len = 0"), "limits.url_len");
    assert!(e.ends_with("must be greater than 0"), "{e}");
    let e = names(env("ADMIN_TOKEN", "secret-no-prefix-0123"), "admin_token");
    assert!(!e.contains("secret"), "the token is not echoed: {e}");
    names(env("ADMIN_TOKEN", "hgk_short"), "admin_token");
    assert!(env("ADMIN_TOKEN", "hgk_0123456789abcdefghij").is_ok());
    names(env("LOG", " "), "log");
    names(env("LOG", "hookgate=notalevel"), "log");
    let c = env("ADMIN_TOKEN", "hgk_0123456789abcdefghij").unwrap();
    assert!(
        !format!("{c:?}").contains("hgk_0123"),
        "Debug hides the admin token"
    );
}

#[test]
fn policy_default_is_the_endpoint_policy_object() {
    let c = file("[policy.default]\npreset = \"svix\"\nmax_attempts = 5").unwrap();
    let p = c.policy.default.resolve().unwrap();
    assert_eq!((p.preset.as_str(), p.max_attempts), ("svix", 5));
    let c = env("POLICY__DEFAULT__BASE_MS", "30s").unwrap();
    assert_eq!(c.policy.default.resolve().unwrap().base_ms(), 30_000);
    let c = env("POLICY__DEFAULT__MAX_ATTEMPTS", "7").unwrap();
    assert_eq!(c.policy.default.resolve().unwrap().max_attempts, 7);
    names(
        file("[policy.default]\nmax_attempts = 0"),
        "policy.default.max_attempts",
    );
    names(
        file("[policy.default]\njitter = \"wobbly\""),
        "policy.default.jitter",
    );
    assert!(file("[policy.default]\ncolour = 1").is_err());
}

#[test]
fn plugins_preload_from_file() {
    let c =
        file("[[plugins.preload]]\ntenant = \"acme\"\nname = \"p\"\npath = \"/x.wasm\"").unwrap();
    assert_eq!(c.plugins.preload.len(), 1);
    names(
        file("[[plugins.preload]]\ntenant = \"A B\"\nname = \"p\"\npath = \"/x\""),
        "plugins.preload[0]",
    );
}

#[test]
fn retention_and_breaker_settings() {
    let c = load(None, &[]).unwrap();
    assert_eq!(
        (c.retention, c.dlq_retention, c.breaker.failure_threshold),
        (7 * DAY_MS, 0, 20)
    );
    assert_eq!(
        c.breaker.cooldowns,
        [600_000, 1_800_000, 7_200_000, 86_400_000]
    );
    let c = file("retention = \"1h\"\n[breaker]\ncooldowns = [\"1s\", 2500]").unwrap();
    assert_eq!(
        (c.retention, c.breaker.cooldowns.clone()),
        (3_600_000, vec![1000, 2500])
    );
    let c = env("BREAKER__COOLDOWNS", "1s,2s").unwrap();
    assert_eq!(c.breaker.cooldowns, [1000, 2000]);
    names(
        file("[breaker]\nfailure_threshold = 0"),
        "breaker.failure_threshold",
    );
    names(file("[breaker]\ncooldowns = []"), "breaker.cooldowns");
    names(env("RETENTION", "0"), "retention");
}

#[test]
fn alert_settings() {
    let c = file("[alerts]\nurl = \"http://127.0.0.1:9/alerts\"\nwindow = \"5s\"").unwrap();
    assert_eq!(
        (c.alerts.url.as_deref(), c.alerts.window),
        (Some("http://127.0.0.1:9/alerts"), 5_000)
    );
    names(file("[alerts]\nurl = \"ftp://x\""), "alerts.url");
    names(file("[alerts]\nsecret = \"nope\""), "alerts.secret");
    names(file("[alerts]\nfailure_rate = 2.0"), "alerts.failure_rate");
}

#[test]
fn alert_destination_from_file_and_environment() {
    let c = file("[alerts]\nurl = \"https://ops.example/hooks\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"").unwrap();
    assert_eq!(c.alerts.url.as_deref(), Some("https://ops.example/hooks"));
    let c = env("ALERTS__URL", "http://127.0.0.1:9/a").unwrap();
    assert_eq!(c.alerts.url.as_deref(), Some("http://127.0.0.1:9/a"));
    let c = Config::from_toml_str("listen = \"127.0.0.1:9999\"", Vec::new()).unwrap();
    assert_eq!(c.listen.port(), 9999);
}

#[test]
fn body_read_and_plugin_version_limits_have_defaults_and_refuse_zero() {
    let c = Config::default();
    assert_eq!(
        (
            c.limits.body_read_timeout,
            c.limits.body_reads_per_tenant,
            c.plugins.keep_versions
        ),
        (10_000, 64, 10)
    );
    let c = file("[limits]\nbody_read_timeout = \"2s\"\nbody_reads_per_tenant = 3\n[plugins]\nkeep_versions = 4")
        .unwrap();
    assert_eq!(
        (
            c.limits.body_read_timeout,
            c.limits.body_reads_per_tenant,
            c.plugins.keep_versions
        ),
        (2_000, 3, 4)
    );
    names(
        file("[limits]\nbody_read_timeout = 0"),
        "limits.body_read_timeout",
    );
    names(
        file("[limits]\nbody_reads_per_tenant = 0"),
        "limits.body_reads_per_tenant",
    );
    names(
        file("[plugins]\nkeep_versions = 0"),
        "plugins.keep_versions",
    );
}

#[test]
fn plugin_slots_default_to_64_and_refuse_a_count_out_of_range() {
    assert_eq!(Config::default().plugins.slots, 64);
    assert_eq!(env("PLUGINS__SLOTS", "256").unwrap().plugins.slots, 256);
    assert_eq!(file("[plugins]\nslots = 2").unwrap().plugins.slots, 2);
    for bad in [0, 1, 4097] {
        let e = names(file(&format!("[plugins]\nslots = {bad}")), "plugins.slots");
        assert!(
            e.ends_with(&format!("must be from 2 to 4096, got {bad}")),
            "{e}"
        );
    }
    names(env("PLUGINS__SLOTS", "-3"), "plugins.slots");
    names(file("[plugins]\nslots = \"many\""), "plugins.slots");
}

#[test]
fn egress_allow_list_from_file_and_environment() {
    use crate::address_guard::EgressRule;
    assert_eq!(load(None, &[]).unwrap().outbound.allow_only, None);
    let c = file("[outbound]\nallow_only = ['127.0.0.0/8', '*.Example.com', 'api.test']").unwrap();
    let want = [
        EgressRule::Cidr("127.0.0.0/8".parse().unwrap()),
        EgressRule::Subdomains("example.com".into()),
        EgressRule::Host("api.test".into()),
    ];
    assert_eq!(c.outbound.allow_only.as_deref(), Some(&want[..]));
    let c = env(
        "OUTBOUND__ALLOW_ONLY",
        "127.0.0.0/8, *.example.com ,api.test",
    )
    .unwrap();
    assert_eq!(c.outbound.allow_only.as_deref(), Some(&want[..]));
    // The environment overrides the file's list as a whole.
    let vars = [("HOOKGATE_OUTBOUND__ALLOW_ONLY", "::1/128")];
    let c = load(Some("[outbound]\nallow_only = ['a.test']"), &vars).unwrap();
    let want = vec![EgressRule::Cidr("::1/128".parse().unwrap())];
    assert_eq!(c.outbound.allow_only, Some(want));
}

#[test]
fn egress_allow_list_refusals_name_the_key() {
    let bad = env("OUTBOUND__ALLOW_ONLY", "10.0.0.0/8,10.0.0.0/33");
    let message = names(bad, "outbound.allow_only[1]");
    assert!(message.contains("not a valid CIDR"), "{message}");
    let bad = file("[outbound]\nallow_only = ['api.*.example.com']");
    let message = names(bad, "outbound.allow_only[0]");
    assert!(message.contains("not a host pattern"), "{message}");
    let bad = file("[outbound]\nallow_only = ['10.1.2.3']");
    assert!(names(bad, "outbound.allow_only[0]").contains("\"10.1.2.3/32\""));
    // An empty list would refuse every endpoint: unset is how to allow any host.
    let message = names(file("[outbound]\nallow_only = []"), "outbound.allow_only");
    assert!(message.contains("leave it unset"), "{message}");
    names(env("OUTBOUND__ALLOW_ONLY", " , "), "outbound.allow_only");
    let bad = file("[outbound]\nallow_only = '127.0.0.0/8'");
    names(bad, "outbound.allow_only");
}

#[test]
fn stats_settings_have_defaults_and_refuse_what_would_not_work() {
    let c = load(None, &[]).unwrap();
    assert_eq!(
        (
            c.stats.bucket_seconds,
            c.stats.history_hours,
            c.stats.flush_ms
        ),
        (300, 48, 5_000)
    );
    assert_eq!(
        (c.stats.bucket_ms(), c.stats.history_ms()),
        (300_000, 172_800_000)
    );
    let c = file("[stats]\nbucket_seconds = 60\nhistory_hours = 24\nflush_ms = '250ms'").unwrap();
    assert_eq!((c.stats.bucket_seconds, c.stats.flush_ms), (60, 250));
    assert_eq!(env("STATS__FLUSH_MS", "2s").unwrap().stats.flush_ms, 2_000);
    names(env("STATS__BUCKET_SECONDS", "5"), "stats.bucket_seconds");
    names(env("STATS__HISTORY_HOURS", "0"), "stats.history_hours");
    let e = names(
        file("[stats]\nbucket_seconds = 10\nhistory_hours = 48"),
        "stats.history_hours",
    );
    assert!(e.contains("10000 buckets"), "{e}");
    names(env("STATS__FLUSH_MS", "0"), "stats.flush_ms");
    names(env("STATS__FLUSH_MS", "2m"), "stats.flush_ms");
}
