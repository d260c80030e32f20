//! Request framing through a real `http` listener (RFC 9112 §2-§7, RFC 9110 §5): one test per
//! case, each asserting what the client receives and what a raw recording back end receives.
//! Every forwarded request must reach the back end in canonical form: one framing field at most,
//! `Content-Length` without leading zeros, `Transfer-Encoding: chunked` alone.

mod common;

use common::record::*;
use common::*;
use nubis_model::balancer::NodeStatus;
use tokio::io::AsyncWriteExt;

/// What the client and the back end must see.
enum Want {
    /// Refused with this status; nothing complete reaches the back end and every back-end
    /// connection is closed; the node is not blamed.
    Refused(u16),
    /// No answer: the request never completed (the client half-closed mid-body).
    Dropped,
    /// Forwarded: these requests (`METHOD target`, body) reach the back end, each answered 200.
    Forwarded(&'static [(&'static str, &'static str)]),
}

/// Health checks every hour: a node wrongly blamed for a client's fault would stay down.
fn settings() -> nubis_dataplane::DataplaneSettings {
    nubis_dataplane::DataplaneSettings {
        check_interval_override: Some(std::time::Duration::from_secs(3600)),
        ..test_settings()
    }
}

async fn check_request(req: &[u8], want: Want) {
    let rig = rig_with(settings(), vec![]).await;
    let ex = exchange(rig.lb, req, false).await;
    match want {
        Want::Refused(_) | Want::Dropped => {
            let statuses = match want {
                Want::Refused(s) => vec![s],
                _ => vec![],
            };
            assert_eq!(ex.statuses(), statuses, "client got {ex:?}");
            for c in 0..rig.rec.connections() {
                rig.rec.wait_closed(c).await;
            }
            assert_eq!(rig.rec.requests(), vec![], "nothing complete reaches the back end");
            assert_ne!(rig.dp.snapshot().node_status(1, 1, 1), Some(NodeStatus::Down), "the node is not blamed");
        }
        Want::Forwarded(list) => {
            let got = rig.rec.requests();
            let summary: Vec<(String, String)> = got
                .iter()
                .map(|r| (format!("{} {}", r.method, r.target), String::from_utf8_lossy(&r.body).into()))
                .collect();
            let want: Vec<(String, String)> = list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
            assert_eq!(summary, want, "back end received");
            assert_eq!(ex.statuses(), vec![200; list.len()], "client got {ex:?}");
            for r in &got {
                assert_eq!(r.ambiguities, Vec::<String>::new(), "canonical framing: {r:?}");
                let head = String::from_utf8_lossy(&rig.rec.bytes(r.conn)).into_owned();
                assert!(!head.contains("\n\n") && !head.replace("\r\n", "").contains('\n'), "CRLF only: {head:?}");
            }
        }
    }
    assert_eq!(rig.rec.errors(), vec![], "back end parse errors");
    rig.dp.handle.shutdown().await;
}

macro_rules! cases {
    ($($name:ident: $req:expr => $want:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            check_request($req, $want).await;
        }
    )*};
}

use Want::*;

// RFC 9112 §2.2: message parsing.
cases! {
    lf_only_line_endings_are_normalized: b"POST / HTTP/1.1\nHost: x\nContent-Length: 3\n\nabc" => Forwarded(&[("POST /", "abc")]);
    leading_empty_lines_are_skipped: b"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n" => Forwarded(&[("GET /", "")]);
    bare_cr_in_a_value_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n" => Refused(400);
    bare_cr_as_line_end_is_refused: b"GET / HTTP/1.1\rHost: x\r\n\r\n" => Refused(400);
    whitespace_before_the_first_field_is_refused: b"GET / HTTP/1.1\r\n Host: x\r\n\r\n" => Refused(400);
    http09_request_is_refused: b"GET /\r\n\r\n" => Refused(400);
}

