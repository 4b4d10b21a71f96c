//! `hookgate migrate`: brings a PostgreSQL database's schema up to this
//! build's, without serving. Gateways also migrate at start; running this first
//! lets an operator apply a new release's schema on their own schedule (and with
//! a role allowed to change the schema, while the gateways run with less).

use std::path::PathBuf;

use clap::Args;
use hookgate_server::{PgTarget, migrate_postgres};
use hookgate_server::{StoreBackend, StoreConfig, redact_password};

/// Options of `hookgate migrate`.
#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The database: `postgres://user:pass@host:5432/db?sslmode=...`.
    #[arg(long, env = "HOOKGATE_STORE__URL", hide_env_values = true)]
    store_url: String,
    /// PEM roots to verify the server by (`sslmode=verify-ca|verify-full`).
    #[arg(long, env = "HOOKGATE_STORE__CA_FILE")]
    ca_file: Option<PathBuf>,
}

/// Applies the migrations; returns the exit code (0 done, 2 the user's to fix).
pub fn run(args: MigrateArgs) -> i32 {
    if let Err(e) = PgTarget::parse(&args.store_url) {
        eprintln!("hookgate migrate: --store-url: {e}");
        return 2;
    }
    let config = StoreConfig {
        backend: StoreBackend::Postgres,
        url: Some(args.store_url.clone()),
        ca_file: args.ca_file,
        ..StoreConfig::default()
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hookgate migrate: cannot start a runtime: {e}");
            return 1;
        }
    };
    let where_ = redact_password(&args.store_url);
    match runtime.block_on(migrate_postgres(&config)) {
        Ok((applied, version)) if applied.is_empty() => {
            println!("{where_}: schema already at version {version}");
            0
        }
        Ok((applied, version)) => {
            let list: Vec<String> = applied.iter().map(u64::to_string).collect();
            println!(
                "{where_}: applied migration(s) {}; schema at version {version}",
                list.join(", ")
            );
            0
        }
        Err(e) => {
            eprintln!("hookgate migrate: {where_}: {e}");
            2
        }
    }
}
