//! Helpers of the sign-in tests: a browser that keeps cookies and posts HTML forms, a client's
//! redirect endpoint that records what it receives, the set-password link from the outbox, and
//! PKCE values.

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::*;

/// A page or redirect as a browser gets it.
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub location: Option<String>,
    pub text: String,
}

/// A browser: keeps cookies, does not follow redirects by itself (tests follow them explicitly).
pub struct Browser {
    client: reqwest::Client,
    pub cookies: HashMap<String, String>,
}

impl Browser {
    pub fn new() -> Browser {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        Browser { client, cookies: HashMap::new() }
    }

    /// A browser whose connections come from `ip` (another address of 127.0.0.0/8: on Linux
    /// every address of the loopback network is this host's).
    pub fn bound_to(ip: std::net::IpAddr) -> Browser {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .local_address(ip)
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        Browser { client, cookies: HashMap::new() }
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    async fn finish(&mut self, res: reqwest::Response) -> Page {
        for v in res.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let pair = v.split(';').next().unwrap();
            let (k, val) = pair.split_once('=').unwrap();
            if val.is_empty() || v.contains("Max-Age=0") {
                self.cookies.remove(k);
            } else {
                self.cookies.insert(k.to_string(), val.to_string());
            }
        }
        let status = res.status().as_u16();
        let location = res.headers().get("location").map(|l| l.to_str().unwrap().to_string());
        let text = res.text().await.unwrap_or_default();
        Page { status, location, text }
    }

    pub async fn get(&mut self, url: &str) -> Page {
        let res = self.client.get(url).header("cookie", self.cookie_header()).send().await.unwrap();
        self.finish(res).await
    }

    /// Posts a form as a browser does (`application/x-www-form-urlencoded`).
    pub async fn post_form(&mut self, url: &str, fields: &[(String, String)]) -> Page {
        let res = self
            .client
            .post(url)
            .header("cookie", self.cookie_header())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(fields))
            .send()
            .await
            .unwrap();
        self.finish(res).await
    }

    /// Submits the page's form: its action, every hidden input, and the fields typed in.
    pub async fn submit(&mut self, base: &str, page: &Page, typed: &[(&str, &str)]) -> Page {
        let action = attr_after(&page.text, "<form method=\"post\" action=\"", "\"").expect("a form");
        let mut fields = hidden_inputs(&page.text);
        for (k, v) in typed {
            fields.push((k.to_string(), v.to_string()));
        }
        self.post_form(&format!("{base}{action}"), &fields).await
    }
}

/// `http://host:port` of a test server.
pub fn origin(s: &TestServer) -> String {
    format!("http://{}", s.addr)
}

fn unescape(s: &str) -> String {
    s.replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn attr_after(html: &str, start: &str, end: &str) -> Option<String> {
    let i = html.find(start)? + start.len();
    let j = html[i..].find(end)? + i;
    Some(unescape(&html[i..j]))
}

/// The `(name, value)` of every hidden input of a page.
pub fn hidden_inputs(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<input type=\"hidden\" name=\"") {
        rest = &rest[i + 27..];
        let name_end = rest.find('"').unwrap();
        let name = rest[..name_end].to_string();
        let v = attr_after(rest, "value=\"", "\"").unwrap_or_default();
        out.push((name, v));
        rest = &rest[name_end..];
    }
    out
}

/// A query parameter of a URL, decoded.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let q = url.split_once('?')?.1;
    q.split('&').filter_map(|p| p.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| {
        let mut out = Vec::new();
        let b = v.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' && i + 2 < b.len() {
                out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(if b[i] == b'+' { b' ' } else { b[i] });
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    })
}

/// A client application's redirect endpoint on 127.0.0.1: answers 200 and hands over every
/// request target (path and query) it receives.
pub struct Callback {
    pub url: String,
    rx: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl Callback {
    pub async fn start() -> Callback {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/callback", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 2048];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf);
                    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
                    let _ = tx.send(target);
                    let _ = conn
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nreceived")
                        .await;
                });
            }
        });
        Callback { url, rx }
    }

    /// The next request the endpoint received.
    pub async fn received(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(10), self.rx.recv()).await.expect("no redirect arrived").unwrap()
    }
}

