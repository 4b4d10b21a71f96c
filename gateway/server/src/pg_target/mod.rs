//! Where the PostgreSQL backend connects, and how it secures the connection: a
//! leaf that both `config` (which checks `store.url` and `store.ca_file` at load)
//! and `store/postgres` (which connects) use. Beside `store/postgres`, it is the
//! one module that knows `tokio-postgres`, and only its connection settings.
//!
//! `tokio-postgres` reads `sslmode=disable|prefer|require` only. The stricter
//! modes operators use with libpq, `verify-ca` and `verify-full`, are read here:
//! the URL is handed on with `require`, and the TLS configuration does the
//! verification the mode asks for, against the system's roots or
//! `store.ca_file`. As with libpq, `prefer` and `require` encrypt without
//! checking who answers.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, pem::PemObject};
use tokio_postgres_rustls::MakeRustlsConnect;

mod verifiers;

use verifiers::{AnyCertificate, AnyName};

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsCheck {
    /// No TLS at all.
    Disable,
    /// TLS if the server offers it (`prefer`) or always (`require`), with no check
    /// of the certificate.
    Unverified,
    /// The certificate chains to a trusted root; its name is not checked.
    VerifyCa,
    /// The certificate chains to a trusted root and names the host.
    VerifyFull,
}

/// A parsed `store.url` with its TLS mode.
#[derive(Clone)]
pub struct PgTarget {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) check: TlsCheck,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The config holds the password; only where it points is shown.
        f.debug_struct("PgTarget")
            .field("hosts", &self.config.get_hosts())
            .field("dbname", &self.config.get_dbname())
            .field("check", &self.check)
            .finish()
    }
}

impl PgTarget {
    /// Parses a `postgres://` URL or a `key=value` connection string.
    ///
    /// # Errors
    /// A message naming what is wrong: an unknown `sslmode`, or what
    /// `tokio-postgres` refused.
    pub fn parse(url: &str) -> Result<Self, String> {
        let (rewritten, check) = rewrite_sslmode(url)?;
        let config = rewritten
            .parse::<tokio_postgres::Config>()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        let check = match (check, config.get_ssl_mode()) {
            (Some(check), _) => check,
            (None, tokio_postgres::config::SslMode::Disable) => TlsCheck::Disable,
            (None, _) => TlsCheck::Unverified,
        };
        Ok(Self { config, check })
    }

    /// This target with `name = value` set on each connection, after any
    /// `options` the URL gives (which it would otherwise replace).
    pub fn with_setting(&self, name: &str, value: &str) -> Self {
        let mut t = self.clone();
        let setting = format!("-c {name}={value}");
        let options = match self.config.get_options() {
            Some(given) => format!("{given} {setting}"),
            None => setting,
        };
        t.config.options(options);
        t
    }

    /// Whether `path` holds PEM certificates to trust.
    ///
    /// # Errors
    /// What is wrong with it, naming the file.
    pub fn check_ca_file(path: &Path) -> Result<(), String> {
        roots(Some(path)).map(|_| ())
    }

    /// The TLS connector for this target's mode.
    ///
    /// # Errors
    /// If `ca_file` cannot be read or holds no certificate, or no root is
    /// trusted for a verifying mode.
    pub fn tls(&self, ca_file: Option<&Path>) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let config = match self.check {
            TlsCheck::Disable | TlsCheck::Unverified => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth(),
            TlsCheck::VerifyFull => builder
                .with_root_certificates(roots(ca_file)?)
                .with_no_client_auth(),
            TlsCheck::VerifyCa => {
                let webpki = WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots(ca_file)?),
                    provider,
                )
                .build()
                .map_err(|e| e.to_string())?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyName(webpki)))
                    .with_no_client_auth()
            }
        };
        Ok(MakeRustlsConnect::new(config))
    }
}

