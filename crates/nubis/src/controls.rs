//! `nubis admin clock|fault|snapshot|reset`: the test controls of a running server, through its
//! control API (`/nubis/v1`) with an operator token. They print the JSON the API answers.

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::cli::{AdminCommand, ClockCommand, FaultCommand, RemoteArgs, SnapshotCommand};

enum Body {
    Json(Value),
    Text(String),
}

/// Whether the command drives a running server rather than the database.
pub fn is_remote(c: &AdminCommand) -> bool {
    matches!(
        c,
        AdminCommand::Clock(_)
            | AdminCommand::Fault(_)
            | AdminCommand::Snapshot(_)
            | AdminCommand::Reset
            | AdminCommand::Fixtures { .. }
    )
}

pub async fn run(remote: &RemoteArgs, command: AdminCommand) -> anyhow::Result<()> {
    let (method, path, body) = match command {
        AdminCommand::Clock(ClockCommand::Show) => ("GET", "/nubis/v1/clock".to_string(), None),
        AdminCommand::Clock(ClockCommand::Advance { seconds }) => {
            ("POST", "/nubis/v1/clock/advance".into(), Some(Body::Json(json!({ "seconds": seconds }))))
        }
        AdminCommand::Clock(ClockCommand::Set { now }) => {
            ("POST", "/nubis/v1/clock/set".into(), Some(Body::Json(json!({ "now": now }))))
        }
        AdminCommand::Clock(ClockCommand::Reset) => ("POST", "/nubis/v1/clock/reset".into(), None),
        AdminCommand::Fault(FaultCommand::Add { json }) => {
            let body: Value = serde_json::from_str(&json).context("the fault must be a JSON object")?;
            ("POST", "/nubis/v1/faults".into(), Some(Body::Json(body)))
        }
        AdminCommand::Fault(FaultCommand::List) => ("GET", "/nubis/v1/faults".into(), None),
        AdminCommand::Fault(FaultCommand::Delete { id }) => ("DELETE", format!("/nubis/v1/faults/{id}"), None),
        AdminCommand::Snapshot(SnapshotCommand::Save { name }) => {
            ("POST", "/nubis/v1/snapshots".into(), Some(Body::Json(json!({ "name": name }))))
        }
        AdminCommand::Snapshot(SnapshotCommand::Restore { name }) => {
            ("POST", format!("/nubis/v1/snapshots/{name}/restore"), None)
        }
        AdminCommand::Snapshot(SnapshotCommand::List) => ("GET", "/nubis/v1/snapshots".into(), None),
        AdminCommand::Snapshot(SnapshotCommand::Delete { name }) => {
            ("DELETE", format!("/nubis/v1/snapshots/{name}"), None)
        }
        AdminCommand::Reset => ("POST", "/nubis/v1/reset".into(), None),
        AdminCommand::Fixtures { file } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            ("POST", "/nubis/v1/fixtures".into(), Some(Body::Text(text)))
        }
        _ => bail!("not a test-control command"),
    };
    let token = remote
        .operator_token
        .as_deref()
        .context("an operator token is needed: --operator-token or NUBIS_OPERATOR_TOKEN")?;
    let url = format!("{}{path}", remote.url.trim_end_matches('/'));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let req = match method {
        "GET" => client.get(&url),
        "DELETE" => client.delete(&url),
        _ => client.post(&url),
    };
    let req = req.bearer_auth(token);
    let req = match body {
        Some(Body::Json(b)) => req.json(&b),
        Some(Body::Text(t)) => req.header("content-type", "application/yaml").body(t),
        None => req,
    };
    let res = req.send().await.with_context(|| format!("{method} {url}"))?;
    let status = res.status();
    let text = res.text().await.unwrap_or_default();
    let pretty =
        serde_json::from_str::<Value>(&text).ok().and_then(|v| serde_json::to_string_pretty(&v).ok()).unwrap_or(text);
    if !status.is_success() {
        bail!("{method} {url}: {status}\n{pretty}");
    }
    println!("{pretty}");
    Ok(())
}
