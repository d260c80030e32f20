//! Each image names what its init runs at boot (`[[images]] init`): the distributions' images
//! run the user data once, at the first boot (`init = "user-data"`); an image without
//! cloud-init runs its own command at every boot (`init = { command = "..." }`) and never the
//! user data.

use serde_json::json;

use crate::common::*;
use crate::support::{Options, TestServer, eventually};

const IMAGES: &str = r#"
[[images]]
id = "linode/debian12"
label = "Debian 12"
vendor = "Debian"
size = 1300
init = "user-data"

[[images]]
id = "test/minimal"
label = "Minimal"
vendor = "nubis"
size = 10
init = { command = "echo minimal init on $(hostname)" }
"#;

/// Waits until the console of instance `id` holds `text` `times` times; the console.
async fn console_with(server: &TestServer, id: i64, text: &str, times: usize) -> String {
    eventually(30, &format!("{text:?} {times} times on the console of {id}"), || async move {
        let log = console(server, id);
        (log.matches(text).count() == times).then_some(log)
    })
    .await
}

#[tokio::test]
async fn two_images_with_different_inits_run_different_things_at_boot() {
    let _sweep = Sweeper::new();
    let config = format!("{NETNS_CONFIG}{IMAGES}");
    let server = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = server.api();
    // The API says which image takes user data.
    let caps = |id: &str| {
        let api = api.clone();
        let path = format!("/images/{id}");
        async move { api.get(&path).await.ok()["capabilities"].clone() }
    };
    assert_eq!(caps("linode/debian12").await, json!(["cloud-init"]));
    assert_eq!(caps("test/minimal").await, json!([]));

    let ud = b64("#!/bin/sh\necho user data on $(hostname)\n");
    let body = |label: &str, image: &str| json!({ "label": label, "image": image, "metadata": { "user_data": ud } });
    let full = instance(&api, body("full", "linode/debian12")).await["id"].as_i64().unwrap();
    let minimal = instance(&api, body("minimal", "test/minimal")).await["id"].as_i64().unwrap();
    let log = console_with(&server, full, "user data on full", 1).await;
    assert!(!log.contains("minimal init"), "{log}");
    let log = console_with(&server, minimal, "minimal init on minimal", 1).await;
    assert!(!log.contains("user data on"), "the user data is not the minimal image's business:\n{log}");

    // After a reboot the command runs again; the user data ran at the first boot only (the
    // init says what it starts before it says the boot finished).
    for id in [full, minimal] {
        api.post_empty(&format!("/linode/instances/{id}/reboot")).await.ok();
    }
    let log = console_with(&server, full, "nubis: boot finished", 2).await;
    assert_eq!(log.matches("nubis: running user-data").count(), 1, "{log}");
    assert!(!log.contains("init-command"), "{log}");
    let log = console_with(&server, minimal, "nubis: boot finished", 2).await;
    assert_eq!(log.matches("nubis: running init-command").count(), 2, "{log}");
    assert!(!log.contains("user-data"), "{log}");
    console_with(&server, minimal, "minimal init on minimal", 2).await;
}
