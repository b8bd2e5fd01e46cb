//! The HTTP/1.1 response framing the load generator's client needs: where a head ends,
//! the status and how the body is delimited, and chunked bodies. Pure functions on bytes,
//! so every case is tested without a socket.

use std::ops::Range;

/// Largest response accepted, head and body.
pub const MAX_RESPONSE: usize = 16 << 20;
/// Largest response head accepted.
pub const MAX_HEAD: usize = 64 << 10;

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// What a client needs of a response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// How the body ends.
    pub framing: Framing,
    /// Whether the connection may be reused after this response.
    pub keep_alive: bool,
}

/// Where the head ends (just past its blank line) in `buf`, searching from `from`.
pub fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| from + p + 4)
}

/// Parses a response head (status line and headers, up to the blank line).
pub fn parse_head(head: &[u8], method: &str) -> Result<Head, String> {
    let bad = |what: &str| format!("protocol: {what}");
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.trim_ascii_end());
    let status_line = lines.next().unwrap_or_default();
    let rest = status_line
        .strip_prefix(b"HTTP/1.")
        .ok_or_else(|| bad("not an HTTP/1.x response"))?;
    let http10 = rest.first() == Some(&b'0');
    if rest.get(1) != Some(&b' ') || rest.get(5).is_some_and(|&b| b != b' ') {
        return Err(bad("bad status line"));
    }
    let status = rest
        .get(2..5)
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or_else(|| bad("bad status line"))?;
    let mut length = None;
    let mut chunked = false;
    let mut keep_alive = !http10;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (line[..colon].trim_ascii(), line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| bad("bad content-length"))?;
            if length.is_some_and(|l| l != n) {
                return Err(bad("conflicting content-length"));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = value
                .split(|&b| b == b',')
                .any(|v| v.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    keep_alive = true;
                }
            }
        }
    }
    if status == 101 {
        keep_alive = false;
    }
    let framing = if method == "HEAD" || status < 200 || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        keep_alive = false;
        Framing::UntilClose
    };
    Ok(Head {
        status,
        framing,
        keep_alive,
    })
}

/// A chunked body's data ranges and the length of its whole encoding.
pub type Chunks = (Vec<Range<usize>>, usize);

/// A chunked body at the start of `buf`: the data ranges and the length of the whole
/// encoding (chunks, last chunk, trailers), or `None` while incomplete.
pub fn chunked_body(buf: &[u8]) -> Result<Option<Chunks>, String> {
    let mut chunks = Vec::new();
    let mut pos = 0;
    loop {
        let Some(eol) = crlf(buf, pos) else {
            return Ok(None);
        };
        let line = &buf[pos..eol];
        let size = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size.trim_ascii())
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .filter(|&s| s <= MAX_RESPONSE)
            .ok_or_else(|| "protocol: bad chunk size".to_owned())?;
        pos = eol + 2;
        if size == 0 {
            // Trailers, up to an empty line.
            loop {
                let Some(eol) = crlf(buf, pos) else {
                    return Ok(None);
                };
                let empty = eol == pos;
                pos = eol + 2;
                if empty {
                    return Ok(Some((chunks, pos)));
                }
            }
        }
        if buf.len() < pos + size + 2 {
            return Ok(None);
        }
        if &buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err("protocol: bad chunk end".to_owned());
        }
        chunks.push(pos..pos + size);
        pos += size + 2;
    }
}

/// Where the line starting at `from` ends (the index of its `\r\n`).
fn crlf(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_heads_say_how_the_body_ends() {
        let head = |text: &str, method| parse_head(text.as_bytes(), method);
        assert_eq!(
            head(
                "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: application/json\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 200,
                framing: Framing::Length(12),
                keep_alive: true
            })
        );
        assert_eq!(
            head(
                "HTTP/1.1 201 Created\r\ntransfer-encoding: gzip, Chunked\r\nconnection: Close\r\n\r\n",
                "POST"
            ),
            Ok(Head {
                status: 201,
                framing: Framing::Chunked,
                keep_alive: false
            })
        );
        assert_eq!(
            head("HTTP/1.0 200 OK\r\n\r\n", "GET"),
            Ok(Head {
                status: 200,
                framing: Framing::UntilClose,
                keep_alive: false
            })
        );
        assert_eq!(
            head(
                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 0\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 200,
                framing: Framing::Length(0),
                keep_alive: true
            })
        );
        assert_eq!(
            head(
                "HTTP/1.1 304 Not Modified\r\ncontent-length: 99\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 304,
                framing: Framing::Empty,
                keep_alive: true
            })
        );
        assert!(head("HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n", "GET").is_err());
        assert!(head("HTTP/1.1 2000 OK\r\n\r\n", "GET").is_err());
        assert!(head("SSH-2.0-OpenSSH\r\n\r\n", "GET").is_err());
    }

    #[test]
    fn chunked_bodies_are_decoded_once_complete() {
        let encoded = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let whole = encoded.len() - 4;
        let (chunks, len) = chunked_body(encoded).unwrap().unwrap();
        assert_eq!(len, whole);
        let data: Vec<u8> = chunks
            .into_iter()
            .flat_map(|c| encoded[c].to_vec())
            .collect();
        assert_eq!(data, b"Wikipedia");
        for cut in 0..whole {
            assert_eq!(chunked_body(&encoded[..cut]), Ok(None), "{cut}");
        }
        assert!(chunked_body(b"zz\r\n").is_err());
        assert!(chunked_body(b"2\r\nabc\r\n0\r\n\r\n").is_err());
    }
}
