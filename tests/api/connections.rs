//! What a connection may cost the real binary: a head or a body that never completes, an
//! idle keep-alive connection, and the limit on connections open at once.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::TestDb;
use crate::shutdown::{free_port, read_response, send_request, start_with};

/// Reads until the server closes the connection (or `within` passes); returns what came
/// and how long it took.
fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, Duration) {
    let started = Instant::now();
    stream.set_read_timeout(Some(within)).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "still open after {:?} ({e}); received {:?}",
                started.elapsed(),
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    (
        String::from_utf8_lossy(&raw).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn a_body_that_never_completes_gets_408_and_the_connection_is_closed() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "500")]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // The head in full, then one byte of the hundred announced, then nothing.
    stream
        .write_all(
            b"POST /api/v1/auth/register HTTP/1.1\r\nHost: localhost\r\n\
              Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        )
        .unwrap();
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("slow body: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
    assert!(raw.contains("application/problem+json"), "{raw}");
    assert!(raw.contains(r#""code":"request_timeout""#), "{raw}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn a_chunked_body_that_never_ends_gets_408_and_the_connection_is_closed() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "500")]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(
            b"POST /api/v1/auth/register HTTP/1.1\r\nHost: localhost\r\n\
              Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
        )
        .unwrap();
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("slow chunked body: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn a_chunked_body_left_unread_is_not_drained_for_as_long_as_it_trickles() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // No token: the answer (401) comes before anyone reads the body.
    stream
        .write_all(
            b"POST /api/v1/games HTTP/1.1\r\nHost: localhost\r\n\
              Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
        )
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for _ in 0..30 {
            std::thread::sleep(Duration::from_millis(200));
            if writer.write_all(b"1\r\n \r\n").is_err() {
                return;
            }
        }
    });
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("unread trickling body: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 401"), "{raw}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    trickle.join().unwrap();
}

#[test]
fn a_head_that_never_completes_gets_408_and_the_connection_is_closed() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "500")]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"POST /api/v1/auth/register HTTP/1.1\r\nHost: loc")
        .unwrap();
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("slow head: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
    assert!(raw.contains("application/problem+json"), "{raw}");
    assert!(raw.contains(r#""code":"request_timeout""#), "{raw}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

/// The parts of a raw answer: status, headers (lower-cased names), body.
fn parse_raw(raw: &str) -> (u16, Vec<(String, String)>, &str) {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body)
}

#[test]
fn requests_the_http_parser_refuses_get_a_problem_body() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[]);
    let many_headers: String = (0..100).map(|i| format!("X-Extra-{i}: {i}\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "a raw byte that is not a URL character in the path",
            b"GET /api/v1/\xff\xfe HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "a header line without a colon",
            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "a URL of 70,000 bytes",
            format!(
                "GET /api/v1/games?x={} HTTP/1.1\r\nHost: localhost\r\n\r\n",
                "a".repeat(70_000)
            )
            .into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a hundred header fields",
            format!("GET /healthz HTTP/1.1\r\nHost: localhost\r\n{many_headers}\r\n").into_bytes(),
            431,
            "headers_too_large",
        ),
    ];
    for (what, request, status, code) in cases {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // The server may answer and close before it has read everything.
        let _ = stream.write_all(&request);
        let (raw, _) = read_until_closed(&mut stream, Duration::from_secs(10));
        let (got, headers, body) = parse_raw(&raw);
        assert_eq!(got, status, "{what}: {raw}");
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(
            header("content-type"),
            Some("application/problem+json"),
            "{what}: {raw}"
        );
        assert_eq!(
            header("content-length"),
            Some(body.len().to_string().as_str()),
            "{what}"
        );
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], status, "{what}: {body}");
        assert_eq!(problem["code"], code, "{what}: {body}");
        assert_eq!(
            problem["type"],
            format!("/problems/{code}"),
            "{what}: {body}"
        );
        assert!(
            problem["title"].is_string() && problem["detail"].is_string(),
            "{body}"
        );
    }

    // A well-formed request on a kept-alive connection is answered as before.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (raw, _) = read_until_closed(&mut stream, Duration::from_secs(10));
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    assert!(raw.contains("HTTP/1.1 404"), "{raw}");
    assert!(raw.contains(r#""code":"not_found""#), "{raw}");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_keep_alive_time() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[("LEEKHA_KEEP_ALIVE_SECONDS", "1")]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("idle keep-alive: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    // Not before the time configured (actix's clock, read every 500 ms, made it early).
    assert!(
        (Duration::from_secs(1)..Duration::from_secs(5)).contains(&waited),
        "kept for a next request, then closed: {waited:?}"
    );
}

#[test]
fn a_connection_whose_first_request_never_comes_is_closed_not_before_its_time() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "1500")]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (_, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("no first request: closed after {waited:?}");
    assert!(
        (Duration::from_millis(1500)..Duration::from_secs(5)).contains(&waited),
        "{waited:?}"
    );
}

