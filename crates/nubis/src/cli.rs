//! Command-line interface: every flag also reads a `NUBIS_*` environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "nubis", version, about = "A self-hostable cloud control plane with a Linode-style API")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the API (and run the load-balancer data plane).
    Serve(ServeArgs),
    /// Operators' commands on the database; the server need not be running.
    Admin(AdminArgs),
}

/// Where the state lives (shared by `serve` and `admin`).
#[derive(Args, Clone)]
pub struct StateArgs {
    /// Directory for the SQLite database, the admin token and the outbox.
    #[arg(long, env = "NUBIS_DATA_DIR", default_value = "./nubis-data")]
    pub data_dir: PathBuf,
    /// Database URL: `sqlite://PATH`, `sqlite::memory:` or `postgres://...`
    /// (default: `sqlite://<data-dir>/nubis.db`).
    #[arg(long, env = "NUBIS_DATABASE")]
    pub database: Option<String>,
    /// Configuration file (TOML): regions and their pools, types, images, limits.
    #[arg(long, env = "NUBIS_CONFIG")]
    pub config: Option<PathBuf>,
    /// SQLite durability: `normal` survives a crash of nubis; `full` also survives power loss.
    #[arg(long, env = "NUBIS_SQLITE_SYNC", value_enum, default_value_t = SyncMode::Normal)]
    pub sqlite_sync: SyncMode,
    /// The instance driver, instead of `[runtime] driver` of the configuration: `simulated`, or
    /// `netns` (each instance a network namespace; needs root).
    #[arg(long, env = "NUBIS_RUNTIME_DRIVER", value_enum)]
    pub runtime_driver: Option<RuntimeDriver>,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum RuntimeDriver {
    Simulated,
    Netns,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum SyncMode {
    Normal,
    Full,
}

impl StateArgs {
    pub fn database_url(&self) -> String {
        self.database.clone().unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("nubis.db").display()))
    }
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// What a `nubis serve` process runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// The API and the data plane.
    All,
    /// The API without balancer listeners.
    Api,
    /// Balancer listeners without the API.
    Dataplane,
}

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// Address of the API.
    #[arg(long, env = "NUBIS_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Value of the first admin token, on an empty database (random otherwise).
    #[arg(long, env = "NUBIS_BOOTSTRAP_TOKEN", hide_env_values = true)]
    pub bootstrap_token: Option<String>,
    /// Send mail by SMTP (`smtp://host:port`) instead of writing `.eml` files to `<data-dir>/outbox/`.
    #[arg(long, env = "NUBIS_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Log format.
    #[arg(long, env = "NUBIS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// What this process runs: `all` (the API and the load-balancer data plane), `api` (the API
    /// only) or `dataplane` (balancer listeners only; the HTTP address then answers `/healthz` and
    /// `/metrics`). Several `dataplane`/`all` processes on one PostgreSQL share the balancers, each
    /// served by exactly one of them (docs/dataplane-ownership.md).
    #[arg(long, env = "NUBIS_ROLE", value_enum, default_value_t = Role::All)]
    pub role: Role,
    /// Do not run the load-balancer data plane in this process (the same as `--role api`).
    #[arg(long, env = "NUBIS_NO_DATAPLANE", conflicts_with = "role")]
    pub no_dataplane: bool,
    /// Disable the test controls (`/nubis/v1`) entirely, whatever the configuration says.
    #[arg(long, env = "NUBIS_NO_CONTROLS")]
    pub no_controls: bool,
    /// Enable the test controls (`/nubis/v1`) even when `--listen` is not a loopback address
    /// (they are on by default only on loopback; `[controls] enabled` in the configuration also
    /// decides).
    #[arg(long, env = "NUBIS_CONTROLS", conflicts_with = "no_controls")]
    pub controls: bool,
    /// An operator token (at least 16 characters) for the test controls, created at start-up if
    /// missing.
    #[arg(long, env = "NUBIS_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<String>,
    /// Load a fixture file (YAML or JSON: accounts, users, tokens, VPCs, firewalls, instances,
    /// balancers) at start-up, through the application's rules; a bad file stops the start.
    #[arg(long, env = "NUBIS_FIXTURES")]
    pub fixtures: Option<PathBuf>,
}

impl ServeArgs {
    /// The role, `--no-dataplane` read as `--role api`.
    pub fn role(&self) -> Role {
        if self.no_dataplane { Role::Api } else { self.role }
    }