// RFC 9112 §3: the request line.
cases! {
    lowercase_method_is_a_token: b"get / HTTP/1.1\r\nHost: x\r\n\r\n" => Forwarded(&[("get /", "")]);
    method_with_a_separator_is_refused: b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    two_spaces_in_the_request_line_are_refused: b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    tabs_in_the_request_line_are_refused: b"GET\t/\tHTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    space_in_the_target_is_refused: b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    cr_in_the_target_is_refused: b"GET /a\rb HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    non_ascii_target_is_refused: b"GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    fragment_in_the_target_is_refused: b"GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    relative_target_is_refused: b"GET a/b HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    asterisk_target_is_refused_but_for_options: b"GET * HTTP/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    options_asterisk_is_forwarded: b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" => Forwarded(&[("OPTIONS *", "")]);
    absolute_target_is_forwarded: b"GET http://a/x?y HTTP/1.1\r\nHost: a\r\n\r\n" => Forwarded(&[("GET http://a/x?y", "")]);
    absolute_target_with_default_port_matches_host: b"GET http://a:80/ HTTP/1.1\r\nHost: A\r\n\r\n" => Forwarded(&[("GET http://a:80/", "")]);
    absolute_target_with_userinfo_is_refused: b"GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    absolute_target_differing_from_host_is_refused: b"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n" => Refused(400);
    connect_is_refused: b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" => Refused(400);
    version_2_is_refused: b"GET / HTTP/2.0\r\nHost: x\r\n\r\n" => Refused(400);
    version_1_2_is_refused: b"GET / HTTP/1.2\r\nHost: x\r\n\r\n" => Refused(400);
    lowercase_version_is_refused: b"GET / http/1.1\r\nHost: x\r\n\r\n" => Refused(400);
    http10_without_host_is_forwarded: b"GET / HTTP/1.0\r\n\r\n" => Forwarded(&[("GET /", "")]);
}

// RFC 9112 §3.2: Host.
cases! {
    missing_host_is_refused: b"GET / HTTP/1.1\r\nX: y\r\n\r\n" => Refused(400);
    repeated_host_is_refused: b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n" => Refused(400);
    differing_hosts_are_refused: b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" => Refused(400);
    host_with_a_space_is_refused: b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n" => Refused(400);
    host_with_userinfo_is_refused: b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n" => Refused(400);
    host_with_a_bad_port_is_refused: b"GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n" => Refused(400);
    repeated_host_in_http10_is_refused: b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n" => Refused(400);
    empty_host_is_accepted: b"GET / HTTP/1.1\r\nHost:\r\n\r\n" => Forwarded(&[("GET /", "")]);
    ipv6_host_is_accepted: b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n" => Forwarded(&[("GET /", "")]);
}

// RFC 9110 §5: field lines.
cases! {
    whitespace_before_a_colon_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n" => Refused(400);
    separator_in_a_field_name_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX(A): 1\r\n\r\n" => Refused(400);
    non_ascii_field_name_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX\xe9: 1\r\n\r\n" => Refused(400);
    empty_field_name_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\n: 1\r\n\r\n" => Refused(400);
    lf_inside_a_field_name_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX\nY: 1\r\n\r\n" => Refused(400);
    nul_in_a_value_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n" => Refused(400);
    del_in_a_value_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n" => Refused(400);
    obs_text_in_a_value_is_forwarded: b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\xe9b\r\n\r\n" => Forwarded(&[("GET /", "")]);
    obs_fold_is_refused: b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n" => Refused(400);
    connection_cannot_remove_content_length: b"POST / HTTP/1.1\r\nHost: x\r\nConnection: Content-Length\r\nContent-Length: 3\r\n\r\nabc" => Forwarded(&[("POST /", "abc")]);
}

