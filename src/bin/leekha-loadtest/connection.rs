//! The load generator's HTTP/1.1 client: one keep-alive connection per server, one
//! request at a time (see [`Http`]).

use std::io::Write;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::net::TcpStream;

use crate::wire::{Framing, MAX_HEAD, MAX_RESPONSE, chunked_body, head_end, parse_head};

/// A server requests go to, from a base URL parsed (and its name resolved) once.
pub struct Target {
    /// The `Host` header.
    host: String,
    /// The base URL's path, without a trailing slash: prepended to every request path.
    prefix: String,
    /// Where to connect, tried in order.
    addrs: Vec<SocketAddr>,
}

impl Target {
    /// A base URL (`http://host[:port][/prefix]`); the error reads like a transport error.
    pub fn parse(base: &str) -> Result<Target, String> {
        let url = url::Url::parse(base).map_err(|e| format!("bad uri: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!("bad uri: {} is not supported", url.scheme()));
        }
        let host = url
            .host_str()
            .ok_or_else(|| "bad uri: no host".to_owned())?;
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let addrs = url.socket_addrs(|| None).map_err(|e| format!("io: {e}"))?;
        if addrs.is_empty() {
            return Err("host not found".to_owned());
        }
        Ok(Target {
            host,
            prefix: url.path().trim_end_matches('/').to_owned(),
            addrs,
        })
    }
}

/// Writes all of `buf`.
async fn write_all(stream: &TcpStream, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match stream.try_write(buf) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether a kept connection still looks usable: nothing to read (the server has neither
/// closed it nor sent anything unasked). Costs no system call unless the event loop saw the
/// socket become readable since the last read, and then the one `read` that the response
/// would otherwise have spent finding nothing yet.
fn is_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

async fn connect(addrs: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last = "host not found".to_owned();
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = format!("io: {e}"),
        }
    }
    Err(last)
}

/// A minimal HTTP/1.1 client for one virtual client: one keep-alive connection per
/// server, one request at a time.
///
/// Hand-written rather than a general client (ureq, hyper, awc) because its CPU per
/// request is what the measurement is about: it writes each request with one `write`,
/// usually reads the response with one `read` into a buffer it keeps, and parses only
/// the status line and the three headers that delimit the body (`Content-Length`,
/// `Transfer-Encoding: chunked` and `Connection`); no header maps, and its buffers are
/// reused from request to request. Plain `http://` only. A connection is closed after any
/// failure and reopened by the next request; one the server closed while idle is noticed
/// before reuse (as ureq does), never by retrying a request that may have been applied.
pub struct Http {
    /// The servers, each parsed once (or why it could not be).
    pub targets: Arc<[Result<Target, String>]>,
    /// The open connection to each target.
    conns: Vec<Option<TcpStream>>,
    /// The request being sent.
    out: Vec<u8>,
    /// Its body, serialized.
    body: Vec<u8>,
    /// The response: `rbuf[..filled]` has been read.
    pub rbuf: Vec<u8>,
    filled: usize,
    /// The status of the response being read and when its head arrived, once it has.
    pub head: Option<(u16, Instant)>,
}

impl Http {
    /// A client of `targets`, with no connection open yet.
    pub fn new(targets: Arc<[Result<Target, String>]>) -> Http {
        Http {
            conns: targets.iter().map(|_| None).collect(),
            targets,
            out: Vec::with_capacity(1024),
            body: Vec::with_capacity(256),
            rbuf: vec![0; 16 << 10],
            filled: 0,
            head: None,
        }
    }

    /// Reads more of the response into `rbuf`; `Ok(0)` at the end of the stream.
    async fn read_more(&mut self, stream: &TcpStream) -> Result<usize, String> {
        if self.rbuf.len() - self.filled < 4096 {
            if self.rbuf.len() >= MAX_RESPONSE {
                return Err(format!(
                    "the response body is larger than request limit: {MAX_RESPONSE}"
                ));
            }
            self.rbuf.resize(self.rbuf.len() * 2, 0);
        }
        loop {
            match stream.try_read(&mut self.rbuf[self.filled..]) {
                Ok(n) => {
                    self.filled += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    stream.readable().await.map_err(|e| format!("io: {e}"))?;
                }
                Err(e) => return Err(format!("io: {e}")),
            }
        }
    }

