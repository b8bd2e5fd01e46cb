//! Webhook delivery: each notification of a user with a webhook is POSTed as JSON, signed
//! with HMAC-SHA256 of the body (`X-Leekha-Signature: sha256=<hex>`), and retried with
//! exponential backoff until it succeeds or grows too old. Every attempt is recorded.

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::db::outbox::{self, AttemptEnd, Delivery};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::services::Services;

mod guard;

pub use guard::{GuardedResolver, is_public, refusal};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Leekha-Signature";

/// The HTTP client deliveries use: bounded time, no redirects to elsewhere, and only
/// public addresses unless `allow_private` ([`GuardedResolver`]).
pub fn agent(allow_private: bool) -> ureq::Agent {
    agent_with(GuardedResolver::new(allow_private))
}

fn agent_with(resolver: GuardedResolver) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .max_redirects(0)
        .http_status_as_error(false)
        // Through a proxy the resolver would judge the proxy's address, not the receiver's.
        .proxy(None)
        .user_agent("leekha-webhooks/1")
        .build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::new(),
        resolver,
    )
}

/// `sha256=<hex of HMAC-SHA256(secret, body)>`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Checks the form of a webhook URL: http(s), a host, no credentials. Resolves nothing.
///
/// # Errors
/// A sentence saying what is wrong.
pub fn parse_url(raw: &str) -> Result<url::Url, String> {
    if raw.len() > 2048 {
        return Err("the URL is longer than 2048 characters".into());
    }
    let url = url::Url::parse(raw).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("only http and https URLs are accepted".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL must not carry credentials".into());
    }
    if url.host().is_none() {
        return Err("the URL has no host".into());
    }
    // Port 0 is no port anything listens on: every delivery would fail.
    if url.port() == Some(0) {
        return Err("the URL's port must be 1..=65535".into());
    }
    Ok(url)
}

/// Checks a webhook URL when it is set: [`parse_url`], and — unless allowed — only public
/// addresses ([`refusal`]): every address the host resolves to now. Resolves the host
/// (blocking). Deliveries judge the addresses again when they connect.
///
/// # Errors
/// A sentence saying what is wrong.
pub fn check_url(raw: &str, allow_private: bool) -> Result<url::Url, String> {
    let url = parse_url(raw)?;
    let port = url.port_or_known_default().unwrap_or(443);
    // An address literal is judged as parsed (the URL parser has already normalised forms
    // such as `http://2130706433/`); only a name is resolved.
    let host = url.host_str().unwrap_or_default();
    let (addrs, named): (Vec<IpAddr>, bool) = match url.host().ok_or("the URL has no host")? {
        url::Host::Ipv4(ip) => (vec![ip.into()], false),
        url::Host::Ipv6(ip) => (vec![ip.into()], false),
        // What the server's resolver says stays unsaid: any user could otherwise map the
        // internal names of the server's network to their addresses.
        url::Host::Domain(name) => (
            (name, port)
                .to_socket_addrs()
                .map_err(|_| format!("cannot resolve {name}"))?
                .map(|a| a.ip())
                .collect(),
            true,
        ),
    };
    if addrs.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if !allow_private {
        for ip in &addrs {
            if let Some(why) = refusal(*ip) {
                return Err(if named {
                    format!(
                        "{host} resolves to an address that is not public: only public \
                         addresses are allowed"
                    )
                } else {
                    format!("{ip} is {why}: only public addresses are allowed")
                });
            }
        }
    }
    Ok(url)
}

/// `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3), capped at an hour: how
/// long a receiver (a webhook's, a push service) asks to be left alone.
pub fn parse_retry_after(raw: &str) -> Option<Duration> {
    let raw = raw.trim();
    let wait = match raw.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => {
            let at = chrono::DateTime::parse_from_rfc2822(raw).ok()?;
            (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
                .to_std()
                .unwrap_or_default()
        }
    };
    Some(wait.min(Duration::from_secs(3600)))
}

