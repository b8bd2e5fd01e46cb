//! The wake-up listener's connection settings, read from the pool's `DATABASE_URL`.
//!
//! The pool connects through libpq, the listener ([`super::listen`]) through tokio-postgres,
//! which knows libpq's `sslmode` only as `disable`, `prefer` and `require`, and none of its
//! certificate parameters. Handing it the URL as it is left a listener that either could not
//! start (`sslrootcert`, `sslcert`, …: "invalid connection string") or, with `NoTls`, never
//! connected to a server that demands TLS, so that instances stopped waking each other.
//! Here the TLS parameters are taken out of the URL and honoured as libpq honours them, with
//! rustls on ring like every other TLS connection of the server:
//!
//! | `sslmode` | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `allow`, `prefer` (libpq's default) | when the server offers it | not checked |
//! | `require` | always | not checked; checked as by `verify-ca` when `sslrootcert` is given |
//! | `verify-ca` | always | signed by a root of `sslrootcert` |
//! | `verify-full` | always | signed by a root of `sslrootcert`, and naming the host |
//!
//! `sslrootcert` is a PEM file of roots, or `system` for the public web roots; without it the
//! verifying modes read `~/.postgresql/root.crt`, as libpq does. `sslcert` and `sslkey` give a
//! client certificate. An encrypted key (`sslpassword`) and revocation lists (`sslcrl`,
//! `sslcrldir`) cannot be honoured here, so the server refuses to start with them rather
//! than connect with less than they ask; the parameters that change nothing for rustls
//! (`sslcompression`, `sslsni`, the protocol bounds: rustls speaks TLS 1.2 and 1.3 only,
//! which is libpq's default range) are dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How the server's certificate is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Encryption only (`prefer`, `require`): anyone's certificate will do.
    Nothing,
    /// Signed by one of the roots (`verify-ca`).
    Chain,
    /// Signed by one of the roots and naming the host (`verify-full`).
    ChainAndName,
}

/// Where the roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    /// The public web roots (`sslrootcert=system`).
    System,
    /// A PEM file.
    File(PathBuf),
}

/// The TLS parameters of a `DATABASE_URL`, taken out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tls {
    mode: SslMode,
    check: Check,
    roots: Option<Roots>,
    client: Option<(PathBuf, PathBuf)>,
}

/// The listener's connection: the tokio-postgres settings and the TLS connector.
pub type Target = (tokio_postgres::Config, MakeRustlsConnect);

/// The listener's connection to the database of `database_url`, the pool's URL.
///
/// # Errors
/// A sentence naming `DATABASE_URL` and what in it cannot be honoured.
pub fn target(database_url: &str) -> Result<Target, String> {
    let (rest, tls) = split(database_url, home().as_deref())?;
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e| format!("DATABASE_URL: the wake-up listener cannot read it: {e}"))?;
    config.ssl_mode(tls.mode);
    let connector = connector(&tls).map_err(|e| format!("DATABASE_URL: {e}"))?;
    Ok((config, connector))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// Separates the TLS parameters from the rest of the URL, which tokio-postgres reads.
