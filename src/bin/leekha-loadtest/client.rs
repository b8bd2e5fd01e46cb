//! A virtual client: the calls of the Leekha API it makes, timed, with failures counted
//! into its report by kind.

use std::time::{Duration, Instant};

use rand::RngExt;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Value, json};

use crate::connection::Http;
use crate::report::LoadReport;

/// One virtual client: its connections, what it measured, and its own random numbers (so
/// that a run's choices do not depend on how the clients interleave).
pub struct Client {
    /// Its connections.
    pub http: Http,
    /// How long one request may take, from sending it to the end of its response.
    pub timeout: Duration,
    /// What it measured so far.
    pub report: LoadReport,
    /// Picks the server of each request and the actions.
    pub rng: rand::rngs::StdRng,
}

/// A registered player.
pub struct Player {
    /// Its access token.
    pub token: String,
}

/// Why a request failed.
pub enum Failure {
    /// The server answered with this status (and problem code, or why the body was
    /// unusable).
    Status(u16, String),
    /// No usable response: connection, protocol or timeout.
    Transport(String),
}

/// The one field a client reads of a register response.
#[derive(Deserialize)]
struct Session {
    #[serde(default)]
    access_token: Value,
}

/// The one field a client reads of a created game.
#[derive(Deserialize)]
struct Created {
    #[serde(default)]
    id: Value,
}

