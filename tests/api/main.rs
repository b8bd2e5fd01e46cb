//! API tests: the real actix-web app against a real database, one database per test.
//!
//! Backend: SQLite temp files by default; PostgreSQL when `LEEKHA_TEST_DATABASE_URL` names a
//! server (`postgres://postgres@127.0.0.1:5432/postgres`), each test on its own database
//! cloned from a migrated template.

mod accounts;
mod admin;
mod away;
mod bots;
mod chat;
mod common;
mod connections;
mod conventions;
mod deadlines;
mod examples;
mod foundation;
mod games;
mod group_commit;
mod host;
mod load;
mod metrics;
mod push;
mod races;
mod ratings;
mod shutdown;
mod social;
mod spectators;
mod sqlite_writer;
mod streams;
mod view_probes;
mod web;