/// The `Retry-After` of an answer's headers ([`parse_retry_after`]), if it has a usable one.
pub fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}

/// How long a claimed delivery is reserved for the instance that claimed it.
const LEASE: Duration = Duration::from_secs(60);

/// Claims up to 20 due deliveries (a lease, so other instances skip them) and makes one
/// attempt each. Returns the number of attempts.
///
/// # Errors
/// Database errors.
pub fn deliver_due(
    state: &Services,
    agent: &ureq::Agent,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<usize, Error> {
    let mut attempts = 0;
    while attempts < PER_PASS && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let Some(delivery) = claim(state, &[])? else {
            break;
        };
        attempt(state, agent, &delivery)?;
        attempts += 1;
    }
    Ok(attempts)
}

/// Starts the webhook loop of this instance, beside the scheduler's: every
/// `LEEKHA_SCHEDULER_INTERVAL_MS` it looks for due deliveries, and sends them on up to
/// [`LANES`] threads, one user's at a time each. A slow receiver holds up only its own
/// user's deliveries, never other users' nor the turns' deadlines.
///
/// # Errors
/// When the thread cannot be made.
pub fn worker(state: impl Into<Services>) -> Result<crate::background::Worker, String> {
    let state: Services = state.into();
    let interval = state.config.scheduler_interval;
    let agent = agent(state.config.webhook_allow_private);
    let sender = state.clone();
    crate::background::Worker::spawn_lanes(
        "leekha-webhooks",
        LANES,
        interval,
        move |busy| Ok(claim(&state, busy)?.map(|d| (d.user_id.clone(), d))),
        move |delivery| attempt(&sender, &agent, &delivery),
    )
}

/// The most deliveries one pass of [`deliver_due`] attempts.
const PER_PASS: usize = 20;

/// How many deliveries an instance's worker sends at once, one user's at a time each: a
/// receiver that never answers holds up its own user's deliveries for the agent's 10 s, not
/// everyone's.
pub const LANES: usize = 8;

/// Claims the next due delivery of a user not in `busy`, if any. One delivery is claimed
/// at a time, just before its attempt: a batch claimed at once could outlast its lease
/// behind slow receivers (each may take the agent's 10 s), and another instance would then
/// claim and send the rest a second time.
fn claim(state: &Services, busy: &[String]) -> Result<Option<Delivery>, Error> {
    let mut conn = state.db.conn()?;
    crate::db::write_transaction(&mut conn, |conn| {
        let now = db::now();
        let lease = now + chrono::Duration::from_std(LEASE).unwrap_or_default();
        let claim = outbox::Claim {
            now,
            lease,
            limit: 1,
            skip: busy,
        };
        Ok(outbox::claim_due(conn, &claim)?.pop())
    })
}

/// The last error of a delivery given up because its webhook is gone.
const REMOVED: &str = "the webhook was removed";

/// Removes the user's webhook, and gives up its pending deliveries at once: none will be
/// tried again, and the owner's list says so now rather than at each one's next due time.
///
/// # Errors
/// Database errors.
pub fn remove(conn: &mut AnyConnection, user_id: &str) -> Result<(), Error> {
    Ok(db::write_transaction(conn, |conn| {
        let now = db::now();
        outbox::set_webhook(conn, user_id, None, now)?;
        outbox::give_up_deliveries(conn, user_id, REMOVED, now).map(drop)
    })?)
}

