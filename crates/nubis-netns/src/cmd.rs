//! Running the host's tools (`ip`, `nft`): arguments as a list (no shell), optional standard
//! input (batches), standard error in the error.

use std::process::Stdio;

use tokio::io::AsyncWriteExt;

use crate::{Error, Result};

/// Runs `prog args...`, feeding `input` on standard input; its standard output on success.
pub async fn run(prog: &str, args: &[&str], input: Option<&str>) -> Result<String> {
    let mut c = tokio::process::Command::new(prog);
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    c.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    let what = || format!("{prog} {}", args.join(" "));
    let mut child = c.spawn().map_err(|e| Error::Io(what(), e))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).await.map_err(|e| Error::Io(what(), e))?;
    }
    let out = child.wait_with_output().await.map_err(|e| Error::Io(what(), e))?;
    if !out.status.success() {
        let detail = match input {
            Some(text) => format!("{}\n--- input ---\n{text}", String::from_utf8_lossy(&out.stderr).trim()),
            None => String::from_utf8_lossy(&out.stderr).trim().to_string(),
        };
        return Err(Error::Command(format!("{} failed ({}): {detail}", what(), out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `ip` with arguments.
pub async fn ip(args: &[&str]) -> Result<String> {
    run("ip", args, None).await
}

/// `ip -batch -` (in namespace `ns` when given): each line one command; stops at the first
/// failure.
pub async fn ip_batch(ns: Option<&str>, lines: &[String]) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let text = lines.join("\n") + "\n";
    match ns {
        Some(ns) => run("ip", &["-n", ns, "-batch", "-"], Some(&text)).await,
        None => run("ip", &["-batch", "-"], Some(&text)).await,
    }
    .map(|_| ())
}

/// `ip -j ...` parsed (an empty answer is an empty list).
pub async fn ip_json(args: &[&str]) -> Result<serde_json::Value> {
    let mut all = vec!["-j"];
    all.extend_from_slice(args);
    let out = ip(&all).await?;
    if out.trim().is_empty() {
        return Ok(serde_json::Value::Array(Vec::new()));
    }
    serde_json::from_str(&out).map_err(|e| Error::Command(format!("ip {}: unreadable answer: {e}", args.join(" "))))
}

/// `nft -f -` with `script`, inside namespace `ns` when given.
pub async fn nft(ns: Option<&str>, script: &str) -> Result<()> {
    match ns {
        Some(ns) => {
            let path = format!("--net={}", crate::netns_path(ns).display());
            run("nsenter", &[&path, "--", "nft", "-f", "-"], Some(script)).await
        }
        None => run("nft", &["-f", "-"], Some(script)).await,
    }
    .map(|_| ())
}
