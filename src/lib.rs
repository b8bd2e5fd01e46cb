//! The Leekha server: asynchronous play of Leekha (ليخة), the Levantine avoid-the-points card
//! game for four, over a REST API.
//!
//! Layers, each depending only on those below it:
//!
//! - [`cli`]: the `leekha` command line (thin `main.rs` calls it);
//! - [`http`]: actix-web handlers and views: extract, authorize, run one transaction, answer;
//! - [`db`]: diesel on PostgreSQL or SQLite through one connection type;
//! - [`rules`]: the pure game rules (no I/O, no clock, no global randomness).
//!
//! Beside them, [`metrics`] holds the instance's Prometheus counters (served by [`http`]).
#![forbid(unsafe_code)]

pub mod accounts;
pub mod admin;
pub mod app;
pub mod audit;
pub mod auth;
pub mod background;
pub mod bots;
pub mod chat;
pub mod cli;
pub mod config;
pub mod db;
pub mod error;
pub mod games;
pub mod http;
pub mod metrics;
pub mod notifications;
pub mod push;
pub mod ratings;
pub mod rules;
pub mod scheduler;
pub mod secret;
pub mod services;
pub mod social;
pub mod telemetry;
pub mod text;
pub mod webhooks;