// RFC 9112 §6.1-§6.3: Transfer-Encoding and Content-Length in requests.
cases! {
    content_length_and_chunked_are_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    chunked_and_content_length_are_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n" => Refused(400);
    transfer_encoding_in_http10_is_refused: b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" => Refused(400);
    gzip_coding_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc" => Refused(400);
    gzip_then_chunked_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    xchunked_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" => Refused(400);
    chunked_then_identity_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" => Refused(400);
    chunked_twice_in_a_list_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    chunked_in_two_fields_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    chunked_with_a_parameter_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n" => Refused(400);
    quoted_chunked_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n" => Refused(400);
    empty_transfer_encoding_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n" => Refused(400);
    empty_list_element_before_chunked_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    vertical_tab_before_chunked_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n" => Refused(400);
    space_before_the_transfer_encoding_colon_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    folded_transfer_encoding_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" => Refused(400);
    uppercase_chunked_is_normalized: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: CHUNKED\r\n\r\n3\r\nabc\r\n0\r\n\r\n" => Forwarded(&[("POST /", "abc")]);
    tab_after_the_transfer_encoding_colon_is_ows: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" => Forwarded(&[("POST /", "abc")]);
    transfer_underscore_encoding_is_an_ordinary_field: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer_Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" => Forwarded(&[("POST /", "0\r\n\r\n")]);
    content_length_leading_zeros_are_normalized: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 004\r\n\r\nabcd" => Forwarded(&[("POST /", "abcd")]);
    content_length_list_of_equal_values_is_folded: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4, 4\r\n\r\nabcd" => Forwarded(&[("POST /", "abcd")]);
    repeated_equal_content_lengths_are_folded: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd" => Forwarded(&[("POST /", "abcd")]);
    content_length_with_tabs_is_trimmed: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\t4\t\r\n\r\nabcd" => Forwarded(&[("POST /", "abcd")]);
    differing_content_length_list_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4, 5\r\n\r\nabcde" => Refused(400);
    differing_content_lengths_are_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde" => Refused(400);
    content_length_with_plus_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +4\r\n\r\nabcd" => Refused(400);
    negative_content_length_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\nabcd" => Refused(400);
    hex_content_length_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x10\r\n\r\nabcd" => Refused(400);
    content_length_with_inner_space_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4 4\r\n\r\nabcd" => Refused(400);
    overflowing_content_length_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\nabcd" => Refused(400);
    empty_content_length_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\nabcd" => Refused(400);
    content_length_with_trailing_comma_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4,\r\n\r\nabcd" => Refused(400);
    zero_length_then_a_second_request_is_two_requests: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n" => Forwarded(&[("POST /", ""), ("GET /second", "")]);
    get_with_a_body_is_forwarded: b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" => Forwarded(&[("GET /", "abc")]);
    body_cut_short_is_not_forwarded: b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcd" => Dropped;
}

// RFC 9112 §7.1: chunked.
cases! {
    chunks_with_extensions_are_forwarded: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n2 ; c ; d=\"e f\"\r\nde\r\n0\r\n\r\n" => Forwarded(&[("POST /", "abcde")]);
    chunk_size_with_leading_zeros_is_accepted: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000000000003\r\nabc\r\n0\r\n\r\n" => Forwarded(&[("POST /", "abc")]);
    chunk_size_with_0x_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n" => Refused(400);
    non_hex_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n" => Refused(400);
    negative_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n" => Refused(400);
    empty_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\r\nabc\r\n0\r\n\r\n" => Refused(400);
    space_before_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n" => Refused(400);
    space_after_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n" => Refused(400);
    overflowing_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nabc\r\n0\r\n\r\n" => Refused(400);
    extension_without_a_name_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;\r\nabc\r\n0\r\n\r\n" => Refused(400);
    extension_without_a_value_after_equals_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\r\nabc\r\n0\r\n\r\n" => Refused(400);
    extension_with_spaces_in_a_token_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a b c\r\nabc\r\n0\r\n\r\n" => Refused(400);
    bare_lf_inside_an_extension_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a\nb\r\nabc\r\n0\r\n\r\n" => Refused(400);
    lf_only_chunk_lines_are_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n" => Refused(400);
    lf_only_after_chunk_data_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n" => Refused(400);
    lf_only_at_the_end_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\n" => Refused(400);
    bare_cr_after_chunk_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\rabc\r\n0\r\n\r\n" => Refused(400);
    missing_crlf_after_chunk_data_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n" => Refused(400);
    chunk_data_longer_than_its_size_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n" => Refused(400);
    trailer_fields_are_forwarded: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" => Forwarded(&[("POST /", "abc")]);
    trailer_without_a_colon_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T 1\r\n\r\n" => Refused(400);
    trailer_with_space_before_the_colon_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T : 1\r\n\r\n" => Refused(400);
    folded_trailer_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n 2\r\n\r\n" => Refused(400);
    nul_in_a_trailer_is_refused: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: a\x00b\r\n\r\n" => Refused(400);
    huge_chunk_never_completed_is_not_forwarded: b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\nabc" => Dropped;
}

