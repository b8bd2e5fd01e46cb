//! The load generator (the `leekha-loadtest` binary) against the real server binary: it
//! plays real games in both view modes without a single error, and `leekha verify` accepts
//! what it played.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, Server, TestDb};

#[test]
fn the_load_generator_plays_real_games_without_errors_in_both_view_modes() {
    let db = TestDb::migrated();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_leekha"))
            .arg("serve")
            .env("DATABASE_URL", db.url.expose())
            .env("LEEKHA_BIND", format!("127.0.0.1:{port}"))
            .env("LEEKHA_JWT_SECRET", common::TEST_SECRET)
            .env("LEEKHA_AUTH_RATE_PER_MINUTE", "100000")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    while ureq::get(&format!("{url}/readyz")).call().is_err() {
        assert!(server.0.try_wait().unwrap().is_none(), "the server exited");
        assert!(started.elapsed() < Duration::from_secs(30), "never ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    for views in ["track", "fetch"] {
        let out = Command::new(env!("CARGO_BIN_EXE_leekha-loadtest"))
            .args(["--url", &url, "--views", views, "--json"])
            .args(["--clients", "2", "--duration", "2", "--timeout", "10"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{views}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{views}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        let errors = &report["errors"];
        assert_eq!(
            errors.as_object().map(|e| e.len()),
            Some(0),
            "{views}: {errors}"
        );
        let actions = report["actions_ok"].as_f64().unwrap();
        let requests = report["requests"].as_f64().unwrap();
        assert!(actions >= 20.0, "{views}: only {actions} actions");
        match views {
            // Views only at a round's start and after the exchange.
            "track" => assert!(requests < 1.3 * actions, "{requests} for {actions}"),
            // One view before every action.
            _ => assert!(requests >= 1.9 * actions, "{requests} for {actions}"),
        }
    }
    drop(server);
    let verify = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("verify")
        .env("DATABASE_URL", db.url.expose())
        .env("LEEKHA_JWT_SECRET", common::TEST_SECRET)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}
