//! The wrapper on each connection: problem bodies for the empty answers of actix's parser,
//! and a timer on every request head after the first (see the [module](super) docs).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use actix_web::http::StatusCode;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::problem::{ApiError, PROBLEM_JSON, Problem};

/// A connection whose empty error answers from actix's parser get a problem body, and
/// whose every request head is timed.
#[derive(Debug)]
pub struct ProblemIo<T> {
    inner: T,
    /// A replacement answer not yet written in full, and how much of it was written.
    pending: Option<(Vec<u8>, usize)>,
    /// The time a head has to arrive.
    head_timeout: Duration,
    /// Where the reading is: waiting for a head, in one, or past it.
    head: Head,
    /// The deadline of the head being read (armed at its first byte).
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The deadline passed: the 408 is being written, then reading fails.
    timed_out: bool,
}

/// Where the reading of a connection is, as far as heads go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// No byte of a next request yet (after an answer, or on a new connection).
    Awaiting,
    /// Within a head, at a line's start (2), after a CR there (3), or within a line (0).
    Reading(u8),
    /// Past the head: bytes are a body (or the next pipelined request) until an answer.
    Done,
}

impl<T> ProblemIo<T> {
    /// Wraps a connection whose heads must each arrive within `head_timeout`.
    pub fn new(inner: T, head_timeout: Duration) -> Self {
        Self {
            inner,
            pending: None,
            head_timeout,
            head: Head::Awaiting,
            deadline: None,
            timed_out: false,
        }
    }

    /// Follows the bytes read through heads; arms the deadline at a head's first read (if
    /// that read does not hold it whole) and disarms it at its end.
    fn saw_read(&mut self, bytes: &[u8]) {
        let mut matched = match self.head {
            Head::Done => return,
            Head::Awaiting if bytes.is_empty() => return,
            Head::Awaiting => 0,
            Head::Reading(m) => m,
        };
        for &b in bytes {
            // An empty line ends the head; lines end in CRLF or, as httparse also reads
            // them, a bare LF. 2: at a line's start; 3: after a CR there; 0: within a line.
            matched = match (matched, b) {
                (2 | 3, b'\n') => {
                    self.head = Head::Done;
                    self.deadline = None;
                    // What follows in the same read is a body or a pipelined request:
                    // judged after the answer.
                    return;
                }
                (_, b'\n') => 2,
                (2, b'\r') => 3,
                _ => 0,
            };
        }
        if self.head == Head::Awaiting {
            // Armed only now: most heads come whole in one read and never need it.
            self.deadline = Some(Box::pin(tokio::time::sleep(self.head_timeout)));
        }
        self.head = Head::Reading(matched);
    }

    /// After a write of an answer's head (not an interim 1xx), the next byte read starts a
    /// head.
    fn saw_write(&mut self, bytes: &[u8]) {
        // `HTTP/1.x NNN`, N not 1.
        if bytes.len() > 9 && bytes.starts_with(b"HTTP/1.") && bytes[8] == b' ' && bytes[9] != b'1'
        {
            self.head = Head::Awaiting;
            self.deadline = None;
        }
    }
}

