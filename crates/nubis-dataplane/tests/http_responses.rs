//! Response framing through a real `http` listener (RFC 9112 §6.3): one test per case. A
//! scripted back end answers the first request with the case's bytes; the test asserts what the
//! client receives, whether the back-end connection was kept (a second request reuses it) or
//! closed (a malformed response is never followed by another on the same connection).

mod common;

use common::record::*;
use common::*;
use nubis_model::balancer::NodeStatus;
use tokio::io::AsyncWriteExt;

enum Want {
    /// 502 to the client, the back-end connection closed, the node passively failed.
    BadGateway,
    /// The client gets `status` with `body`, these fields (None: absent) and CRLF line ends;
    /// `reused`: the back-end connection serves the next request.
    Passed { status: u16, body: &'static str, reused: bool, fields: &'static [(&'static str, Option<&'static str>)] },
}

use Want::*;

async fn check_response(request: &[u8], answer: &[u8], close: bool, want: Want) {
    let rig = rig(vec![Answer { bytes: answer.to_vec(), close }]).await;
    let ex = exchange(rig.lb, request, request.starts_with(b"HEAD")).await;
    let reused = match want {
        BadGateway => {
            assert_eq!(ex.statuses(), vec![502], "client got {ex:?}");
            rig.rec.wait_closed(0).await;
            eventually("passive failure", async || rig.dp.health_reports(1).contains(&NodeStatus::Down).then_some(()))
                .await;
            eventually("node given back", async || {
                (rig.dp.snapshot().node_status(1, 1, 1) != Some(NodeStatus::Down)).then_some(())
            })
            .await;
            false
        }
        Passed { status, body, reused, fields } => {
            let last = ex.responses.last().unwrap_or_else(|| panic!("no response: {ex:?}"));
            assert_eq!((last.status, String::from_utf8_lossy(&last.body).as_ref()), (status, body), "{ex:?}");
            for (name, value) in fields {
                assert_eq!(last.header(name), *value, "field {name} in {}", last.head);
            }
            assert!(!last.head.replace("\r\n", "").contains('\n'), "CRLF only: {:?}", last.head);
            assert!(ex.rest.is_empty(), "nothing after the response: {ex:?}");
            if !reused {
                rig.rec.wait_closed(0).await;
            }
            reused
        }
    };
    let next = exchange(rig.lb, b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n", false).await;
    assert_eq!(next.statuses(), vec![200]);
    let last = rig.rec.requests().pop().unwrap();
    assert_eq!((last.target.as_str(), last.conn), ("/next", if reused { 0 } else { 1 }), "connection reuse");
    rig.dp.handle.shutdown().await;
}

macro_rules! cases {
    ($($name:ident: $req:expr, $answer:expr, $close:expr => $want:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            check_response($req, $answer, $close, $want).await;
        }
    )*};
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
const HEAD: &[u8] = b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n";
const GET10: &[u8] = b"GET / HTTP/1.0\r\n\r\n";

// Ambiguous or malformed framing: 502, the connection is not reused.
cases! {
    content_length_and_chunked_are_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", false => BadGateway;
    differing_content_lengths_are_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false => BadGateway;
    content_length_with_a_sign_is_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", false => BadGateway;
    content_length_list_of_differing_values_is_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", false => BadGateway;
    hex_content_length_is_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 0x2\r\n\r\nok", false => BadGateway;
    chunked_twice_is_a_502: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", false => BadGateway;
    bad_chunk_size_is_a_502: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", false => BadGateway;
    missing_crlf_after_chunk_data_is_a_502: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", false => BadGateway;
    lf_only_chunk_line_is_a_502: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", false => BadGateway;
    malformed_trailer_is_a_502: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T 1\r\n\r\n", false => BadGateway;
    obs_fold_is_a_502: GET, b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    bare_cr_is_a_502: GET, b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    space_before_a_colon_is_a_502: GET, b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", false => BadGateway;
    nul_in_a_value_is_a_502: GET, b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    four_digit_status_is_a_502: GET, b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    status_600_is_a_502: GET, b"HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    http2_status_line_is_a_502: GET, b"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nok", false => BadGateway;
    unsolicited_101_is_a_502: GET, b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n", false => BadGateway;
}

// Bodies that are not there, and bodies framed by the connection's end.
cases! {
    head_response_has_no_body: HEAD, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", false
        => Passed { status: 200, body: "", reused: true, fields: &[("content-length", Some("10"))] };
    head_response_with_chunked_has_no_body: HEAD, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false
        => Passed { status: 200, body: "", reused: true, fields: &[("transfer-encoding", Some("chunked"))] };
    no_content_has_no_body: GET, b"HTTP/1.1 204 No Content\r\n\r\n", false
        => Passed { status: 204, body: "", reused: true, fields: &[] };
    not_modified_has_no_body: GET, b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false
        => Passed { status: 304, body: "", reused: true, fields: &[("content-length", Some("10"))] };
    interim_response_is_forwarded_before_the_final_one: GET, b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
        => Passed { status: 200, body: "ok", reused: true, fields: &[] };
    response_without_framing_runs_until_close: GET, b"HTTP/1.1 200 OK\r\n\r\nuntil close", true
        => Passed { status: 200, body: "until close", reused: false, fields: &[("connection", Some("close"))] };
    response_with_a_final_coding_other_than_chunked_runs_until_close: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz", true
        => Passed { status: 200, body: "xyz", reused: false, fields: &[("connection", Some("close")), ("transfer-encoding", Some("gzip"))] };
}

// Valid responses, normalized where needed.
cases! {
    chunked_response_with_trailers_is_forwarded: GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", false
        => Passed { status: 200, body: "abc", reused: true, fields: &[("transfer-encoding", Some("chunked"))] };
    chunked_response_to_an_http10_client_is_decoded: GET10, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", false
        => Passed { status: 200, body: "abcde", reused: true, fields: &[("transfer-encoding", None), ("connection", Some("close"))] };
    repeated_equal_content_lengths_are_folded: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false
        => Passed { status: 200, body: "ok", reused: true, fields: &[("content-length", Some("2"))] };
    lf_only_head_is_normalized: GET, b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false
        => Passed { status: 200, body: "ok", reused: true, fields: &[("content-length", Some("2"))] };
    fields_named_by_connection_are_removed: GET, b"HTTP/1.1 200 OK\r\nConnection: X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok", false
        => Passed { status: 200, body: "ok", reused: true, fields: &[("x-hop", None), ("keep-alive", None), ("connection", None)] };
    http10_back_end_without_keep_alive_is_not_reused: GET, b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false
        => Passed { status: 200, body: "ok", reused: false, fields: &[] };
    bytes_after_the_response_end_the_back_end_connection: GET, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false
        => Passed { status: 200, body: "ok", reused: false, fields: &[] };
    connection_close_from_the_back_end_is_honoured: GET, b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false
        => Passed { status: 200, body: "ok", reused: false, fields: &[("connection", None)] };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_is_sent_in_http11() {
    let rig =
        rig(vec![Answer { bytes: b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(), close: false }]).await;
    let ex = exchange(rig.lb, GET, false).await;
    assert!(ex.responses[0].head.starts_with("HTTP/1.1 200 OK\r\n"), "{ex:?}");
    rig.dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_chunk_after_the_head_was_forwarded_cuts_the_response_and_closes_the_back_end() {
    let rig = rig(vec![Answer {
        bytes: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n".to_vec(),
        close: false,
    }])
    .await;
    let mut s = connect_from("127.0.0.1", rig.lb).await.unwrap();
    s.write_all(GET).await.unwrap();
    eventually("request at the back end", async || (rig.rec.requests().len() == 1).then_some(())).await;
    // The head and the first chunk have reached the client before the rest of the response
    // arrives, malformed, on the back end's own connection (sent earlier, both could be read
    // together, and the proxy would rightly answer 502 instead).
    let forwarded = read_through(&mut s, b"abc\r\n").await;
    rig.rec.send(0, b"2\r\nxyZZ").await;
    let ex = read_all_after(&mut s, forwarded, false).await;
    assert!(ex.responses.is_empty(), "no complete response: {ex:?}");
    assert!(String::from_utf8_lossy(&ex.rest).starts_with("HTTP/1.1 200 OK\r\n"), "{ex:?}");
    rig.rec.wait_closed(0).await;
    rig.dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interim_responses_reach_http11_clients_only() {
    let early = b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let answers = vec![Answer { bytes: early.to_vec(), close: false }, Answer { bytes: early.to_vec(), close: false }];
    let rig = rig(answers).await;
    assert_eq!(exchange(rig.lb, GET, false).await.statuses(), vec![103, 200]);
    // RFC 9110 §15.2: no 1xx to an HTTP/1.0 client.
    assert_eq!(exchange(rig.lb, GET10, false).await.statuses(), vec![200]);
    rig.dp.handle.shutdown().await;
}