    /// Whether the test controls are served: `--no-controls` turns them off and `--controls` on;
    /// otherwise `[controls] enabled` when the configuration file sets it; otherwise on only when
    /// the API listens on a loopback address, so that a server reachable from other hosts never
    /// serves them unless asked to.
    pub fn controls_enabled(&self, configured: Option<bool>) -> bool {
        if self.no_controls {
            return false;
        }
        if self.controls {
            return true;
        }
        configured.unwrap_or_else(|| self.listen.ip().is_loopback())
    }
}

#[derive(Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(subcommand)]
    pub command: AdminCommand,
}

/// Where the running server is, for the commands that drive its test controls.
#[derive(Args, Clone)]
pub struct RemoteArgs {
    /// Base URL of the running nubis (for clock, fault, snapshot, reset and fixtures).
    #[arg(long, env = "NUBIS_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Operator token for the test controls.
    #[arg(long, env = "NUBIS_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<String>,
}

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Accounts.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Users.
    #[command(subcommand)]
    User(UserCommand),
    /// Personal access tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Messages sent (or queued) by nubis.
    Outbox {
        /// Also print each message's text (as written, not mail-encoded).
        #[arg(long)]
        bodies: bool,
    },
    /// Compute instances.
    #[command(subcommand)]
    Instance(InstanceCommand),
    /// The instance runtime.
    #[command(subcommand)]
    Runtime(RuntimeCommand),
    /// The running server's clock (test controls).
    #[command(subcommand)]
    Clock(ClockCommand),
    /// Faults injected into the running server (test controls).
    #[command(subcommand)]
    Fault(FaultCommand),
    /// Snapshots of the running server's whole state (test controls).
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Back to a fresh first-run state with the same bootstrap token (test controls).
    Reset,
    /// Load a fixture file into the running server (test controls).
    Fixtures {
        /// YAML or JSON.
        file: PathBuf,
    },
    /// Invoices: close the usage into invoices.
    #[command(subcommand)]
    Billing(BillingCommand),
    /// Promo codes offered to new accounts.
    #[command(subcommand)]
    Promo(PromoCommand),
    /// Write a consistent copy of the whole database into FILE, also while servers run
    /// (SQLite: online backup; PostgreSQL: `pg_dump -Fc`, from `$PGBIN` or `PATH`).
    Backup {
        /// The backup file to write (replaced when it exists).
        file: PathBuf,
    },
    /// Replace the whole database with the backup FILE (SQLite: online backup API;
    /// PostgreSQL: `pg_restore --clean`). Refused while a server uses the database: stop every
    /// server (and data-plane process) first.
    Restore {
        /// A file written by `nubis admin backup`.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum ClockCommand {
    /// Print the clock.
    Show,
    /// Move the clock forward.
    Advance {
        /// Seconds.
        seconds: i64,
    },
    /// Set the clock (not before the system time).
    Set {
        /// `YYYY-MM-DDTHH:MM:SS`
        now: String,
    },
    /// Back to the system time.
    Reset,
}

#[derive(Subcommand)]
pub enum FaultCommand {
    /// Inject a fault; the JSON is the body of `POST /nubis/v1/faults`, such as
    /// `{"route": "GET /v4/vpcs", "status": 503, "count": 2}`.
    Add { json: String },
    /// List the active faults.
    List,
    /// Remove a fault.
    Delete { id: i64 },
}

#[derive(Subcommand)]
pub enum SnapshotCommand {
    /// Save the whole state under a name.
    Save { name: String },
    /// Replace the whole state with a snapshot.
    Restore { name: String },
    /// List the snapshots.
    List,
    /// Delete a snapshot.
    Delete { name: String },
}

#[derive(Subcommand)]
pub enum BillingCommand {
    /// Close every month that has ended, then the usage of this month up to now, into invoices
    /// (of one account, or of every account).
    Close {
        /// The account's euuid (every account when omitted).
        #[arg(long)]
        account: Option<String>,
    },
    /// Close only the months that have ended (what `nubis serve` does by itself).
    CloseDue,
    /// List the charges given back to cards, and those waiting to be (a refund the payment
    /// gateway did not take is tried again until it does).
    Refunds,
    /// Settle the payments left waiting for the gateway's answer and give back the refunds due
    /// now (what `nubis serve` does by itself every few seconds).
    Settle,
}