///
/// The URL is cut by hand rather than read by a URL parser and written again: libpq's URIs
/// are not quite URLs (`host1:5432,host2:5432` is a list of hosts, and a `+` in a value is a
/// plus, where a URL library writes a space as `+`), and what stays must reach
/// tokio-postgres exactly as it was given.
fn split(database_url: &str, home: Option<&Path>) -> Result<(String, Tls), String> {
    let (base, query) = database_url.split_once('?').unwrap_or((database_url, ""));
    let mut kept: Vec<&str> = Vec::new();
    let (mut mode, mut root, mut cert, mut key) = (None, None, None, None);
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let decoded = percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| format!("DATABASE_URL: the value of {name} is not UTF-8"))?
            .into_owned();
        match name {
            "sslmode" => mode = Some(decoded),
            "sslrootcert" => root = Some(decoded),
            "sslcert" => cert = Some(PathBuf::from(decoded)),
            "sslkey" => key = Some(PathBuf::from(decoded)),
            "sslpassword" => {
                return Err(
                    "DATABASE_URL: sslpassword (an encrypted client key) is not \
                     supported by the wake-up listener; give sslkey a key without a \
                     passphrase (openssl pkey -in key.pem -out plain.pem)"
                        .into(),
                );
            }
            "sslcrl" | "sslcrldir" => {
                return Err(format!(
                    "DATABASE_URL: {name} (certificate revocation) is not supported by the \
                     wake-up listener"
                ));
            }
            "gssencmode" if decoded == "require" => {
                return Err(
                    "DATABASE_URL: gssencmode=require (GSSAPI encryption) is not \
                     supported by the wake-up listener"
                        .into(),
                );
            }
            // Nothing to honour for rustls, or for a listener that speaks no GSSAPI.
            "sslcompression"
            | "sslsni"
            | "ssl_min_protocol_version"
            | "ssl_max_protocol_version"
            | "sslcertmode"
            | "gssencmode" => {}
            _ => kept.push(part),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let (mode, check) = match mode.as_deref().unwrap_or("prefer") {
        "disable" => (SslMode::Disable, Check::Nothing),
        "allow" | "prefer" => (SslMode::Prefer, Check::Nothing),
        // libpq: "if a root CA file exists, the behavior of sslmode=require will be the
        // same as that of verify-ca".
        "require" if root.is_some() => (SslMode::Require, Check::Chain),
        "require" => (SslMode::Require, Check::Nothing),
        "verify-ca" => (SslMode::Require, Check::Chain),
        "verify-full" => (SslMode::Require, Check::ChainAndName),
        other => {
            return Err(format!(
                "DATABASE_URL: sslmode={other} is none of disable, allow, prefer, require, \
                 verify-ca, verify-full"
            ));
        }
    };
    let roots = match root.as_deref() {
        Some("system") => Some(Roots::System),
        Some(path) => Some(Roots::File(PathBuf::from(path))),
        None if check == Check::Nothing => None,
        None => Some(Roots::File(
            home.ok_or(
                "DATABASE_URL: a verifying sslmode needs sslrootcert (no home folder \
                        to find ~/.postgresql/root.crt in)",
            )?
            .join(".postgresql/root.crt"),
        )),
    };
    let client = match (cert, key) {
        // libpq reads no certificate for a connection without TLS.
        _ if mode == SslMode::Disable => None,
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => return Err("DATABASE_URL: sslcert and sslkey go together".into()),
    };
    let tls = Tls {
        mode,
        check,
        roots: if check == Check::Nothing || mode == SslMode::Disable {
            None
        } else {
            roots
        },
        client,
    };
    Ok((rest, tls))
}

/// The rustls connector that does what `tls` asks.
fn connector(tls: &Tls) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let algorithms = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = match (&tls.roots, tls.check) {
        (_, Check::Nothing) | (None, _) => Arc::new(Lenient {
            chain: None,
            algorithms,
        }),
        (Some(roots), check) => {
            let store = Arc::new(root_store(roots)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(store, provider)
                .build()
                .map_err(|e| format!("the roots of sslrootcert: {e}"))?;
            if check == Check::Chain {
                Arc::new(Lenient {
                    chain: Some(webpki),
                    algorithms,
                })
            } else {
                webpki
            }
        }
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match &tls.client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslcert {}: {e}", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("sslkey {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("sslcert and sslkey: {e}"))?
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

fn root_store(roots: &Roots) -> Result<RootCertStore, String> {
    match roots {
        Roots::System => Ok(RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        }),
        Roots::File(path) => {
            let name = |e: &dyn std::fmt::Display| format!("sslrootcert {}: {e}", path.display());
            let mut store = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| name(&e))? {
                store
                    .add(cert.map_err(|e| name(&e))?)
                    .map_err(|e| name(&e))?;
            }
            if store.is_empty() {
                return Err(name(&"no PEM certificate in it"));
            }
            Ok(store)
        }
    }
}

/// The checks libpq makes that rustls's own verifier does not offer: none at all (`prefer`,
/// `require` without roots: the connection is encrypted and whoever answers is believed),
/// or the chain without the name (`verify-ca`). The handshake's signatures are checked
/// against the certificate shown either way.
#[derive(Debug)]
struct Lenient {
    /// The chain's judge (`verify-ca`), or none.
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls_of(url: &str) -> Result<(String, Tls), String> {
        split(url, Some(Path::new("/home/db")))
    }