    /// Sends one request to target `i` and reads the response; returns where its body is
    /// in `rbuf`. Sets `head` as soon as the head has arrived, so that a caller whose
    /// timeout drops this future still knows the status.
    pub async fn exchange(
        &mut self,
        i: usize,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Range<usize>, String> {
        let target = self.targets[i].as_ref().map_err(Clone::clone)?;
        self.out.clear();
        let _ = write!(
            self.out,
            "{method} {}{path} HTTP/1.1\r\nhost: {}\r\nuser-agent: leekha-loadtest\r\n",
            target.prefix, target.host
        );
        if let Some(t) = token {
            let _ = write!(self.out, "authorization: Bearer {t}\r\n");
        }
        if method != "GET" {
            self.body.clear();
            if let Some(b) = body {
                serde_json::to_writer(&mut self.body, b).map_err(|e| format!("body: {e}"))?;
            }
            let _ = write!(
                self.out,
                "content-type: application/json\r\ncontent-length: {}\r\n\r\n",
                self.body.len()
            );
            self.out.extend_from_slice(&self.body);
        } else {
            self.out.extend_from_slice(b"\r\n");
        }
        // Taken out: it goes back only after a complete, well-delimited response.
        let stream = match self.conns[i].take() {
            Some(s) if is_open(&s) => s,
            _ => connect(&target.addrs).await?,
        };
        write_all(&stream, &self.out)
            .await
            .map_err(|e| format!("io: {e}"))?;
        self.filled = 0;
        let (head, body_start) = loop {
            let mut scanned = 0;
            let end = loop {
                if let Some(end) = head_end(&self.rbuf[..self.filled], scanned) {
                    break end;
                }
                if self.filled > MAX_HEAD {
                    return Err(format!("response header is too big: > {MAX_HEAD}"));
                }
                scanned = self.filled.saturating_sub(3);
                if self.read_more(&stream).await? == 0 {
                    // ureq's words, so that reports read as before.
                    return Err("io: Peer disconnected".to_owned());
                }
            };
            let head = parse_head(&self.rbuf[..end], method)?;
            if head.status >= 200 || head.status == 101 {
                // (101 Switching Protocols ends HTTP on this connection: not kept.)
                break (head, end);
            }
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            self.rbuf.copy_within(end..self.filled, 0);
            self.filled -= end;
        };
        self.head = Some((head.status, Instant::now()));
        let (body, end) = match head.framing {
            Framing::Empty => (body_start..body_start, body_start),
            Framing::Length(n) => {
                let end = body_start + n;
                if end > MAX_RESPONSE {
                    return Err(format!(
                        "the response body is larger than request limit: {MAX_RESPONSE}"
                    ));
                }
                while self.filled < end {
                    if self.read_more(&stream).await? == 0 {
                        return Err("io: Peer disconnected".to_owned());
                    }
                }
                (body_start..end, end)
            }
            Framing::UntilClose => {
                while self.read_more(&stream).await? > 0 {}
                (body_start..self.filled, self.filled)
            }
            Framing::Chunked => {
                let (chunks, len) = loop {
                    if let Some(parsed) = chunked_body(&self.rbuf[body_start..self.filled])? {
                        break parsed;
                    }
                    if self.read_more(&stream).await? == 0 {
                        return Err("io: Peer disconnected".to_owned());
                    }
                };
                // Moves the chunks' data together, in place.
                let mut to = body_start;
                for chunk in chunks {
                    let n = chunk.len();
                    self.rbuf
                        .copy_within(body_start + chunk.start..body_start + chunk.end, to);
                    to += n;
                }
                (body_start..to, body_start + len)
            }
        };
        // Kept only if nothing unasked followed the response.
        if head.keep_alive && end == self.filled {
            self.conns[i] = Some(stream);
        }
        Ok(body)
    }
}