#[derive(Subcommand)]
pub enum PromoCommand {
    /// Offer a promo code (or change it).
    Create {
        #[arg(long)]
        code: String,
        /// Total credit in dollars, such as 50.00.
        #[arg(long)]
        credit: String,
        /// Credit usable per invoice in dollars (the whole credit by default).
        #[arg(long)]
        monthly_cap: Option<String>,
        /// Last moment the code can be redeemed and its credit used (2027-01-01T00:00:00).
        #[arg(long)]
        expires: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List the promo codes offered.
    List,
    /// Withdraw a promo code (credits already given stay).
    Delete { code: String },
}

#[derive(Subcommand)]
pub enum MaintenanceCommand {
    /// Schedule a maintenance window for an instance; prints its id.
    Schedule {
        /// The instance's id.
        id: i64,
        /// reboot, cold_migration or live_migration.
        #[arg(long = "type", default_value = "reboot")]
        kind: String,
        /// When it begins (2026-12-01T04:00:00).
        #[arg(long)]
        when: String,
        #[arg(long)]
        reason: String,
    },
    /// Set a window's status: pending, started, completed or canceled.
    Status {
        /// The maintenance window's id.
        maintenance_id: i64,
        status: String,
    },
}

#[derive(Subcommand)]
pub enum RuntimeCommand {
    /// Says whether `[runtime] driver = "netns"` can run on this host, and what is missing.
    Check,
    /// Removes everything every nubis made on this host (instance processes, `nubis*` network
    /// namespaces, links, nftables tables, routes). Only while no server runs: for tests, and
    /// after an uninstall.
    Sweep,
}

#[derive(Subcommand)]
pub enum InstanceCommand {
    /// Print an instance's console log: the output of its init and of its user data (netns
    /// driver).
    Console {
        /// The instance's id.
        id: i64,
    },
    /// Enable an instance for additional public IPv4 addresses (what "by support request" means
    /// here); `--off` withdraws it.
    AllowExtraIpv4 {
        /// The instance's id.
        id: i64,
        #[arg(long)]
        off: bool,
    },
    /// Mark an instance as being in live migration (firewall changes are refused meanwhile), or
    /// clear the mark.
    LiveMigration {
        /// The instance's id.
        id: i64,
        #[arg(long, conflicts_with = "off", required_unless_present = "off")]
        on: bool,
        #[arg(long)]
        off: bool,
    },
    /// Maintenance windows of instances.
    #[command(subcommand)]
    Maintenance(MaintenanceCommand),
}

#[derive(Subcommand)]
pub enum AccountCommand {
    /// Create an account with its owner.
    Create {
        #[arg(long)]
        company: String,
        /// Username of the owner.
        #[arg(long)]
        username: String,
        #[arg(long)]
        email: String,
        /// Make it a child of this account (euuid); the child gets the parent's proxy user.
        #[arg(long)]
        parent: Option<String>,
    },
    /// List accounts.
    List,
    /// Mark an account as having an active terms-of-service violation (it can then neither
    /// create nor accept service transfers), or clear the mark.
    TosViolation {
        /// The account's euuid.
        euuid: String,
        #[arg(long, conflicts_with = "off", required_unless_present = "off")]
        on: bool,
        #[arg(long)]
        off: bool,
    },
    /// Show an account with its billing state (also a canceled one), as JSON.
    Show {
        /// The account's euuid.
        euuid: String,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user in an account.
    Create {
        /// The account's euuid.
        #[arg(long)]
        account: String,
        #[arg(long)]
        username: String,
        #[arg(long)]
        email: String,
        #[arg(long)]
        restricted: bool,
    },
    /// List users of every account.
    List,
    /// Set or reset a user's password: prints a one-time set-password link, or with
    /// `--password-stdin` sets the password read from standard input.
    Password {
        #[arg(long)]
        username: String,
        /// Read the new password from standard input instead of printing a link.
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Issue a personal access token for a user (or, with `--operator`, an operator token for
    /// the test controls); prints it once.
    Create {
        #[arg(long, required_unless_present = "operator")]
        username: Option<String>,
        /// An operator token: it reaches the test controls (`/nubis/v1`) and nothing else.
        #[arg(long, conflicts_with_all = ["username", "expiry_days"])]
        operator: bool,
        /// `*` or space-separated scopes such as `vpc:read_write events:read_only`.
        #[arg(long, default_value = "*")]
        scopes: String,
        /// Days until the token expires (never by default).
        #[arg(long)]
        expiry_days: Option<i64>,
        #[arg(long, default_value = "admin-issued")]
        label: String,
    },
}
