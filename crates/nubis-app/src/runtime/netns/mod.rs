//! The `netns` driver: every instance is a Linux network namespace with confined processes
//! (see `nubis-netns`). The database says what should exist; a reconciler makes the host match
//! it, woken by every commit that touches what it reads and once a second, outside any
//! transaction. Power steps go through the [`Driver`] trait like the simulated driver's: a
//! provision waits until the reconciler made the namespace, a boot starts the init, a shutdown
//! stops it; each step takes at least its configured time (`[runtime]`), so a client polling
//! sees the same states in both modes. The status follows what runs: an init that dies on its own makes the instance
//! `offline`, with an event.

mod desired;
mod metadata;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use base64::Engine;
use futures_util::StreamExt;
use nubis_model::config::{ImageInit, RuntimeConfig};
use nubis_model::event::NewEvent;
use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::{Error, Result, Timestamp};
use nubis_netns::metadata::Metadata;
use nubis_netns::net::Net;
use nubis_netns::procs::{Boot, Procs};
use nubis_netns::spec::{InstanceSpec, Segment};
use nubis_netns::{Names, netns_path};

use super::{Driver, DriverFuture, Step};
use crate::instance::instance_entity;
use crate::{App, AppInner};

/// Tables whose changes alter the host's desired state.
pub(crate) const TABLES: &[&str] = &[
    "instances",
    "instance_interfaces",
    "ip_addresses",
    "ipv6_ranges",
    "ip_shares",
    "firewalls",
    "firewall_devices",
    "nodebalancers",
    "vpc_subnets",
];

/// Every how many passes the reconciler checks the host itself rather than its own record.
const FULL_EVERY: u32 = 10;

/// Namespaces made or checked at once.
const APPLY_AT_ONCE: usize = 8;

fn host_err(e: nubis_netns::Error) -> Error {
    Error::Internal(format!("instance runtime: {e}"))
}

/// The host side of the netns driver.
pub struct Netns {
    pub(crate) net: Net,
    pub(crate) procs: Procs,
    metadata: OnceLock<Arc<Metadata>>,
    grace: Duration,
    /// The configured step times, which each step takes at least.
    timings: RuntimeConfig,
    kick: tokio::sync::Notify,
    /// What was last applied to each instance's namespace.
    applied: Mutex<HashMap<i64, InstanceSpec>>,
    /// Bumped after every pass (provisions wait on it).
    passes: tokio::sync::watch::Sender<u64>,
    app: OnceLock<Weak<AppInner>>,
}

impl Netns {
    pub fn new(config: &RuntimeConfig, tag: &str) -> Arc<Netns> {
        let names = Names::new(tag, std::path::Path::new(&config.state_dir));
        Arc::new(Netns {
            net: Net::new(names.clone()),
            procs: Procs::new(names),
            metadata: OnceLock::new(),
            grace: Duration::from_millis(config.shutdown_grace_ms),
            timings: config.clone(),
            kick: tokio::sync::Notify::new(),
            applied: Mutex::new(HashMap::new()),
            passes: tokio::sync::watch::Sender::new(0),
            app: OnceLock::new(),
        })
    }

    pub fn names(&self) -> &Names {
        self.net.names()
    }

    pub(crate) fn bind_app(&self, app: &App) {
        let _ = self.app.set(Arc::downgrade(&app.0));
    }

    fn app(&self) -> Result<App> {
        self.app.get().and_then(Weak::upgrade).map(App).ok_or_else(|| Error::Internal("the application is gone".into()))
    }

    /// Wakes the reconciler.
    pub(crate) fn kick(&self) {
        self.kick.notify_one();
    }

