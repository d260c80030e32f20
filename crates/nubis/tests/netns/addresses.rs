//! Addresses changed through the API change inside the instance; the driver's preconditions.

use serde_json::{Value, json};

use crate::common::*;
use crate::support::{BIN, eventually};

fn inet(id: i64, dev: &str) -> Vec<String> {
    let (_, out) = in_ns(id, &["ip", "-j", "addr", "show", "dev", dev]);
    let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    v[0]["addr_info"]
        .as_array()
        .map(|l| l.iter().map(|x| format!("{}/{}", x["local"].as_str().unwrap_or_default(), x["prefixlen"])).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn allocating_sharing_and_deleting_addresses_change_them_inside() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let a = instance(&api, json!({ "label": "addr-a" })).await;
    let b = instance(&api, json!({ "label": "addr-b" })).await;
    let (ida, idb) = (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap());
    let public_a = a["ipv4"][0].as_str().unwrap().to_string();
    let r = api.post(&format!("/linode/instances/{ida}/ips"), json!({ "type": "ipv4", "public": false })).await;
    let private = r.ok()["address"].as_str().unwrap().to_string();
    let want = format!("{private}/17");
    eventually(10, "the new private address inside", || async { inet(ida, "eth0").contains(&want).then_some(()) })
        .await;
    api.post("/networking/ips/share", json!({ "instance_id": idb, "ips": [public_a] })).await.ok();
    let shared = format!("{public_a}/32");
    eventually(10, "the shared address on the secondary", || async { inet(idb, "lo").contains(&shared).then_some(()) })
        .await;
    api.post("/networking/ips/share", json!({ "instance_id": idb, "ips": [] })).await.ok();
    eventually(10, "the share withdrawn", || async { (!inet(idb, "lo").contains(&shared)).then_some(()) }).await;
    api.delete(&format!("/linode/instances/{ida}/ips/{private}")).await.ok();
    eventually(10, "the deleted address gone", || async { (!inet(ida, "eth0").contains(&want)).then_some(()) }).await;
    assert!(inet(ida, "eth0").contains(&format!("{public_a}/24")), "{:?}", inet(ida, "eth0"));
}

#[tokio::test]
async fn serve_refuses_the_netns_driver_without_privileges_and_the_check_says_what_is_missing() {
    let _sweep = Sweeper::new();
    let dir = std::env::temp_dir().join(crate::support::unique("nubis-unpriv-"));
    std::fs::create_dir_all(&dir).unwrap();
    // Root without any capability.
    let as_nobody = |command: &str, args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--bounding-set=-all", "--inh-caps=-all", BIN, command])
            .arg("--data-dir")
            .arg(&dir)
            .args(["--runtime-driver", "netns"])
            .args(args)
            .env("NUBIS_LOG", "warn")
            .output()
            .unwrap()
    };
    let out = as_nobody("serve", &["--listen", "127.0.0.1:0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let line = err.lines().find(|l| l.starts_with("nubis: ")).unwrap_or_default();
    assert!(line.contains("driver = \"netns\" cannot run here") && line.contains("CAP_NET_ADMIN"), "{err}");
    let out = as_nobody("admin", &["runtime", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(text.contains("missing: CAP_NET_ADMIN") && text.contains("missing: CAP_SYS_ADMIN"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn serve_refuses_a_private_pool_outside_the_range_kept_on_this_host() {
    let _sweep = Sweeper::new();
    let dir = std::env::temp_dir().join(crate::support::unique("nubis-pool-"));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!("{NETNS_CONFIG}\n[network]\nprivate_ipv4 = \"192.168.5.0/24\"\n");
    std::fs::write(dir.join("config.toml"), config).unwrap();
    let out = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .arg("--config")
        .arg(dir.join("config.toml"))
        .env("NUBIS_LOG", "warn")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("private_ipv4 inside 192.168.128.0/17") && err.contains("192.168.5.0/24"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn ipv6_addresses_are_inside_and_nothing_routes_outwards() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let a = instance(&api, json!({ "label": "six" })).await;
    let id = a["id"].as_i64().unwrap();
    let ips = api.get(&format!("/linode/instances/{id}/ips")).await;
    let slaac = ips.ok()["ipv6"]["slaac"]["address"].as_str().unwrap().to_string();
    let link_local = ips.ok()["ipv6"]["link_local"]["address"].as_str().unwrap().to_string();
    let (_, out) = in_ns(id, &["ip", "-6", "-j", "addr", "show", "dev", "eth0"]);
    assert!(out.contains(&slaac) && out.contains(&link_local), "{out}");

    // No packet of an instance can leave the machine: the fabric namespace forwards nothing and
    // routes nowhere, the host drops whatever it would forward from or to nubis's links, and
    // nubis's ranges are unreachable on the host beyond its own links.
    let ns = ns_of(id);
    let prefix = ns.rsplit_once("-i").unwrap().0.to_string();
    let fabric = format!("{prefix}-fabric");
    let sh = |args: &[&str]| {
        let o = std::process::Command::new(args[0]).args(&args[1..]).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(sh(&["ip", "netns", "exec", &fabric, "cat", "/proc/sys/net/ipv4/ip_forward"]).trim(), "0");
    assert_eq!(sh(&["ip", "-n", &fabric, "route", "show"]).trim(), "");
    let guard = sh(&["nft", "list", "table", "inet", &prefix]);
    assert!(
        guard.contains(&format!("iifname \"{prefix}*\" drop"))
            && guard.contains(&format!("oifname \"{prefix}*\" drop")),
        "{guard}"
    );
    let routes = sh(&["ip", "route", "show"]);
    assert!(
        routes.contains("unreachable 198.18.0.0/15") && routes.contains("unreachable 192.168.128.0/17"),
        "{routes}"
    );
}
