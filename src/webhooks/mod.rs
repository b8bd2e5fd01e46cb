//! Webhook delivery: each notification of a user with a webhook is POSTed as JSON, signed
//! with HMAC-SHA256 of the body (`X-Leekha-Signature: sha256=<hex>`), and retried with
//! exponential backoff until it succeeds or grows too old. Every attempt is recorded.

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::app::AppState;
use crate::db::outbox::{self, AttemptEnd, Delivery};
use crate::db::{self, AnyConnection};
use crate::error::Error;

mod guard;

pub use guard::{is_public, refusal};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Leekha-Signature";

/// The HTTP client deliveries use: bounded time, no redirects to elsewhere.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent("leekha-webhooks/1")
        .build()
        .into()
}

/// `sha256=<hex of HMAC-SHA256(secret, body)>`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Checks a webhook URL: http(s), a host, no credentials, and — unless allowed — only public
/// addresses ([`refusal`]): every address the host resolves to. Resolves the host
/// (blocking).
///
/// # Errors
/// A sentence saying what is wrong.
pub fn check_url(raw: &str, allow_private: bool) -> Result<url::Url, String> {
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
    let port = url.port_or_known_default().unwrap_or(443);
    // An address literal is judged as parsed (the URL parser has already normalised forms
    // such as `http://2130706433/`); only a name is resolved.
    let addrs: Vec<IpAddr> = match url.host().ok_or("the URL has no host")? {
        url::Host::Ipv4(ip) => vec![ip.into()],
        url::Host::Ipv6(ip) => vec![ip.into()],
        url::Host::Domain(name) => (name, port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {name}: {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    let host = url.host_str().unwrap_or_default();
    if addrs.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if !allow_private {
        for ip in &addrs {
            if let Some(why) = refusal(*ip) {
                return Err(format!(
                    "{host} resolves to {ip}, {why}: only public addresses are allowed"
                ));
            }
        }
    }
    Ok(url)
}

/// How long a claimed delivery is reserved for the instance that claimed it.
const LEASE: Duration = Duration::from_secs(60);

/// Claims up to 20 due deliveries (a lease, so other instances skip them) and makes one
/// attempt each. Returns the number of attempts.
///
/// # Errors
/// Database errors.
pub fn deliver_due(state: &AppState, agent: &ureq::Agent) -> Result<usize, Error> {
    let mut conn = state.db.conn()?;
    let claimed: Vec<Delivery> = crate::db::write_transaction(&mut conn, claim)?;
    let mut attempts = 0;
    for delivery in claimed {
        attempt(state, &mut conn, agent, &delivery)?;
        attempts += 1;
    }
    Ok(attempts)
}

fn claim(conn: &mut AnyConnection) -> Result<Vec<Delivery>, Error> {
    let now = db::now();
    let lease = now + chrono::Duration::from_std(LEASE).unwrap_or_default();
    Ok(outbox::claim_due(conn, now, lease, 20)?)
}

/// Why an attempt did not reach the receiver.
enum Refused {
    /// The user removed the webhook since: the delivery is given up at once.
    Removed,
    /// Anything else: retried until too old.
    Other(String),
}

fn attempt(
    state: &AppState,
    conn: &mut AnyConnection,
    agent: &ureq::Agent,
    d: &Delivery,
) -> Result<(), Error> {
    let outcome: Result<u16, Refused> = match outbox::webhook_secret(conn, &d.user_id)?.flatten() {
        None => Err(Refused::Removed),
        Some(secret) => match check_url(&d.url, state.config.webhook_allow_private) {
            Err(e) => Err(Refused::Other(e)),
            Ok(_) => agent
                .post(&d.url)
                .header("content-type", "application/json")
                .header(SIGNATURE_HEADER, &sign(&secret, d.body.as_bytes()))
                .header("x-leekha-delivery", &d.id)
                .send(d.body.as_bytes())
                .map(|r| r.status().as_u16())
                .map_err(|e| Refused::Other(e.to_string())),
        },
    };
    let now = db::now();
    let n = d.attempts + 1;
    let (status, error) = match &outcome {
        Ok(s) => (Some(i32::from(*s)), None),
        Err(Refused::Removed) => (None, Some("the webhook was removed".to_owned())),
        Err(Refused::Other(e)) => (None, Some(e.chars().take(500).collect::<String>())),
    };
    let delivered = matches!(outcome, Ok(s) if (200..300).contains(&s));
    let removed = matches!(&outcome, Err(Refused::Removed));
    let too_old =
        now >= d.created_at + chrono::Duration::seconds(state.config.webhook_max_age_secs);
    let backoff = state
        .config
        .webhook_retry_base
        .saturating_mul(1u32 << (n - 1).clamp(0, 20) as u32);
    let backoff =
        chrono::Duration::from_std(backoff.min(Duration::from_secs(3600))).unwrap_or_default();
    let end = if delivered {
        AttemptEnd::Delivered
    } else if too_old || removed {
        AttemptEnd::Failed
    } else {
        AttemptEnd::RetryAt(now + backoff)
    };
    outbox::record_attempt(conn, &d.id, n, status, error.as_deref(), now, end)?;
    state.metrics.webhook_delivery(if delivered {
        "delivered"
    } else if too_old || removed {
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
