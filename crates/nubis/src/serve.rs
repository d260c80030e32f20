//! `nubis serve`: open the store, bootstrap an empty database, start the mailer and the API, and
//! shut down gracefully on SIGINT or SIGTERM.

use std::io::Write;
use std::path::Path;

use crate::cli::{Role, ServeArgs, StateArgs, SyncMode};
use anyhow::Context;
use nubis_app::App;
use nubis_app::admin::Admin;
use nubis_app::mailer::Transport;
use nubis_store::{Store, StoreOptions};

/// Opens the store and the application on the state the arguments name, with the operator's
/// capability (`nubis admin` and the start-up of `nubis serve` hold it; requests never do).
pub async fn open(state: &StateArgs) -> anyhow::Result<(App, Admin)> {
    open_with(state, |_| {}).await
}

/// The same, adjusting the configuration first.
pub async fn open_with(
    state: &StateArgs,
    adjust: impl FnOnce(&mut nubis_model::config::Config),
) -> anyhow::Result<(App, Admin)> {
    let mut config = runtime_config(state)?;
    adjust(&mut config);
    // The data directory holds the database, the admin token and mail with set-password
    // links: created readable by its owner only.
    nubis_store::files::create_private_dir(&state.data_dir)
        .with_context(|| format!("creating {}", state.data_dir.display()))?;
    let opts = StoreOptions {
        sqlite_sync_full: state.sqlite_sync == SyncMode::Full,
        cached_pages: config.limits.cached_pages,
        ..Default::default()
    };
    let url = state.database_url();
    let store = Store::open(&url, &opts).await.with_context(|| format!("opening {}", nubis_store::redact(&url)))?;
    App::new(store, config).map_err(crate::refusal::plain)
}

/// The configuration with the driver of the command line and, for the netns driver, the host
/// tag derived from the database when the configuration names none (stable across restarts,
/// different for two servers of one host).
fn runtime_config(state: &StateArgs) -> anyhow::Result<nubis_model::config::Config> {
    use nubis_model::config::DriverKind;
    let mut config = crate::config::load(state.config.as_deref())?;
    match state.runtime_driver {
        Some(crate::cli::RuntimeDriver::Netns) => config.runtime.driver = DriverKind::Netns,
        Some(crate::cli::RuntimeDriver::Simulated) => config.runtime.driver = DriverKind::Simulated,
        None => {}
    }
    if config.runtime.host_tag.is_empty() && config.runtime.driver == DriverKind::Netns {
        let url = state.database_url();
        let h = url.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
        config.runtime.host_tag = (0..4).map(|i| digits[((h >> (i * 8)) % 36) as usize] as char).collect();
    }
    Ok(config)
}

/// `nubis admin runtime check`.
pub fn runtime_check(state: &StateArgs) -> anyhow::Result<()> {
    let config = runtime_config(state)?;
    let missing = nubis_netns_check(&config.runtime.state_dir);
    let driver = match config.runtime.driver {
        nubis_model::config::DriverKind::Netns => "netns",
        nubis_model::config::DriverKind::Simulated => "simulated",
    };
    println!("configured driver: {driver}");
    if missing.is_empty() {
        println!("netns driver: can run here (state in {})", config.runtime.state_dir);
        return Ok(());
    }
    println!("netns driver: cannot run here:");
    for m in &missing {
        println!("  missing: {m}");
    }
    if driver == "netns" { Err(anyhow::anyhow!("the configured netns driver cannot run here")) } else { Ok(()) }
}

fn nubis_netns_check(state_dir: &str) -> Vec<String> {
    nubis_app::runtime_missing_on_host(state_dir)
}

/// `nubis admin runtime sweep`.
pub async fn runtime_sweep(state: &StateArgs) -> anyhow::Result<()> {
    let config = runtime_config(state)?;
    nubis_app::runtime_sweep_host(&config.runtime.state_dir).await.map_err(crate::refusal::fail)?;
    println!("removed everything nubis made on this host");
    Ok(())
}

fn write_admin_token(dir: &Path, secret: &str) -> anyhow::Result<()> {
    // 0600, also when a file of that name was there before.
    let mut f = nubis_store::files::create_private_file(&dir.join("admin-token"))?;
    writeln!(f, "{secret}")?;
    Ok(())
}

/// A refused fixture file, one line per problem: `FILE: FIELD: line N: reason`.
fn fixture_error(path: &Path, e: nubis_model::Error) -> anyhow::Error {
    match e {
        nubis_model::Error::Invalid(v) => {
            let lines: Vec<String> = v
                .iter()
                .map(|f| format!("{}: {}: {}", path.display(), f.field.as_deref().unwrap_or("-"), f.reason))
                .collect();
            anyhow::anyhow!("the fixture file was refused:\n{}", lines.join("\n"))
        }
        other => anyhow::anyhow!("loading {}: {other}", path.display()),
    }
}

pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing requests in flight");
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let _log = crate::logging::init(args.log_format);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let controls = args.controls_enabled(crate::config::controls_setting(args.state.config.as_deref())?);
    let (app, admin) = open_with(&args.state, |c| c.controls.enabled = controls).await?;
    if controls && !args.listen.ip().is_loopback() {
        tracing::warn!(listen = %args.listen, "the test controls (/nubis/v1) are on for a non-loopback address");
    }
    let role = args.role();
    if role == Role::Dataplane {
        return crate::dataplane_role::run(app, args.listen, shutdown_signal()).await;
    }

    // The netns driver: the host made to match the database before anything moves.
    if let Err(e) = app.runtime_start().await {
        let line = match e {
            nubis_model::Error::Internal(m) => m,
            e => e.to_string(),
        };
        eprintln!("nubis: {line}");
        std::process::exit(2);
    }
    let first_run = app.bootstrap(args.bootstrap_token.as_deref()).await.map_err(crate::refusal::flag)?;
    if let Some(secret) = &first_run {
        if args.bootstrap_token.is_none() {
            write_admin_token(&args.state.data_dir, secret)?;
            println!(
                "nubis: created the account owner 'admin'; its token (shown once, also in {}):",
                args.state.data_dir.join("admin-token").display()
            );
            println!("{secret}");
        } else {
            tracing::info!("created the account owner 'admin' with the bootstrap token");
        }
    }

    if let Some(t) = &args.operator_token {
        app.admin_operator_token_create(&admin, "serve --operator-token", Some(t))
            .await
            .map_err(crate::refusal::flag)?;
    }
    if let Some(path) = &args.fixtures {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let report = app.fixtures_apply(&admin, &text).await.map_err(|e| fixture_error(path, e))?;
        tracing::info!(?report, "fixtures loaded");
    }

    let transport = match &args.smtp_url {
        Some(url) => Transport::Smtp(url.clone()),
        None => Transport::Files(args.state.data_dir.join("outbox")),
    };
    let mailer = app.spawn_mailer(transport).map_err(crate::refusal::plain)?;
    // Invoices close at each month's end (also those missed while nubis was stopped).
    let billing =
        app.spawn_billing_closer(std::time::Duration::from_secs(app.config().billing.close_interval_secs.max(1)));
    // Payments left waiting for the gateway's answer are settled; refunds due are given back.
    let settler =
        app.spawn_payment_settler(std::time::Duration::from_secs(app.config().billing.settle_interval_secs.max(1)));
    // Instances left mid-transition by the last run (a crash, a restart) complete now.
    let resumed = app.runtime_resume().await.map_err(crate::refusal::plain)?;
    if resumed > 0 {
        tracing::info!(resumed, "resumed instance transitions");
    }

    // Service transfers: expiry of pending ones and completion of accepted ones.
    let transfers = app.spawn_transfer_worker();
    // Automatic backups, in each instance's window.
    let backups = app.spawn_backup_taker(std::time::Duration::from_secs(60));
    // Events past the window are forgotten.
    let pruner = app.spawn_event_pruner(std::time::Duration::from_secs(60));
    // Deep pages in a field's order: the order fences follow the lists' growth.
    let orders = app.spawn_list_order_keeper(std::time::Duration::from_secs(10));

    let listener =
        tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    let dataplane = if role == Role::All { Some(crate::dataplane::start(&app)) } else { None };
    let addr = listener.local_addr()?;
    app.set_listen_url(format!("http://{addr}"));
    if first_run.is_some() {
        // Printed, never logged: the link sets the owner's password once.
        let link = app
            .admin_password_link(&admin, nubis_app::admin::BOOTSTRAP_USERNAME)
            .await
            .map_err(crate::refusal::plain)?;
        println!("nubis: set the password of 'admin' (the link works once): {link}");
    }
    // The console's line comes first: scripts wait for the "listening" line and may stop reading.
    let console = if app.config().console.enabled {
        println!("nubis: console at http://{addr}{}/", app.console_base_path());
        nubis_console::router(app.clone())
    } else {
        axum::Router::new()
    };
    println!("nubis: listening on http://{addr}/v4");
    let _ = std::io::stdout().flush();
    tracing::info!(%addr, "API listening");

    nubis_http::serve_with(listener, app.clone(), console, shutdown_signal()).await?;
    if let Some(dp) = dataplane {
        dp.stop().await;
    }
    transfers.abort();
    backups.abort();
    pruner.abort();
    orders.abort();
    mailer.abort();
    billing.abort();
    settler.abort();
    app.store().close().await;
    tracing::info!("stopped");
    Ok(())
}
