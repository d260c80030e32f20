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
    /// Do not run the load-balancer data plane in this process.
    #[arg(long, env = "NUBIS_NO_DATAPLANE")]
    pub no_dataplane: bool,
}

#[derive(Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub state: StateArgs,
    #[command(subcommand)]
    pub command: AdminCommand,
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
    Outbox,
    /// Compute instances.
    #[command(subcommand)]
    Instance(InstanceCommand),
    /// Invoices: close the usage into invoices.
    #[command(subcommand)]
    Billing(BillingCommand),
    /// Promo codes offered to new accounts.
    #[command(subcommand)]
    Promo(PromoCommand),
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
pub enum InstanceCommand {
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
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Issue a personal access token for a user; prints it once.
    Create {
        #[arg(long)]
        username: String,
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