/// Replaces a `verify-ca`/`verify-full` `sslmode` with `require`; returns the
/// string to parse and the mode read, if one was given.
fn rewrite_sslmode(url: &str) -> Result<(String, Option<TlsCheck>), String> {
    let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    let mode_of = |value: &str| match value {
        "disable" => Ok(TlsCheck::Disable),
        "prefer" | "require" => Ok(TlsCheck::Unverified),
        "verify-ca" => Ok(TlsCheck::VerifyCa),
        "verify-full" => Ok(TlsCheck::VerifyFull),
        other => Err(format!(
            "sslmode `{other}` is not one of disable, prefer, require, verify-ca, verify-full"
        )),
    };
    let mapped = |value: &str| match value {
        "verify-ca" | "verify-full" => "require".to_owned(),
        other => other.to_owned(),
    };
    if is_url {
        let mut parsed = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
        let mut check = None;
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        for (k, v) in &pairs {
            if k == "sslmode" {
                check = Some(mode_of(v)?);
            }
        }
        if check.is_some() {
            let mut query = parsed.query_pairs_mut();
            query.clear();
            for (k, v) in &pairs {
                let v = if k == "sslmode" { mapped(v) } else { v.clone() };
                query.append_pair(k, &v);
            }
        }
        return Ok((parsed.to_string(), check));
    }
    let mut check = None;
    let words: Result<Vec<String>, String> = url
        .split_whitespace()
        .map(|word| match word.split_once('=') {
            Some(("sslmode", v)) => {
                check = Some(mode_of(v)?);
                Ok(format!("sslmode={}", mapped(v)))
            }
            _ => Ok(word.to_owned()),
        })
        .collect();
    Ok((words?.join(" "), check))
}

/// The system's trusted roots, or those of `ca_file` when given.
fn roots(ca_file: Option<&Path>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if let Some(path) = ca_file {
        let err = |e: String| format!("store.ca_file {}: {e}", path.display());
        for cert in CertificateDer::pem_file_iter(path).map_err(|e| err(e.to_string()))? {
            roots
                .add(cert.map_err(|e| err(e.to_string()))?)
                .map_err(|e| err(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(err("no PEM certificates found".into()));
        }
        return Ok(roots);
    }
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        return Err("no trusted root certificates found on this system; set store.ca_file".into());
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_modes_are_read_and_the_strict_ones_handed_on_as_require() {
        for (mode, check) in [
            ("disable", TlsCheck::Disable),
            ("prefer", TlsCheck::Unverified),
            ("require", TlsCheck::Unverified),
            ("verify-ca", TlsCheck::VerifyCa),
            ("verify-full", TlsCheck::VerifyFull),
        ] {
            let t = PgTarget::parse(&format!("postgres://u:pw@db:5433/hg?sslmode={mode}")).unwrap();
            assert_eq!(t.check, check, "{mode}");
            assert_eq!(t.config.get_dbname(), Some("hg"));
            let kv = PgTarget::parse(&format!("host=db user=u sslmode={mode}")).unwrap();
            assert_eq!(kv.check, check, "{mode}");
        }
        let t = PgTarget::parse("postgres://postgres@127.0.0.1:5432/test").unwrap();
        assert_eq!(t.check, TlsCheck::Unverified, "libpq's default is prefer");
        assert!(!format!("{t:?}").contains("pw"));
    }

    #[test]
    fn settings_go_after_the_urls_own_options() {
        let t = PgTarget::parse("postgres://db/hg?options=-c%20search_path%3Dhg").unwrap();
        let relaxed = t.with_setting("synchronous_commit", "off");
        assert_eq!(
            relaxed.config.get_options(),
            Some("-c search_path=hg -c synchronous_commit=off")
        );
        let plain = PgTarget::parse("postgres://db/hg").unwrap();
        let strict = plain.with_setting("synchronous_commit", "on");
        assert_eq!(
            strict.config.get_options(),
            Some("-c synchronous_commit=on")
        );
    }

    #[test]
    fn unknown_modes_and_bad_urls_are_refused_with_a_reason() {
        let e = PgTarget::parse("postgres://db/hg?sslmode=verify").unwrap_err();
        assert!(e.contains("sslmode `verify`"), "{e}");
        let e = PgTarget::parse("host=db sslmode=allow-ish").unwrap_err();
        assert!(e.contains("allow-ish"), "{e}");
        let e = PgTarget::parse("postgres://db:notaport/hg").unwrap_err();
        assert!(e.starts_with("not a"), "{e}");
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let t = PgTarget::parse("postgres://db/hg?sslmode=verify-full").unwrap();
        let e = t.tls(Some(&path)).err().unwrap();
        assert!(e.contains("store.ca_file") && e.contains("no PEM"), "{e}");
    }
}
