//! A tiny DNS server for tests, on UDP 127.0.0.1 with an ephemeral port: it answers A and AAAA
//! questions from a map the test fills, NXDOMAIN for names it does not know. Tests point nubis's
//! `dns.nameservers` at it; nothing ever asks the system resolver.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::net::UdpSocket;

type Records = Arc<Mutex<HashMap<String, Vec<IpAddr>>>>;

pub struct FakeDns {
    pub addr: SocketAddr,
    records: Records,
    task: tokio::task::JoinHandle<()>,
}

impl FakeDns {
    pub async fn start() -> FakeDns {
        let sock = UdpSocket::bind("127.0.0.1:0").await.expect("bind the test DNS server");
        let addr = sock.local_addr().unwrap();
        let records: Records = Arc::default();
        let r = records.clone();
        let task = tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            loop {
                let Ok((n, peer)) = sock.recv_from(&mut buf).await else { return };
                if let Some(answer) = respond(&buf[..n], &r) {
                    let _ = sock.send_to(&answer, peer).await;
                }
            }
        });
        FakeDns { addr, records, task }
    }

    /// Makes `name` resolve to `addrs` (A and AAAA records as the addresses are).
    pub fn set(&self, name: &str, addrs: &[&str]) {
        let addrs = addrs.iter().map(|a| a.parse().unwrap()).collect();
        self.records.lock().unwrap().insert(name.trim_end_matches('.').to_ascii_lowercase(), addrs);
    }
}

impl Drop for FakeDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Answers one query (header, one question) or ignores what it does not understand.
fn respond(q: &[u8], records: &Records) -> Option<Vec<u8>> {
    if q.len() < 12 || u16::from_be_bytes([q[4], q[5]]) != 1 {
        return None;
    }
    let mut i = 12;
    let mut labels = Vec::new();
    loop {
        let len = *q.get(i)? as usize;
        i += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(q.get(i..i + len)?).to_ascii_lowercase());
        i += len;
    }
    let qtype = u16::from_be_bytes([*q.get(i)?, *q.get(i + 1)?]);
    let question_end = i + 4;
    let name = labels.join(".");
    let known = records.lock().unwrap().get(&name).cloned();
    let answers: Vec<IpAddr> = known
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|a| matches!((a, qtype), (IpAddr::V4(_), 1) | (IpAddr::V6(_), 28)))
        .collect();
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(&q[0..2]);
    let rcode: u8 = if known.is_none() { 3 } else { 0 };
    out.extend_from_slice(&[0x81 | (q[2] & 0x01), 0x80 | rcode]);
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(q.get(12..question_end)?);
    for a in answers {
        out.extend_from_slice(&[0xc0, 0x0c]);
        let (t, data): (u16, Vec<u8>) = match a {
            IpAddr::V4(v) => (1, v.octets().to_vec()),
            IpAddr::V6(v) => (28, v.octets().to_vec()),
        };
        out.extend_from_slice(&t.to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&5u32.to_be_bytes());
        out.extend_from_slice(&(data.len() as u16).to_be_bytes());
        out.extend_from_slice(&data);
    }
    Some(out)
}
