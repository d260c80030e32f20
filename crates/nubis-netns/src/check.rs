//! What `[runtime] driver = "netns"` needs from the host, and what is missing.

use std::path::Path;

/// The tools the netns driver runs.
const TOOLS: &[(&str, &str)] = &[
    ("ip", "iproute2"),
    ("nft", "nftables"),
    ("nsenter", "util-linux"),
    ("unshare", "util-linux"),
    ("setpriv", "util-linux"),
    ("sysctl", "procps"),
    ("mount", "mount"),
];

fn on_path(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path).any(|d| d.join(tool).is_file())
}

/// The effective capabilities of this process (`CapEff` of /proc/self/status).
fn effective_caps() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0)
}

const CAP_SYS_ADMIN: u32 = 21;
const CAP_NET_ADMIN: u32 = 12;

/// Everything missing, one line each; empty when the netns driver can run here.
pub fn missing(state_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let caps = effective_caps();
    for (bit, name) in [(CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")] {
        if caps & (1 << bit) == 0 {
            out.push(format!("{name}: run nubis as root (network namespaces, links and mounts need it)"));
        }
    }
    for (tool, package) in TOOLS {
        if !on_path(tool) {
            out.push(format!("{tool}: not found on PATH (install the {package} package)"));
        }
    }
    if !Path::new("/proc/self/ns/net").exists() || !Path::new("/proc/self/ns/pid").exists() {
        out.push("namespaces: this kernel offers no network or PID namespaces".into());
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fs.lines().any(|l| l.trim_end().ends_with("overlay")) {
        out.push("overlay: the kernel has no overlay file system (modprobe overlay)".into());
    }
    let s = state_dir.display().to_string();
    for d in ["/etc", "/var", "/root", "/home", "/tmp"] {
        if s == d || s.starts_with(&format!("{d}/")) {
            out.push(format!("state_dir {s}: must not lie under {d} (the instances' overlays)"));
        }
    }
    out
}