    #[test]
    fn the_tls_parameters_leave_the_url_and_keep_libpqs_meaning() {
        let (rest, tls) = tls_of("postgres://u:p@db:5432/leekha").unwrap();
        assert_eq!(rest, "postgres://u:p@db:5432/leekha");
        assert_eq!((tls.mode, tls.check), (SslMode::Prefer, Check::Nothing));

        let (rest, tls) =
            tls_of("postgres://u@db/leekha?sslmode=require&application_name=x&sslsni=1").unwrap();
        assert_eq!(rest, "postgres://u@db/leekha?application_name=x");
        assert_eq!((tls.mode, tls.check), (SslMode::Require, Check::Nothing));
        assert_eq!(tls.roots, None);

        let (_, tls) = tls_of("postgres://db/l?sslmode=require&sslrootcert=/ca.pem").unwrap();
        assert_eq!(tls.check, Check::Chain);
        assert_eq!(tls.roots, Some(Roots::File("/ca.pem".into())));

        let (rest, tls) = tls_of("postgres://db/l?sslmode=verify-full").unwrap();
        assert_eq!(rest, "postgres://db/l");
        assert_eq!(
            (tls.mode, tls.check),
            (SslMode::Require, Check::ChainAndName)
        );
        assert_eq!(
            tls.roots,
            Some(Roots::File("/home/db/.postgresql/root.crt".into()))
        );
        let (_, tls) = tls_of("postgres://db/l?sslmode=verify-ca&sslrootcert=system").unwrap();
        assert_eq!((tls.check, tls.roots), (Check::Chain, Some(Roots::System)));

        let (_, tls) = tls_of("postgres://db/l?sslcert=/c.pem&sslkey=/k.pem").unwrap();
        assert_eq!(tls.client, Some(("/c.pem".into(), "/k.pem".into())));
        let (_, tls) = tls_of("postgres://db/l?sslmode=disable").unwrap();
        assert_eq!(tls.mode, SslMode::Disable);
        let (_, tls) =
            tls_of("postgres://db/l?sslmode=disable&sslcert=/no.pem&sslkey=/no.key").unwrap();
        assert_eq!((tls.client, tls.roots), (None, None));

        // What stays reaches tokio-postgres as it was written: an encoded space stays
        // encoded (a URL library would write it as `+`), and a list of hosts with ports
        // stays a list.
        let (rest, _) =
            tls_of("postgres://u@db/l?sslmode=require&options=-c%20statement_timeout%3D0").unwrap();
        assert_eq!(rest, "postgres://u@db/l?options=-c%20statement_timeout%3D0");
        let (rest, _) =
            tls_of("postgres://u@h1:5432,h2:5433/l?gssencmode=disable&sslmode=prefer").unwrap();
        assert_eq!(rest, "postgres://u@h1:5432,h2:5433/l");
        let (config, _) = target(&format!("{rest}?options=-c%20statement_timeout%3D0")).unwrap();
        assert_eq!(config.get_options(), Some("-c statement_timeout=0"));
        assert_eq!(config.get_ports(), [5432, 5433]);
        let (_, tls) =
            tls_of("postgres://db/l?sslrootcert=%2Fetc%2Fca%20x.pem&sslmode=verify-ca").unwrap();
        assert_eq!(tls.roots, Some(Roots::File("/etc/ca x.pem".into())));
    }

    #[test]
    fn what_the_listener_cannot_honour_is_refused_naming_database_url() {
        for url in [
            "postgres://db/l?sslpassword=secret&sslkey=/k.pem&sslcert=/c.pem",
            "postgres://db/l?sslcrl=/crl.pem",
            "postgres://db/l?sslmode=verify",
            "postgres://db/l?sslcert=/c.pem",
            "postgres://db/l?gssencmode=require",
        ] {
            let e = tls_of(url).unwrap_err();
            assert!(e.starts_with("DATABASE_URL"), "{url}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
        let e = target("postgres://db/l?sslmode=verify-full&sslrootcert=/nonexistent.pem")
            .err()
            .unwrap();
        assert!(
            e.contains("DATABASE_URL") && e.contains("/nonexistent.pem"),
            "{e}"
        );
        let e = target("postgres://db/l?frobnicate=1").err().unwrap();
        assert!(e.starts_with("DATABASE_URL"), "{e}");
    }

    #[test]
    fn every_mode_makes_a_connector() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/push");
        let ca = format!("{dir}/apns_test_ca.pem");
        for url in [
            "postgres://db/l".to_owned(),
            "postgres://db/l?sslmode=require".to_owned(),
            format!("postgres://db/l?sslmode=verify-ca&sslrootcert={ca}"),
            format!("postgres://db/l?sslmode=verify-full&sslrootcert={ca}"),
            "postgres://db/l?sslmode=verify-full&sslrootcert=system".to_owned(),
            format!(
                "postgres://db/l?sslmode=require&sslcert={dir}/apns_test_server.pem\
                 &sslkey={dir}/apns_test_server.key"
            ),
        ] {
            assert!(target(&url).is_ok(), "{url}");
        }
    }
}
