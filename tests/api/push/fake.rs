//! A push service on loopback: HTTP/1.1 with keep-alive, one thread per connection; every
//! request is recorded and answered by the test's handler.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST`.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Header names in lowercase.
    pub headers: HashMap<String, String>,
    /// The body.
    pub body: Vec<u8>,
    /// When it was read completely.
    pub at: Instant,
    /// The same, by the wall clock (to compare with the server's timestamps).
    pub wall: chrono::DateTime<chrono::Utc>,
}

/// An answer: status, extra headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// A running fake.
pub struct Fake {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// What it received, in order.
    pub received: Arc<Mutex<Vec<Request>>>,
}

impl Fake {
    /// Starts a fake answering with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received: Arc<Mutex<Vec<Request>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let handler = handler.clone();
                let log = log.clone();
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().unwrap();
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut parts = line.split_whitespace();
                        let method = parts.next().unwrap_or_default().to_owned();
                        let path = parts.next().unwrap_or_default().to_owned();
                        let mut headers = HashMap::new();
                        loop {
                            let mut h = String::new();
                            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                                return;
                            }
                            let h = h.trim_end();
                            if h.is_empty() {
                                break;
                            }
                            if let Some((k, v)) = h.split_once(':') {
                                headers.insert(k.trim().to_lowercase(), v.trim().to_owned());
                            }
                        }
                        let n: usize = headers
                            .get("content-length")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        let mut body = vec![0; n];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let request = Request {
                            method,
                            path,
                            headers,
                            body,
                            at: Instant::now(),
                            wall: chrono::Utc::now(),
                        };
                        let (status, extra, answer) = handler(&request);
                        log.lock().unwrap().push(request);
                        let mut head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\n",
                            answer.len()
                        );
                        for (k, v) in extra {
                            head.push_str(&format!("{k}: {v}\r\n"));
                        }
                        head.push_str("\r\n");
                        if writer.write_all(head.as_bytes()).is_err()
                            || writer.write_all(&answer).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Self { url, received }
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.received.lock().unwrap().clone()
    }
}