    fn is_applied(&self, id: i64) -> bool {
        self.applied.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&id)
    }

    /// Waits until the reconciler made instance `id`'s namespace.
    async fn wait_applied(&self, id: i64) -> Result<()> {
        let mut rx = self.passes.subscribe();
        self.kick();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !self.is_applied(id) {
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return Err(Error::Internal(format!("instance {id}: its namespace was not made in time"))),
            }
        }
        Ok(())
    }

    async fn boot(&self, id: i64) -> Result<()> {
        self.wait_applied(id).await?;
        let app = self.app()?;
        let Some(inst) = app.store.instance_by_id(id).await? else { return Ok(()) };
        let data = app.store.instance_boot_data(id).await?.unwrap_or_default();
        let user_data =
            data.user_data.as_deref().and_then(|u| base64::engine::general_purpose::STANDARD.decode(u.trim()).ok());
        let nameservers: Vec<String> = app
            .config
            .regions
            .iter()
            .filter(|r| r.id == inst.region)
            .flat_map(|r| [r.resolver_ipv4.clone(), r.resolver_ipv6.clone()])
            .collect();
        // What the image's init runs (user data when the image is unknown or there is none).
        let init = inst.image.as_deref().and_then(|i| app.config.images.iter().find(|c| c.id == i)).map(|c| &c.init);
        let command = match init {
            Some(ImageInit::Command(c)) => Some(c.as_str()),
            Some(ImageInit::UserData) | None => None,
        };
        let boot =
            Boot { id, hostname: &inst.label, user_data: user_data.as_deref(), command, nameservers: &nameservers };
        self.procs.start(boot).await.map_err(host_err)
    }

    /// Performs `step`, taking at least its configured time.
    async fn step(&self, id: i64, step: Step) -> Result<()> {
        let (done, ()) = tokio::join!(self.perform(id, step), tokio::time::sleep(step.least(&self.timings)));
        done
    }

    async fn perform(&self, id: i64, step: Step) -> Result<()> {
        match step {
            Step::Provision => self.wait_applied(id).await,
            Step::Boot => self.boot(id).await,
            Step::Shutdown => self.procs.stop(id, self.grace).await.map_err(host_err),
            Step::Reboot => {
                self.procs.stop(id, self.grace).await.map_err(host_err)?;
                self.boot(id).await
            }
        }
    }
}

/// Makes one instance's namespace match its spec (unless it did already) and opens its metadata
/// listener.
async fn apply_one(
    n: &Netns,
    id: i64,
    spec: &InstanceSpec,
    fabric: &[nubis_netns::net::Link],
    metadata: Option<&Arc<Metadata>>,
    full: bool,
) {
    let same = n.applied.lock().unwrap_or_else(|p| p.into_inner()).get(&id) == Some(spec);
    if !same || full {
        if let Err(e) = n.net.apply_instance(id, spec, fabric).await {
            tracing::warn!(instance = id, error = %e, "instance runtime: namespace not made");
            n.applied.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            return;
        }
        n.applied.lock().unwrap_or_else(|p| p.into_inner()).insert(id, spec.clone());
        n.passes.send_modify(|p| *p += 1);
    }
    if let Some(m) = metadata
        && let Err(e) = m.ensure(id, &netns_path(&n.names().fabric()))
    {
        tracing::warn!(instance = id, error = %e, "instance runtime: no metadata listener");
    }
}

/// The [`Driver`] of the netns runtime.
pub struct NetnsDriver(pub Arc<Netns>);

impl Driver for NetnsDriver {
    fn run(&self, instance_id: i64, step: Step) -> DriverFuture {
        let n = self.0.clone();
        Box::pin(async move { n.step(instance_id, step).await })
    }
}

impl App {
    /// The netns runtime, when it drives the instances.
    pub fn netns(&self) -> Option<&Arc<Netns>> {
        self.netns.as_ref()
    }

    /// What the netns driver lacks on this host, one line each (empty: nothing).
    pub fn runtime_missing(&self) -> Vec<String> {
        nubis_netns::check::missing(std::path::Path::new(&self.config.runtime.state_dir))
    }

    /// Starts the netns runtime (nothing with the simulated driver): refuses when privileges or
    /// tools are missing, makes the host match the database once, then keeps it so.
    pub async fn runtime_start(&self) -> Result<()> {
        let Some(n) = self.netns.clone() else { return Ok(()) };
        let missing = self.runtime_missing();
        if !missing.is_empty() {
            return Err(Error::Internal(format!(
                "[runtime] driver = \"netns\" cannot run here: {} (see `nubis admin runtime check`)",
                missing.join("; ")
            )));
        }
        // Packets to an unused private address must not follow the host's default route.
        let private = self.private_pool.net();
        if !nubis_netns::net::kept_here(private) {
            return Err(Error::Internal(format!(
                "[runtime] driver = \"netns\" needs network.private_ipv4 inside 192.168.128.0/17, which never \
                 leaves this host (it is {private})"
            )));
        }
        let source = Arc::new(metadata::AppSource(Arc::downgrade(&self.0)));
        let _ = n.metadata.set(Metadata::new(source));
        n.net.ensure_fabric().await.map_err(host_err)?;
        self.netns_pass(&n, true, true).await?;
        let app = Arc::downgrade(&self.0);
        tokio::spawn(async move {
            let mut count = 0u32;
            loop {
                let Some(n) = app.upgrade().and_then(|a| a.netns.clone()) else { return };
                let _ = tokio::time::timeout(Duration::from_secs(1), n.kick.notified()).await;
                // Let a burst of commits settle into one pass.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let Some(inner) = app.upgrade() else { return };
                count = count.wrapping_add(1);
                if let Err(e) = App(inner).netns_pass(&n, count.is_multiple_of(FULL_EVERY), false).await {
                    tracing::warn!(error = %e, "instance runtime: reconcile pass failed");
                }
            }
        });
        Ok(())
    }