// RFC 9112 §2.3, §9: limits and pipelining.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_fields_are_refused() {
    let mut req = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
    (0..150).for_each(|i| req.extend_from_slice(format!("X-{i}: y\r\n").as_bytes()));
    req.extend_from_slice(b"\r\n");
    check_request(&req, Refused(400)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_head_is_refused() {
    let req = format!("GET / HTTP/1.1\r\nHost: x\r\nX-A: {}\r\n\r\n", "a".repeat(20_000));
    check_request(req.as_bytes(), Refused(400)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_with_bodies_are_forwarded_in_order() {
    let req = b"POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcPOST /2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n";
    check_request(req, Forwarded(&[("POST /1", "abc"), ("POST /2", "de"), ("GET /3", "")])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_after_connection_close_is_not_read() {
    let req = b"GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n";
    check_request(req, Forwarded(&[("GET /1", "")])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_fields_reach_the_back_end_in_canonical_form() {
    let rig = rig(vec![]).await;
    let ex = exchange(rig.lb, b"POST / HTTP/1.1\nHost: x\nContent-Length: 0004\nContent-Length: 4, 4\nConnection: X-Hop, keep-alive\nX-Hop: 1\nTE: trailers\n\nabcdPOST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n1\r\na\r\n0\r\nX-T: 1\r\n\r\n", false).await;
    assert_eq!(ex.statuses(), vec![200, 200]);
    let got = rig.rec.requests();
    assert_eq!((got[0].header("content-length"), got[0].count("content-length")), (Some("4"), 1));
    assert_eq!((got[0].header("x-hop"), got[0].header("connection"), got[0].header("te")), (None, None, None));
    assert_eq!((got[1].header("transfer-encoding"), got[1].header("content-length")), (Some("chunked"), None));
    assert_eq!(got[1].trailers, b"X-T: 1\r\n");
    rig.dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_chunk_after_the_body_started_streaming_gets_400_and_closes_the_back_end() {
    let rig = rig_with(settings(), vec![]).await;
    let mut s = connect_from("127.0.0.1", rig.lb).await.unwrap();
    s.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n").await.unwrap();
    eventually("head at the back end", async || {
        (rig.rec.connections() == 1 && !rig.rec.bytes(0).is_empty()).then_some(())
    })
    .await;
    s.write_all(b"2\r\nxyZZ").await.unwrap();
    let ex = read_all(&mut s, false).await;
    assert_eq!(ex.statuses(), vec![400]);
    rig.rec.wait_closed(0).await;
    assert_eq!(rig.rec.requests(), vec![]);
    assert_ne!(rig.dp.snapshot().node_status(1, 1, 1), Some(NodeStatus::Down), "the client's fault, not the node's");
    rig.dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expect_continue_and_upgrade_still_work() {
    let rig = rig(vec![Answer {
        bytes: b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nhello".to_vec(),
        close: false,
    }])
    .await;
    let mut s = connect_from("127.0.0.1", rig.lb).await.unwrap();
    s.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n").await.unwrap();
    let _ = s.shutdown().await;
    let ex = read_all(&mut s, false).await;
    assert_eq!(ex.statuses(), vec![101]);
    assert_eq!(ex.rest, b"hello", "tunnelled bytes after the 101");
    assert_eq!(rig.rec.requests()[0].header("upgrade"), Some("echo"));
    let mut c = Client::connect("127.0.0.1", rig.lb).await.unwrap();
    c.s.write_all(b"POST /c HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n").await.unwrap();
    assert_eq!(c.raw(b"").await.unwrap().status, 100);
    assert_eq!(c.raw(b"hello").await.unwrap().status, 200);
    let got = rig.rec.requests();
    assert_eq!((got[1].body.as_slice(), got[1].header("expect")), (&b"hello"[..], None));
    rig.dp.handle.shutdown().await;
}
