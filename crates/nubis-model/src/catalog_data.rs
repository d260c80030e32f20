//! The built-in catalog: the public images and the regions priced apart, as the hosted API
//! lists them (its image list of 2025, plus every older image id the official clients' docs and
//! tests still use, marked deprecated). Kubernetes node images are left out: LKE is not a
//! product of nubis.

/// `(id, label, vendor, size in MB, deprecated)`.
pub const PUBLIC_IMAGES: &[(&str, &str, &str, i64, bool)] = &[
    ("linode/almalinux10", "AlmaLinux 10", "AlmaLinux", 3500, false),
    ("linode/almalinux9", "AlmaLinux 9", "AlmaLinux", 2500, false),
    ("linode/almalinux8", "AlmaLinux 8", "AlmaLinux", 4000, false),
    ("linode/alpine3.23", "Alpine 3.23", "Alpine", 500, false),
    ("linode/alpine3.22", "Alpine 3.22", "Alpine", 500, false),
    ("linode/alpine3.21", "Alpine 3.21", "Alpine", 500, false),
    ("linode/alpine3.20", "Alpine 3.20", "Alpine", 400, true),
    ("linode/alpine3.19", "Alpine 3.19", "Alpine", 400, true),
    ("linode/alpine3.18", "Alpine 3.18", "Alpine", 400, true),
    ("linode/alpine3.17", "Alpine 3.17", "Alpine", 400, true),
    ("linode/alpine3.16", "Alpine 3.16", "Alpine", 400, true),
    ("linode/arch", "Arch Linux", "Arch", 2500, false),
    ("linode/centos-stream10", "CentOS Stream 10", "CentOS", 3500, false),
    ("linode/centos-stream9", "CentOS Stream 9", "CentOS", 2400, false),
    ("linode/centos7", "CentOS 7", "CentOS", 2800, true),
    ("linode/debian13", "Debian 13", "Debian", 1800, false),
    ("linode/debian12", "Debian 12", "Debian", 1800, false),
    ("linode/debian11", "Debian 11", "Debian", 1500, false),
    ("linode/debian10", "Debian 10", "Debian", 1500, true),
    ("linode/debian9", "Debian 9", "Debian", 1500, true),
    ("linode/debian8", "Debian 8", "Debian", 1300, true),
    ("linode/fedora43", "Fedora 43", "Fedora", 3000, false),
    ("linode/fedora42", "Fedora 42", "Fedora", 3000, true),
    ("linode/fedora26", "Fedora 26", "Fedora", 1900, true),
    ("linode/gentoo", "Gentoo", "Gentoo", 7000, false),
    ("linode/kali", "Kali Linux", "Kali", 1536, false),
    ("linode/opensuse15.6", "openSUSE Leap 15.6", "openSUSE", 1200, true),
    ("linode/rocky10", "Rocky Linux 10", "Rocky", 3500, false),
    ("linode/rocky9", "Rocky Linux 9", "Rocky", 2500, false),
    ("linode/rocky8", "Rocky Linux 8", "Rocky", 4000, false),
    ("linode/slackware15.0", "Slackware 15.0", "Slackware", 11600, false),
    ("linode/ubuntu25.10", "Ubuntu 25.10", "Ubuntu", 3500, true),
    ("linode/ubuntu24.04", "Ubuntu 24.04 LTS", "Ubuntu", 3500, false),
    ("linode/ubuntu24.04-nvidia", "Ubuntu 24.04 LTS NVIDIA", "Ubuntu", 4500, false),
    ("linode/ubuntu22.04", "Ubuntu 22.04 LTS", "Ubuntu", 3500, false),
    ("linode/ubuntu21.10", "Ubuntu 21.10", "Ubuntu", 2500, true),
    ("linode/ubuntu20.04", "Ubuntu 20.04 LTS", "Ubuntu", 3500, true),
    ("linode/ubuntu18.04", "Ubuntu 18.04 LTS", "Ubuntu", 2500, true),
    ("linode/ubuntu17.04", "Ubuntu 17.04", "Ubuntu", 2500, true),
    ("linode/ubuntu16.04lts", "Ubuntu 16.04 LTS", "Ubuntu", 2500, true),
];

/// Regions the hosted API prices apart, with their price as a percentage of the base price
/// (`id-cgk` Jakarta 120 %, `br-gru` São Paulo 140 %: a $5 plan is $6 and $7 there).
pub const PRICED_REGIONS: &[(&str, i64)] = &[("id-cgk", 120), ("br-gru", 140)];

/// Dollars per GB in regions priced apart: `(region, dollars)`.
pub type RegionDollars = &'static [(&'static str, &'static str)];

/// The network transfer prices of the hosted API: `(id, label, dollars per GB, region prices)`.
pub const NETWORK_TRANSFER: &[(&str, &str, &str, RegionDollars)] = &[
    ("distributed_network_transfer", "Distributed Network Transfer", "0.01", &[]),
    ("network_transfer", "Network Transfer", "0.005", &[("id-cgk", "0.015"), ("br-gru", "0.007")]),
];
