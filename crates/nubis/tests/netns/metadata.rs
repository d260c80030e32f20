//! The metadata service inside every instance, read with the official Python client
//! `linode-metadata` run inside the instance by its user data.

use std::path::PathBuf;

use serde_json::json;

use crate::common::*;
use crate::support::eventually;

/// Where `linode-metadata` is installed (`pip install --target`, by scripts/netns-test.sh).
fn client_dir() -> PathBuf {
    let dir = std::env::var_os("NUBIS_TEST_PYTHONPATH").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/netns-py").canonicalize().unwrap_or_default()
    });
    assert!(
        dir.join("linode_metadata").is_dir(),
        "linode-metadata is not installed in {} (scripts/netns-test.sh installs it)",
        dir.display()
    );
    dir
}

const SCRIPT: &str = r#"
from linode_metadata import MetadataClient
c = MetadataClient()
i = c.get_instance()
n = c.get_network()
u = c.get_user_data()
t = c.token.decode() if isinstance(c.token, bytes) else c.token
print("META label", i.label, "id", i.id)
print("META public", " ".join(n.ipv4.public))
print("META marker", "user-data-marker-5d1" in u)
print("META token", t)
"#;

#[tokio::test]
async fn the_official_client_reads_its_own_instance_and_another_instances_token_is_refused() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let dir = client_dir();
    let ud = b64(&format!(
        "#!/bin/sh\n# user-data-marker-5d1\nPYTHONPATH={} python3 - <<'PY'\n{SCRIPT}\nPY\n",
        dir.display()
    ));
    let a = instance(&api, json!({ "label": "meta-a", "metadata": { "user_data": ud } })).await;
    let b = instance(&api, json!({ "label": "meta-b" })).await;
    let (ida, idb) = (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap());
    let log = eventually(60, "the client's output on the console", || {
        let log = console(&server, ida);
        async move { log.contains("META token").then_some(log) }
    })
    .await;
    assert!(log.contains(&format!("META label meta-a id {ida}")), "{log}");
    let public = a["ipv4"][0].as_str().unwrap();
    assert!(log.lines().any(|l| l.starts_with("META public") && l.contains(public)), "{log}");
    assert!(log.contains("META marker True"), "{log}");
    let token = log.lines().find_map(|l| l.strip_prefix("META token ")).unwrap().trim().to_string();

    // The token works where it was issued, and nowhere else.
    let mine = get_from(ida, "http://169.254.169.254/v1/instance", &[("Metadata-Token", &token)]).unwrap();
    assert_eq!(mine.0, 200);
    let theirs = get_from(idb, "http://169.254.169.254/v1/instance", &[("Metadata-Token", &token)]).unwrap();
    assert_eq!(theirs.0, 401, "{theirs:?}");
    // B's own token shows B.
    let t = in_ns(
        idb,
        &[
            "python3",
            "-c",
            "import urllib.request as u; r=u.Request('http://169.254.169.254/v1/token', method='PUT', headers={'Metadata-Token-Expiry-Seconds': '60'}); print(u.urlopen(r, timeout=2).read().decode())",
        ],
    );
    assert!(t.0);
    let own = get_from(idb, "http://169.254.169.254/v1/instance", &[("Metadata-Token", t.1.trim())]).unwrap();
    assert_eq!(own.0, 200);
    let doc: serde_json::Value = serde_json::from_str(&own.1).unwrap();
    assert_eq!(doc["id"], idb);
    assert_eq!(doc["label"], "meta-b");
    // Without a token: 401; a bad expiry: 400.
    assert_eq!(get_from(idb, "http://169.254.169.254/v1/network", &[]).unwrap().0, 401);
}
