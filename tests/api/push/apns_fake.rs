//! APNs on loopback: HTTP/2 over TLS (ALPN `h2` only, the certificate of
//! `apns_test_server.pem` for `127.0.0.1`, issued by `apns_test_ca.pem`); every request is
//! recorded with its protocol version and connection, and answered by the test's handler.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::fake::{Answer, Request};

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Method, path, headers (lowercase) and body.
    pub request: Request,
    /// The HTTP version the request came in.
    pub version: http::Version,
    /// The protocol the TLS handshake agreed on.
    pub alpn: Option<Vec<u8>>,
    /// Which connection it came on, counting from 0.
    pub connection: usize,
}

type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// A running fake.
pub struct ApnsFake {
    /// `https://127.0.0.1:<port>`.
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

/// The extra root the server trusts for the fake (`LEEKHA_APNS_CA_FILE`).
pub fn ca_file() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/push/apns_test_ca.pem")
}

impl ApnsFake {
    /// Starts a fake answering with `handler`, on its own thread and runtime.
    pub fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> Self {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/push");
        let certs = CertificateDer::pem_file_iter(dir.join("apns_test_server.pem"))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(dir.join("apns_test_server.key")).unwrap();
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
        tls.alpn_protocols = vec![b"h2".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("https://{}", listener.local_addr().unwrap());
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let log = received.clone();
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let connections = Arc::new(AtomicUsize::new(0));
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        return;
                    };
                    let connection = connections.fetch_add(1, Ordering::SeqCst);
                    let (acceptor, handler, log) = (acceptor.clone(), handler.clone(), log.clone());
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                        let Ok(mut h2) = h2::server::handshake(tls).await else {
                            return;
                        };
                        while let Some(Ok((request, mut respond))) = h2.accept().await {
                            let (handler, log, alpn) = (handler.clone(), log.clone(), alpn.clone());
                            tokio::spawn(async move {
                                let (parts, mut body) = request.into_parts();
                                let mut data = Vec::new();
                                while let Some(Ok(chunk)) = body.data().await {
                                    let _ = body.flow_control().release_capacity(chunk.len());
                                    data.extend_from_slice(&chunk);
                                }
                                let request = Request {
                                    method: parts.method.to_string(),
                                    path: parts
                                        .uri
                                        .path_and_query()
                                        .map_or_else(String::new, ToString::to_string),
                                    headers: parts
                                        .headers
                                        .iter()
                                        .map(|(k, v)| {
                                            (
                                                k.as_str().to_owned(),
                                                v.to_str().unwrap_or_default().to_owned(),
                                            )
                                        })
                                        .collect(),
                                    body: data,
                                    at: Instant::now(),
                                    wall: chrono::Utc::now(),
                                };
                                let (status, extra, answer) = handler(&request);
                                log.lock().unwrap().push(Received {
                                    request,
                                    version: parts.version,
                                    alpn,
                                    connection,
                                });
                                let mut head = http::Response::builder().status(status);
                                for (k, v) in extra {
                                    head = head.header(k, v);
                                }
                                let Ok(mut stream) = respond
                                    .send_response(head.body(()).unwrap(), answer.is_empty())
                                else {
                                    return;
                                };
                                if !answer.is_empty() {
                                    let _ = stream.send_data(answer.into(), true);
                                }
                            });
                        }
                    });
                }
            });
        });
        Self { url, received }
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}