impl Client {
    /// One request; a 2xx body is parsed as `T` (a failure if it does not parse).
    pub async fn call<T: DeserializeOwned>(
        &mut self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<T, Failure> {
        let i = if self.http.targets.len() == 1 {
            0
        } else {
            self.rng.random_range(0..self.http.targets.len())
        };
        let started = Instant::now();
        self.http.head = None;
        let deadline = tokio::time::Instant::from_std(started + self.timeout);
        let result =
            tokio::time::timeout_at(deadline, self.http.exchange(i, method, path, token, body))
                .await;
        let head = self.http.head.take();
        // Up to the response head, as before (ureq returned there and read the body after).
        let until = head.map_or_else(Instant::now, |(_, at)| at);
        let ms = until.duration_since(started).as_secs_f64() * 1000.0;
        self.report.request_ms.push(ms);
        let (status, text) = match (result, head) {
            (Ok(Ok(range)), Some((status, _))) => (status, &self.http.rbuf[range]),
            // The head came but not the whole body: an empty body, an error below.
            (_, Some((status, _))) => (status, &[][..]),
            (Ok(Err(e)), None) => return Err(Failure::Transport(e)),
            (Err(_), None) => return Err(Failure::Transport("timeout: global".to_owned())),
            (Ok(Ok(_)), None) => return Err(Failure::Transport("protocol: no head".to_owned())),
        };
        if (200..300).contains(&status) {
            if path.ends_with("/actions") {
                self.report.action_ms.push(ms);
            }
            serde_json::from_slice(text)
                .map_err(|e| Failure::Status(status, format!("unreadable body: {e}")))
        } else {
            let code = serde_json::from_slice::<Value>(text)
                .ok()
                .and_then(|v| v["code"].as_str().map(str::to_owned))
                .unwrap_or_default();
            Err(Failure::Status(status, code))
        }
    }

    /// Counts a failure in the report, by status and code or by transport error.
    pub fn record(&mut self, failure: &Failure) {
        let key = match failure {
            Failure::Status(s, code) => format!("{s} {code}"),
            Failure::Transport(e) => {
                format!("transport: {}", e.chars().take(40).collect::<String>())
            }
        };
        *self.report.errors.entry(key).or_default() += 1;
    }

    /// Registers a player under `name`.
    pub async fn register(&mut self, name: &str) -> Result<Player, Failure> {
        let body = json!({"username": name, "password": "load-test-password"});
        let v: Session = self
            .call("POST", "/api/v1/auth/register", None, Some(&body))
            .await?;
        Ok(Player {
            token: v.access_token.as_str().unwrap_or_default().to_owned(),
        })
    }
    /// Creates a game as player 0 and seats the other three: the deal follows the fourth
    /// join. Returns the game's id.
    pub async fn start_table(&mut self, players: &[Player]) -> Result<String, Failure> {
        let created: Created = self
            .call(
                "POST",
                "/api/v1/games",
                Some(&players[0].token),
                Some(&json!({})),
            )
            .await?;
        let id = created.id.as_str().unwrap_or_default().to_owned();
        for (seat, p) in players.iter().enumerate().skip(1) {
            self.call::<IgnoredAny>(
                "POST",
                &format!("/api/v1/games/{id}/join"),
                Some(&p.token),
                Some(&json!({"seat": seat})),
            )
            .await?;
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::Target;

    /// A server answering with canned responses, one per request, on connections it closes
    /// after the responses marked so; returns how many connections it accepted.
    fn canned_server(
        responses: Vec<(&'static str, bool)>,
    ) -> (String, std::thread::JoinHandle<usize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut responses = responses.into_iter();
            let mut connections = 0;
            'accept: loop {
                let (mut socket, _) = listener.accept().unwrap();
                connections += 1;
                loop {
                    // One request: a head (and a body of its content-length).
                    let mut request = Vec::new();
                    let mut byte = [0u8];
                    while !request.ends_with(b"\r\n\r\n") {
                        if socket.read(&mut byte).unwrap() == 0 {
                            continue 'accept;
                        }
                        request.push(byte[0]);
                    }
                    let text = String::from_utf8(request).unwrap();
                    let length = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .map_or(0, |n| n.parse().unwrap());
                    let mut body = vec![0; length];
                    socket.read_exact(&mut body).unwrap();
                    let Some((response, close)) = responses.next() else {
                        break 'accept;
                    };
                    socket.write_all(response.as_bytes()).unwrap();
                    if responses.len() == 0 {
                        break 'accept;
                    }
                    if close {
                        continue 'accept;
                    }
                }
            }
            connections
        });
        (url, server)
    }

    #[derive(Debug, Deserialize)]
    struct X {
        x: u32,
    }

    /// A client of `urls` and the event loop to run it on.
    fn test_client(urls: &[&str], timeout: Duration) -> (Client, tokio::runtime::Runtime) {
        let client = Client {
            http: Http::new(urls.iter().map(|u| Target::parse(u)).collect()),
            timeout,
            report: LoadReport::default(),
            rng: rand::SeedableRng::seed_from_u64(1),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        (client, runtime)
    }

    #[test]
    fn the_client_keeps_connections_and_reads_every_kind_of_body() {
        let (url, server) = canned_server(vec![
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"x\":1}",
                false,
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{\"x\r\n4\r\n\":2}\r\n0\r\n\r\n",
                false,
            ),
            (
                "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 7\r\n\r\n{\"x\":3}",
                true,
            ),
            // Then closed while idle, without saying so.
            (
                "HTTP/1.1 404 Not Found\r\ncontent-length: 20\r\n\r\n{\"code\":\"not_found\"}",
                true,
            ),
            ("HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nnot", false),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"x\":6}",
                false,
            ),
        ]);
        let (mut client, runtime) = test_client(&[&url], Duration::from_secs(5));
        runtime.block_on(async {
            let body = json!({"a": 1});
            for want in 1..=3 {
                let got = client
                    .call::<X>("POST", "/x/actions", Some("t"), Some(&body))
                    .await;
                assert_eq!(got.ok().map(|x| x.x), Some(want));
            }
            match client.call::<X>("GET", "/x", None, None).await {
                Err(Failure::Status(404, code)) => assert_eq!(code, "not_found"),
                _ => panic!("not the 404"),
            }
            // The server has closed the kept connection: noticed before it is used.
            tokio::time::sleep(Duration::from_millis(100)).await;
            match client.call::<X>("GET", "/x", None, None).await {
                Err(Failure::Status(200, e)) => assert!(e.starts_with("unreadable body"), "{e}"),
                _ => panic!("not the unreadable body"),
            }
            assert_eq!(
                client
                    .call::<X>("GET", "/x", None, None)
                    .await
                    .ok()
                    .map(|x| x.x),
                Some(6)
            );
        });
        drop(client);
        assert_eq!(server.join().unwrap(), 3);
    }

    #[test]
    fn silence_is_a_timeout_and_no_server_a_transport_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let silent = format!("http://{}", listener.local_addr().unwrap());
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap())
        };
        let (mut client, runtime) = test_client(&[&silent, &closed], Duration::from_millis(200));
        runtime.block_on(async {
            for _ in 0..8 {
                if let Err(f) = client.call::<X>("GET", "/", None, None).await {
                    client.record(&f);
                }
            }
        });
        let errors = &client.report.errors;
        assert_eq!(errors.values().sum::<u64>(), 8, "{errors:?}");
        assert!(
            errors.contains_key("transport: timeout: global"),
            "{errors:?}"
        );
        assert!(
            errors
                .keys()
                .any(|k| k.starts_with("transport: io: Connection refused")),
            "{errors:?}"
        );
        assert_eq!(client.report.request_ms.len(), 8);
        drop(listener);
    }
}