impl<T: AsyncWrite + Unpin> ProblemIo<T> {
    /// Writes what is left of a replacement answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.pending {
            if *written == bytes.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for ProblemIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.timed_out
            && let Some(deadline) = &mut self.deadline
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.timed_out = true;
            self.deadline = None;
            // The answer actix gives a late first head, with its problem body.
            let bare = format!(
                "HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\
                 date: {}\r\n\r\n",
                chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT")
            );
            self.pending = with_problem(bare.as_bytes()).map(|answer| (answer, 0));
        }
        if self.timed_out {
            // The answer first; then the read fails, and actix drops the connection.
            ready!(self.poll_pending(cx))?;
            return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let this = &mut *self;
        this.saw_read(&buf.filled()[before..]);
        // A deadline just armed must be polled once to wake this task when it passes.
        if let Some(deadline) = &mut this.deadline {
            let _ = deadline.as_mut().poll(cx);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ProblemIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        self.saw_write(buf);
        if let Some(answer) = with_problem(buf) {
            self.pending = Some((answer, 0));
            // Taken whole: the rest is written by later calls (or by flush and shutdown).
            if let Poll::Ready(Err(e)) = self.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The answers actix's dispatcher writes itself with an empty body, and what the problem
/// says of each.
const BARE_ANSWERS: [(&[u8], StatusCode, &str); 4] = [
    (
        b"HTTP/1.1 400 Bad Request\r\n",
        StatusCode::BAD_REQUEST,
        "the request line or a header could not be read: it is not HTTP/1.1 as RFC 9112 \
         writes it, or the URL is over 64 KiB",
    ),
    (
        b"HTTP/1.1 408 Request Timeout\r\n",
        StatusCode::REQUEST_TIMEOUT,
        "the request head did not arrive in time",
    ),
    (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "the request head is over 128 KiB or has more than 96 header fields",
    ),
    (
        b"HTTP/1.1 500 Internal Server Error\r\n",
        StatusCode::INTERNAL_SERVER_ERROR,
        "the connection ended in an unexpected way",
    ),
];

/// How far from its end a write is searched for a bare answer after other answers: further
/// than the longest one actix writes (a status line and three short fields).
const BARE_TAIL: usize = 512;

/// What to write instead of `buf` when it is one of [`BARE_ANSWERS`] ([`bare_problem`]), or
/// ends with one after the answers to earlier requests: a pipelined request the parser
/// refused is answered in the same write as those before it. A bare answer is the last of
/// its connection, so it can only stand at the end; only a write ending with an empty line
/// is searched, and only its last [`BARE_TAIL`] bytes.
fn with_problem(buf: &[u8]) -> Option<Vec<u8>> {
    if let Some(answer) = bare_problem(buf) {
        return Some(answer);
    }
    if !buf.ends_with(b"\r\n\r\n") {
        return None;
    }
    let from = buf.len().saturating_sub(BARE_TAIL).max(1);
    (from..buf.len()).find_map(|at| {
        if !buf[at..].starts_with(b"HTTP/1.1 ") {
            return None;
        }
        let answer = bare_problem(&buf[at..])?;
        let mut out = Vec::with_capacity(at + answer.len());
        out.extend_from_slice(&buf[..at]);
        out.extend_from_slice(&answer);
        Some(out)
    })
}

/// The answer to write instead of `buf`, when `buf` is exactly one of [`BARE_ANSWERS`]: its
/// status line and headers, `content-length: 0` among them, and nothing after the head. The
/// headers are kept but the length; the type and length of the problem are added.
fn bare_problem(buf: &[u8]) -> Option<Vec<u8>> {
    // The cheap test first: every other write goes on after this.
    if !buf.starts_with(b"HTTP/1.1 4") && !buf.starts_with(b"HTTP/1.1 5") {
        return None;
    }
    let (line, status, detail) = BARE_ANSWERS.iter().find(|(l, ..)| buf.starts_with(l))?;
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    let head = std::str::from_utf8(&head[line.len()..]).ok()?;
    let mut fields = Vec::new();
    let mut empty = false;
    for field in head.split("\r\n") {
        if field.eq_ignore_ascii_case("content-length: 0") {
            empty = true;
        } else if !field.is_empty() {
            fields.push(field);
        }
    }
    if !empty || fields.iter().any(|f| !f.contains(':')) {
        return None;
    }
    let mut problem = ApiError::from_status(*status).problem();
    (*detail).clone_into(&mut problem.detail);
    Some(problem_answer(line, &fields, &problem))
}

/// An answer: `line` (the status line with its CRLF), `fields`, and `problem` as its body.
fn problem_answer(line: &[u8], fields: &[&str], problem: &Problem) -> Vec<u8> {
    let body = serde_json::to_vec(problem).unwrap_or_default();
    let mut out = Vec::with_capacity(line.len() + body.len() + 128);
    out.extend_from_slice(line);
    for field in fields {
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("content-type: {PROBLEM_JSON}\r\n").as_bytes());
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parsers_empty_answers_get_a_problem_and_keep_their_headers() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\
                     connection: close\r\ndate: Sat, 05 Dec 2026 12:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(with_problem(bare).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
        assert!(
            head.contains("\r\ndate: Sat, 05 Dec 2026 12:00:00 GMT\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\ncontent-type: application/problem+json\r\n"));
        assert!(head.contains(&format!("\r\ncontent-length: {}", body.len())));
        assert!(!head.contains("content-length: 0"), "{head}");
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 431);
        assert_eq!(problem["code"], "headers_too_large");
        assert_eq!(problem["type"], "/problems/headers_too_large");

        let timeout = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n";
        let out = String::from_utf8(with_problem(timeout).unwrap()).unwrap();
        assert!(out.contains(r#""code":"request_timeout""#), "{out}");
    }

    #[test]
    fn a_bare_answer_after_the_answers_to_pipelined_requests_gets_its_problem_too() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 15\r\n\r\n{\"status\":\"ok\"}";
        let bare = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        let both = [&ok[..], &bare[..]].concat();
        let out = with_problem(&both).unwrap();
        assert!(out.starts_with(ok), "the first answer stays as it was");
        let rest = String::from_utf8(out[ok.len()..].to_vec()).unwrap();
        assert!(rest.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{rest}");
        assert!(rest.contains(r#""code":"bad_request""#), "{rest}");
        // A body that merely ends as a head would, without a bare answer in it, is left.
        let other = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n\r\n\r\n";
        assert_eq!(with_problem(other), None);
    }

    #[test]
    fn every_other_write_passes_untouched() {
        for other in [
            // An answer with a body, as the app writes its errors.
            &b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}"[..],
            // The head of a body to follow in another write.
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 120\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ntransfer-encoding: chunked\r\n\r\n",
            // A status actix does not answer on its own.
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            // A body chunk, an unfinished head.
            b"{\"status\": 400}",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n",
        ] {
            assert_eq!(
                with_problem(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn a_heads_deadline_runs_from_its_first_byte_to_its_end_across_reads() {
        let mut io = ProblemIo::new((), Duration::from_secs(1));
        io.saw_read(b"");
        assert_eq!(io.head, Head::Awaiting);
        assert!(io.deadline.is_none());
        // `sleep` needs a runtime's timer only when polled; building it needs one too.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            io.saw_read(b"GET / HTTP/1.1\r\nHost: x\r");
            assert_eq!(io.head, Head::Reading(0));
            assert!(io.deadline.is_some());
            io.saw_read(b"\n\r");
            assert_eq!(io.head, Head::Reading(3));
            io.saw_read(b"\n{\"type\":\"play\"}");
            assert_eq!(io.head, Head::Done);
            assert!(io.deadline.is_none());
            // A body (or a pipelined request) before the answer is not a head.
            io.saw_read(b"POST / HTTP/1.1\r\n");
            assert_eq!(io.head, Head::Done);
            io.saw_write(b"HTTP/1.1 100 Continue\r\n\r\n");
            assert_eq!(io.head, Head::Done);
            io.saw_write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
            assert_eq!(io.head, Head::Awaiting);
            // An empty line before the request line is skipped, not an end; CR CR is no
            // empty line.
            io.saw_read(b"\r\nGET / HTTP/1.1\r\nA: b\r\r\n");
            assert_eq!(io.head, Head::Reading(2));
            assert!(io.deadline.is_some());
            io.saw_read(b"\r\n");
            assert_eq!(io.head, Head::Done);
            // Bare LFs end lines too, as httparse reads them.
            io.saw_write(b"HTTP/1.1 204 No Content\r\n\r\n");
            io.saw_read(b"GET / HTTP/1.1\nHost: x\n\n");
            assert_eq!(io.head, Head::Done);
            // HTTP/1.0 answers end a request as well.
            io.saw_write(b"HTTP/1.0 200 OK\r\n\r\n");
            assert_eq!(io.head, Head::Awaiting);
        });
    }
}
