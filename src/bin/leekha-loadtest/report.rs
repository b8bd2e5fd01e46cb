//! What a run measured, and how it is shown: a table for people, JSON for scripts.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

/// What happened.
#[derive(Debug, Default, Clone)]
pub struct LoadReport {
    /// Actions answered 200.
    pub actions_ok: u64,
    /// Requests that failed (status or transport), by kind.
    pub errors: BTreeMap<String, u64>,
    /// Latencies of the action requests (ms).
    pub action_ms: Vec<f64>,
    /// Latencies of every request (ms).
    pub request_ms: Vec<f64>,
    /// Games finished.
    pub games_finished: u64,
    /// Wall time.
    pub elapsed: Duration,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

impl LoadReport {
    /// Adds another client's (or thread's) counts and latencies to these.
    pub fn merge(&mut self, other: LoadReport) {
        self.actions_ok += other.actions_ok;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.action_ms.extend(other.action_ms);
        self.request_ms.extend(other.request_ms);
        self.games_finished += other.games_finished;
    }

    /// Actions per second.
    pub fn actions_per_sec(&self) -> f64 {
        self.actions_ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// (p50, p95, p99, max) of action latency in ms.
    pub fn action_percentiles(&self) -> (f64, f64, f64, f64) {
        let mut v = self.action_ms.clone();
        v.sort_by(f64::total_cmp);
        (
            percentile(&v, 50.0),
            percentile(&v, 95.0),
            percentile(&v, 99.0),
            v.last().copied().unwrap_or(0.0),
        )
    }

    /// The report as JSON (for scripts).
    pub fn to_json(&self) -> Value {
        let (p50, p95, p99, max) = self.action_percentiles();
        json!({
            "actions_ok": self.actions_ok,
            "actions_per_sec": self.actions_per_sec(),
            "requests": self.request_ms.len(),
            "requests_per_sec": self.request_ms.len() as f64 / self.elapsed.as_secs_f64().max(1e-9),
            "errors": self.errors,
            "games_finished": self.games_finished,
            "latency_ms": {"p50": p50, "p95": p95, "p99": p99, "max": max},
            "elapsed_s": self.elapsed.as_secs_f64(),
        })
    }
}

impl std::fmt::Display for LoadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p50, p95, p99, max) = self.action_percentiles();
        let errors: u64 = self.errors.values().sum();
        writeln!(f, "elapsed          {:.1} s", self.elapsed.as_secs_f64())?;
        writeln!(
            f,
            "actions          {} ok, {:.1} actions/s",
            self.actions_ok,
            self.actions_per_sec()
        )?;
        writeln!(
            f,
            "requests         {} ({:.1}/s, views + actions)",
            self.request_ms.len(),
            self.request_ms.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
        )?;
        writeln!(
            f,
            "action latency   p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"
        )?;
        writeln!(f, "games finished   {}", self.games_finished)?;
        write!(f, "errors           {errors}")?;
        for (k, v) in &self.errors {
            write!(f, " [{k}: {v}]")?;
        }
        Ok(())
    }
}