/// One attempt at a claimed delivery, and its outcome recorded. No database connection is
/// held while the receiver answers: the lanes would otherwise take the pool's.
fn attempt(state: &Services, agent: &ureq::Agent, d: &Delivery) -> Result<(), Error> {
    // Removed since it was claimed (or the user is gone): no request is made, so none is
    // counted.
    let secret = outbox::webhook_secret(&mut *state.db.conn()?, &d.user_id)?.flatten();
    let Some(secret) = secret else {
        outbox::give_up_deliveries(&mut *state.db.conn()?, &d.user_id, REMOVED, db::now())?;
        state.metrics.webhook_delivery("failed");
        return Ok(());
    };
    // The status, and how long the receiver asked us to wait (`Retry-After`).
    // The address is judged by the agent's resolver as it connects, not here: a check here
    // would resolve the name a second time, and the answers may differ.
    let outcome: Result<(u16, Option<Duration>), String> = parse_url(&d.url).and_then(|url| {
        agent
            .post(url.as_str())
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, &sign(&secret, d.body.as_bytes()))
            .header("x-leekha-delivery", &d.id)
            .send(d.body.as_bytes())
            .map(|r| (r.status().as_u16(), retry_after(r.headers())))
            .map_err(|e| e.to_string())
    });
    let now = db::now();
    let n = d.attempts + 1;
    let (status, error) = match &outcome {
        Ok((s, _)) if (200..300).contains(s) => (Some(i32::from(*s)), None),
        Ok((s, _)) => (
            Some(i32::from(*s)),
            Some(format!("the receiver answered {s}")),
        ),
        Err(e) => (None, Some(e.chars().take(500).collect::<String>())),
    };
    let delivered = matches!(outcome, Ok((s, _)) if (200..300).contains(&s));
    let given_up_at = d.created_at + chrono::Duration::seconds(state.config.webhook_max_age_secs);
    let too_old = now >= given_up_at;
    // The receiver's `Retry-After` (at most an hour) when it gave one, else the backoff.
    let backoff = match outcome {
        Ok((_, Some(wait))) => wait,
        _ => state
            .config
            .webhook_retry_base
            .saturating_mul(1u32 << (n - 1).clamp(0, 20) as u32),
    };
    let backoff =
        chrono::Duration::from_std(backoff.min(Duration::from_secs(3600))).unwrap_or_default();
    let end = if delivered {
        AttemptEnd::Delivered
    } else if too_old {
        AttemptEnd::Failed
    } else {
        // The last try comes at the end of the window, not after it.
        AttemptEnd::RetryAt((now + backoff).min(given_up_at))
    };
    outbox::record_attempt(
        &mut *state.db.conn()?,
        &d.id,
        n,
        status,
        error.as_deref(),
        now,
        end,
    )?;
    state.metrics.webhook_delivery(if delivered {
        "delivered"
    } else if too_old {
        "failed"
    } else {
        "retry"
    });
    if delivered {
        tracing::debug!(delivery = %d.id, attempt = n, "webhook delivered");
    } else {
        tracing::info!(delivery = %d.id, attempt = n, status = ?status, error = ?error, "webhook attempt failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_urls_are_checked() {
        assert!(check_url("ftp://example.com/x", true).is_err());
        assert!(check_url("http://user:pw@127.0.0.1/x", true).is_err());
        assert!(
            check_url("http://127.0.0.1:9/hook", false)
                .unwrap_err()
                .contains("loopback")
        );
        assert!(check_url("http://127.0.0.1:9/hook", true).is_ok());
        assert!(check_url("not a url", true).is_err());
        assert!(
            check_url("http://127.0.0.1:0/hook", true)
                .unwrap_err()
                .contains("port")
        );
        // A name's addresses are the server's resolver's to know, not the caller's.
        let named = check_url("http://localhost:9/hook", false).unwrap_err();
        assert!(
            named.contains("localhost resolves to an address that is not public")
                && !named.contains("127.0.0.1")
                && !named.contains("::1"),
            "{named}"
        );
        let unknown = check_url("http://no-such-host.invalid/hook", false).unwrap_err();
        assert_eq!(unknown, "cannot resolve no-such-host.invalid");
    }

    #[test]
    fn address_literals_in_urls_are_judged_in_every_form() {
        for url in [
            "http://[::127.0.0.1]/hook",
            "http://[::ffff:0:7f00:1]/hook",
            "http://[::ffff:127.0.0.1]/hook",
            "http://[64:ff9b::7f00:1]/hook",
            "http://[64:ff9b::a9fe:a9fe]/hook",
            "http://[2002:7f00:1::]/hook",
            "http://[fec0::1]/hook",
            "http://192.0.0.1/hook",
            "http://2130706433/hook",
            "http://0x7f.1/hook",
            "https://[::1]:8443/hook",
        ] {
            let refused = check_url(url, false).expect_err(url);
            assert!(
                refused.contains("only public addresses"),
                "{url}: {refused}"
            );
            assert!(check_url(url, true).is_ok(), "{url} with private allowed");
        }
        for url in [
            "https://1.1.1.1/hook",
            "https://[2606:4700:4700::1111]/hook",
        ] {
            assert!(check_url(url, false).is_ok(), "{url}");
        }
    }

    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};

    /// Answers `addrs` for any name, and counts how often it was asked.
    #[derive(Debug)]
    struct Fixed {
        addrs: Vec<SocketAddr>,
        asked: Arc<AtomicUsize>,
    }

    impl Resolver for Fixed {
        fn resolve(
            &self,
            _: &ureq::http::Uri,
            _: &ureq::config::Config,
            _: ureq::unversioned::transport::NextTimeout,
        ) -> Result<ResolvedSocketAddrs, ureq::Error> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            let mut out = self.empty();
            for addr in &self.addrs {
                out.push(*addr);
            }
            Ok(out)
        }
    }

    /// A receiver on loopback that answers one request with 204 and hands back its head.
    fn receiver() -> (TcpListener, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, port)
    }

    fn serve_one(listener: TcpListener) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n");
            String::from_utf8_lossy(&head).to_lowercase()
        })
    }

    #[test]
    fn a_delivery_connects_to_the_address_its_resolver_judged() {
        let (listener, port) = receiver();
        let served = serve_one(listener);
        let asked = Arc::new(AtomicUsize::new(0));
        let resolver = Fixed {
            addrs: vec![SocketAddr::from(([127, 0, 0, 1], port))],
            asked: asked.clone(),
        };
        let agent = agent_with(GuardedResolver::over(resolver, true));
        let url = format!("http://receiver.invalid:{port}/hook");
        let reply = agent.post(&url).send(&b"{}"[..]).unwrap();
        assert_eq!(reply.status().as_u16(), 204);
        let head = served.join().unwrap();
        // The name was resolved once, and the connection went to that answer with the name
        // kept in the Host header.
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(
            head.contains(&format!("host: receiver.invalid:{port}")),
            "{head}"
        );
    }

    #[test]
    fn a_name_with_any_private_address_is_refused_before_connecting() {
        let (listener, port) = receiver();
        listener.set_nonblocking(true).unwrap();
        // Public when the URL was set, loopback among the answers now: a rebinding.
        let resolver = Fixed {
            addrs: vec![
                SocketAddr::from(([93, 184, 215, 14], port)),
                SocketAddr::from(([127, 0, 0, 1], port)),
            ],
            asked: Arc::default(),
        };
        let agent = agent_with(GuardedResolver::over(resolver, false));
        let refused = agent
            .post(&format!("http://rebinding.invalid:{port}/hook"))
            .send(&b"{}"[..])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("rebinding.invalid resolves to an address that is not public")
                && !refused.contains("127.0.0.1"),
            "what the resolver said stays unsaid: {refused}"
        );
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "nothing connected"
        );

        // Address literals go through the same judge, in their IPv6 disguises too.
        let agent = super::agent(false);
        for url in [
            format!("http://127.0.0.1:{port}/hook"),
            format!("http://[::ffff:127.0.0.1]:{port}/hook"),
            format!("http://[::127.0.0.1]:{port}/hook"),
        ] {
            let refused = agent.post(&url).send(&b"{}"[..]).unwrap_err().to_string();
            assert!(
                refused.contains("only public addresses"),
                "{url}: {refused}"
            );
        }
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "nothing connected"
        );
    }

    #[test]
    fn signatures_are_hmac_sha256_of_the_body() {
        // RFC 4231 test case 2.
        let sig = sign("Jefe", b"what do ya want for nothing?");
        assert_eq!(
            sig,
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
