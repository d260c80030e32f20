//! What a server run leaves on disk is readable by its owner only (the database and its WAL
//! files, snapshots, backups, outbox messages with live set-password links, the admin token),
//! and the test controls are not served on a non-loopback address unless asked for.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;

use crate::controls::{OPERATOR, controlled};
use crate::signin_support::outbox_link;
use crate::support::*;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).permissions().mode() & 0o777
}

#[track_caller]
fn private(p: &Path, want: u32) {
    assert_eq!(mode(p), want, "{} is {:o}", p.display(), mode(p));
}

#[tokio::test]
async fn the_state_and_the_secrets_on_disk_are_readable_by_their_owner_only() {
    let (s, ctl) = controlled(&[], None).await;
    s.api().post("/account/users", json!({"username": "fay", "email": "fay@example.com"})).await.ok();
    outbox_link(&s, "fay@example.com").await;
    ctl.post("/snapshots", json!({"name": "before"})).await.ok();
    let backup = s.dir.join("nubis.backup");
    let (backed_up, _, err) = s.admin(&["backup", backup.to_str().unwrap()]);

    let outbox = s.dir.join("outbox");
    private(&outbox, 0o700);
    let mails: Vec<PathBuf> = std::fs::read_dir(&outbox).unwrap().flatten().map(|e| e.path()).collect();
    assert!(!mails.is_empty());
    for m in &mails {
        private(m, 0o600);
    }
    if on_postgres() {
        // pg_dump may be missing where only the server runs; backup.rs requires it in CI.
        if backed_up {
            private(&backup, 0o600);
        }
        return;
    }
    assert!(backed_up, "{err}");
    private(&backup, 0o600);
    let db = s.dir.join("nubis.db");
    for f in [db.clone(), s.dir.join("nubis.db-wal"), s.dir.join("nubis.db-shm")] {
        private(&f, 0o600);
    }
    private(&s.dir.join("snapshots"), 0o700);
    private(&s.dir.join("snapshots").join("before.db"), 0o600);
}

/// `nubis serve` with these arguments and a fresh SQLite data directory that nubis creates;
/// returns the process, the port it listens on, and the directory.
fn serve(listen: &str, args: &[&str], config: &str) -> (Child, u16, PathBuf) {
    let base = std::env::temp_dir().join(unique("nubis-files-"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("config.toml"), config).unwrap();
    let dir = base.join("data");
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", listen, "--data-dir"])
        .arg(&dir)
        .arg("--config")
        .arg(base.join("config.toml"))
        .args(args)
        .env("NUBIS_LOG", "warn")
        .env_remove("NUBIS_DATABASE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nubis");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = loop {
        let line = lines.next().expect("nubis stopped before it listened").unwrap();
        if let Some(rest) = line.strip_prefix("nubis: listening on http://") {
            let addr = rest.trim_end_matches("/v4");
            break addr.rsplit_once(':').unwrap().1.parse().unwrap();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, port, dir)
}

fn stop(mut child: Child, dir: &Path) {
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[tokio::test]
async fn the_admin_token_file_and_the_data_directory_nubis_creates_are_private() {
    let (child, _, dir) = serve("127.0.0.1:0", &[], TEST_CONFIG);
    private(&dir, 0o700);
    private(&dir.join("admin-token"), 0o600);
    stop(child, &dir);
}

/// Whether `/nubis/v1` answers on the server listening on `port` (reached over 127.0.0.1).
async fn controls_served(port: u16) -> bool {
    let ctl = Api::new(&format!("http://127.0.0.1:{port}/nubis/v1"), OPERATOR);
    match ctl.get("/clock").await.status {
        200 => true,
        404 => false,
        other => panic!("unexpected {other}"),
    }
}

/// On by default only on loopback: a server listening on every address serves the test controls
/// only when `--controls` or `[controls] enabled = true` asks for them.
#[tokio::test]
async fn the_test_controls_are_off_by_default_on_a_non_loopback_address() {
    let op = ["--operator-token", OPERATOR];
    let explicit = format!("{TEST_CONFIG}\n[controls]\nenabled = true\n");
    let cases: [(&str, Vec<&str>, &str, bool); 5] = [
        ("0.0.0.0:0", op.to_vec(), TEST_CONFIG, false),
        ("0.0.0.0:0", [&op[..], &["--controls"]].concat(), TEST_CONFIG, true),
        ("0.0.0.0:0", op.to_vec(), &explicit, true),
        ("127.0.0.1:0", op.to_vec(), TEST_CONFIG, true),
        ("127.0.0.1:0", [&op[..], &["--no-controls"]].concat(), &explicit, false),
    ];
    for (listen, args, config, served) in cases {
        let (child, port, dir) = serve(listen, &args, config);
        let got = controls_served(port).await;
        stop(child, &dir);
        assert_eq!(got, served, "{listen} {args:?}");
    }
}
