//! API tests: the real `nubis` binary on an ephemeral port, spoken to over HTTP and JSON.
//! Run against SQLite always, and against PostgreSQL when `TEST_DATABASE_URL` is set.
//! Tests are named after the rule they check.

mod support;

mod admin_cli;
mod assign;
mod auth;
mod backup;
mod billing_account;
mod billing_invoices;
mod billing_money;
mod billing_ops;
mod compat;
mod contract_rules;
mod controls;
mod controls_wiring;
mod conventions;
mod coverage;
mod db_outage;
mod delegation;
mod dnsd;
mod durability;
mod events;
mod firewall_concurrency;
mod firewall_devices;
mod firewalls;
mod instance_configs;
mod instance_disks;
mod instance_lifecycle;
mod instances;
mod interfaces;
mod ips;
mod ipv6;
mod lb_support;
mod lifecycle;
mod linode_interfaces;
mod nodebalancer_features;
mod nodebalancer_traffic;
mod nodebalancer_walkthrough;
mod nodebalancers;
mod oauth_clients;
mod passwords;
mod profile;
mod rdns;
mod read_path;
mod replicas_cache;
mod replicas_failover;
mod replicas_invariants;
mod service_transfers;
mod signin;
mod signin_oauth2;
mod signin_support;
mod sshkeys;
mod upgrade;
mod users;
mod vpcs;