    /// One pass: namespaces, links, addresses, rules and processes made to match the database.
    /// `full`: compare with the host itself, not with what was applied last; `startup`: inits
    /// of running instances that are not there are started again (rather than taken as crashed).
    async fn netns_pass(&self, n: &Arc<Netns>, full: bool, startup: bool) -> Result<()> {
        let snap = self.netns_snapshot().await?;
        let d = &snap.desired;
        if full {
            n.net.ensure_fabric().await.map_err(host_err)?;
        }
        let fabric = n.net.fabric_links().await.map_err(host_err)?;
        let bridges = d
            .instances
            .values()
            .flat_map(|s| s.nics.iter())
            .filter(|nic| !matches!(nic.segment, Segment::Region(_)))
            .map(|nic| nic.segment.bridge())
            .collect();
        n.net.apply_regions(&d.regions, &fabric).await.map_err(host_err)?;
        n.net.apply_bridges(&bridges, &fabric).await.map_err(host_err)?;
        let fabric = n.net.fabric_links().await.map_err(host_err)?;
        let metadata = n.metadata.get().cloned();
        // Several namespaces at once (the work is mostly waiting for `ip` and `nft`); each
        // provision waiting for its namespace goes on as soon as that one is made.
        let work: Vec<_> =
            d.instances.iter().map(|(id, spec)| apply_one(n, *id, spec, &fabric, metadata.as_ref(), full)).collect();
        futures_util::stream::iter(work).buffer_unordered(APPLY_AT_ONCE).collect::<Vec<()>>().await;
        // What the database no longer describes.
        let mut gone: Vec<i64> = Vec::new();
        for ns in n.net.namespaces(false).await.map_err(host_err)? {
            match n.names().instance_of(&ns) {
                Some(id) if d.instances.contains_key(&id) => {}
                Some(id) => gone.push(id),
                None if ns == n.names().fabric() => {}
                None => n.net.remove_namespace(&ns).await.map_err(host_err)?,
            }
        }
        gone.extend(n.procs.known().into_iter().filter(|id| !d.instances.contains_key(id)));
        gone.sort();
        gone.dedup();
        for id in gone {
            n.procs.stop(id, Duration::ZERO).await.map_err(host_err)?;
            n.net.remove_instance(id).await.map_err(host_err)?;
            n.procs.remove_state(id);
            if let Some(m) = &metadata {
                m.forget(id);
            }
            n.applied.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        }
        n.passes.send_modify(|p| *p += 1);
        // Processes follow the stable statuses; transitions belong to the driver.
        for (id, (status, op_seq, account)) in &snap.status {
            let alive = n.procs.alive(*id);
            match status {
                Status::Running if !alive && startup => {
                    tracing::info!(instance = id, "starting the init of a running instance again");
                    if let Err(e) = n.boot(*id).await {
                        tracing::warn!(instance = id, error = %e, "instance runtime: init not started");
                    }
                }
                Status::Running if !alive => self.netns_crashed(*id, *account, *op_seq).await?,
                Status::Offline if alive => n.procs.stop(*id, n.grace).await.map_err(host_err)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// An instance whose init exited on its own: `offline`, with an event (unless an operation
    /// started meanwhile).
    async fn netns_crashed(&self, id: i64, account_id: i64, op_seq: i64) -> Result<()> {
        let crashed = self
            .write(|tx| {
                Box::pin(async move {
                    let Some(i) = tx.instance_lock(id, account_id).await? else { return Ok(false) };
                    if i.op_seq != op_seq || i.status != Status::Running.name() {
                        return Ok(false);
                    }
                    let e = NewEvent {
                        account_id: i.account_id,
                        action: "instance_shutdown",
                        entity: Some(instance_entity(&i)),
                        secondary: None,
                        username: None,
                        status: "finished",
                        message: Some("The instance's init process exited; the instance is offline.".into()),
                        visible_with: Some((GrantKind::Instance, i.id)),
                        subject_user_id: None,
                    };
                    let e = tx.event_insert(&e).await?;
                    let off = Status::Offline.name();
                    tx.instance_start_transition(id, off, off, Some(e), "", Timestamp::now()).await?;
                    Ok(true)
                })
            })
            .await?;
        if crashed {
            tracing::warn!(instance = id, "the instance's init exited: offline");
        }
        Ok(())
    }

    /// An instance's console log (the output of its init and user data).
    pub fn instance_console(&self, id: i64) -> Option<String> {
        let n = self.netns.as_ref()?;
        Some(nubis_netns::procs::read_console(&n.names().console_log(id)))
    }
}