#[test]
fn connections_past_the_limit_wait_until_one_closes() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(
        &db,
        port,
        &[
            ("LEEKHA_MAX_CONNECTIONS", "2"),
            ("LEEKHA_MAX_STREAMS", "1"),
            ("LEEKHA_WORKERS", "1"),
        ],
    );
    // Two silent connections take the two places; the readiness probe's has closed.
    std::thread::sleep(Duration::from_millis(200));
    let first = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _second = TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::thread::sleep(Duration::from_millis(200));

    // The kernel still completes the handshake (the backlog), but nobody reads.
    let mut third = send_request(port, "GET", "/healthz", None, None).unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    let mut byte = [0u8; 1];
    let early = third.read(&mut byte);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the third connection was served while two were open: {early:?}"
    );

    drop(first);
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (status, body) = read_response(third).unwrap();
    assert_eq!(status, 200, "served once a place is free: {body}");
}

/// actix-http arms its head timer for a connection's first request only, and its keep-alive
/// timer stops at the first byte of the next one: the connection wrapper
/// (`http/transport/problem_io.rs`) times the later heads.
#[test]
fn an_unfinished_second_head_on_a_kept_alive_connection_is_closed() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(
        &db,
        port,
        &[
            ("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "500"),
            ("LEEKHA_KEEP_ALIVE_SECONDS", "1"),
        ],
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: loc")
        .unwrap();
    let (raw, waited) = read_until_closed(&mut stream, Duration::from_secs(10));
    eprintln!("unfinished second head: closed after {waited:?}");
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    let second = &raw[raw.find("HTTP/1.1 408").expect("a 408 after the 200")..];
    assert!(second.contains("application/problem+json"), "{second}");
    assert!(second.contains(r#""code":"request_timeout""#), "{second}");
    assert!(second.contains("\r\ndate: "), "{second}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn an_http_1_0_client_gets_no_chunked_body() {
    let db = TestDb::migrated();
    let port = free_port();
    let _server = start_with(&db, port, &[]);
    // A compressed answer is a stream of unknown length: to HTTP/1.1 it goes chunked, to
    // HTTP/1.0 (which has no chunks) as the bytes up to the close.
    for (version, chunked) in [("1.1", true), ("1.0", false)] {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "GET /openapi.json HTTP/{version}\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\
             Connection: close\r\n\r\n"
        )
        .unwrap();
        let started = Instant::now();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
        assert!(head.starts_with(&format!("http/{version} 200")), "{head}");
        assert!(head.contains("content-encoding: gzip"), "{head}");
        assert_eq!(
            head.contains("transfer-encoding: chunked"),
            chunked,
            "{head}"
        );
        if !chunked {
            // The body itself, a gzip stream, starts right after the head.
            assert_eq!(&raw[end + 4..end + 6], [0x1f, 0x8b], "{head}");
        }
    }
}