/// The set-password link of the newest message to `email` in the server's outbox (`.eml`
/// files, possibly quoted-printable).
pub async fn outbox_link(s: &TestServer, email: &str) -> String {
    let dir = s.dir.join("outbox");
    for _ in 0..100 {
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        files.sort();
        for f in files.iter().rev().filter(|f| f.extension().is_some_and(|e| e == "eml")) {
            let raw = std::fs::read_to_string(f).unwrap();
            if !raw.contains(&format!("To: {email}")) {
                continue;
            }
            let body = raw.replace("=\r\n", "").replace("=3D", "=");
            let i = body.find("http://").expect("a link in the message");
            let link: String = body[i..].chars().take_while(|c| !c.is_whitespace()).collect();
            return link;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no message to {email} in {}", dir.display());
}

/// Sets a user's password through the link `nubis admin user password` prints.
pub async fn set_password(s: &TestServer, username: &str, password: &str) {
    let (ok, out, err) = s.admin(&["user", "password", "--username", username]);
    assert!(ok, "{err}");
    // The operator's command does not know the server's address: keep the path.
    let path = &out.trim()[out.trim().find("/oauth/").unwrap()..];
    let mut b = Browser::new();
    let page = b.get(&format!("{}{path}", origin(s))).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let done = b.submit(&origin(s), &page, &[("password", password), ("confirm", password)]).await;
    assert_eq!(done.status, 200, "{}", done.text);
}

/// A PKCE verifier and its S256 challenge.
pub fn pkce() -> (String, String) {
    let verifier = format!("{}{}", unique("verifier-").replace('x', "-"), "a".repeat(43));
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// `POST <base>/token` with a form (and HTTP Basic client credentials when given).
pub async fn token_request(s: &TestServer, basic: Option<(&str, &str)>, fields: &[(&str, &str)]) -> (u16, Value) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut req = form_post(&client, &format!("{}/oauth/token", origin(s)), fields);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    assert_eq!(res.headers().get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    (status, res.json().await.unwrap_or(Value::Null))
}

/// `POST <base>/revoke`.
pub async fn revoke_request(s: &TestServer, basic: Option<(&str, &str)>, fields: &[(&str, &str)]) -> u16 {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut req = form_post(&client, &format!("{}/oauth/revoke", origin(s)), fields);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    req.send().await.unwrap().status().as_u16()
}

/// Sends a user through the sign-in page of an authorization request and returns the request
/// target the client's redirect endpoint received (with `code` and `state`).
pub async fn sign_in(
    s: &TestServer,
    browser: &mut Browser,
    callback: &mut Callback,
    authorize_query: &str,
    username: &str,
    password: &str,
) -> String {
    let page = browser.get(&format!("{}/oauth/authorize?{authorize_query}", origin(s))).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let redirected = browser
        .submit(&origin(s), &page, &[("username", username), ("password", password), ("action", "approve")])
        .await;
    assert_eq!(redirected.status, 303, "{}", redirected.text);
    let to = redirected.location.expect("a redirect");
    // Follow the redirect to the application, as the browser does.
    let arrived = browser.get(&to).await;
    assert_eq!(arrived.status, 200);
    callback.received().await
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// An `application/x-www-form-urlencoded` body.
pub fn form_body<K: AsRef<str>, V: AsRef<str>>(fields: &[(K, V)]) -> String {
    fields.iter().map(|(k, v)| format!("{}={}", enc(k.as_ref()), enc(v.as_ref()))).collect::<Vec<_>>().join("&")
}

/// A form POST request.
pub fn form_post<K: AsRef<str>, V: AsRef<str>>(
    client: &reqwest::Client,
    url: &str,
    fields: &[(K, V)],
) -> reqwest::RequestBuilder {
    client.post(url).header("content-type", "application/x-www-form-urlencoded").body(form_body(fields))
}
