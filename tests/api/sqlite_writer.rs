//! SQLite writes go through one first-come, first-served path: under a steady stream of
//! write transactions no writer waits past the database timeout, because they queue in
//! arrival order instead of racing on SQLite's retry timer.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use diesel::RunQueryDsl;
use leekha::db::{self, Db};

use crate::common::{TestDb, pg_base_url};

#[test]
fn sqlite_writers_take_turns_and_none_times_out() {
    if pg_base_url().is_some() {
        // PostgreSQL queues row locks itself; the gate exists for SQLite.
        return;
    }
    let test_db = TestDb::migrated();
    let mut config = test_db.config();
    // SQLite's own busy timeout would fail the losers of its retry races within this; the
    // gate queues them instead.
    config.db_timeout = Duration::from_millis(150);
    config.pool_size = 8;
    let database = Db::open(&config);
    const WRITERS: usize = 8;
    const EACH: usize = 60;
    let start = Arc::new(Barrier::new(WRITERS));
    let threads: Vec<_> = (0..WRITERS)
        .map(|_| {
            let database = database.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut conn = database.conn().expect("a connection");
                start.wait();
                let mut failures = 0;
                let mut longest = Duration::ZERO;
                for _ in 0..EACH {
                    let asked = Instant::now();
                    let done = db::write_transaction(&mut conn, |conn| {
                        let waited = asked.elapsed();
                        diesel::sql_query(
                            "UPDATE server_settings SET value = value WHERE key = 'none'",
                        )
                        .execute(conn)?;
                        // Work inside the lock, so that writers do contend.
                        std::thread::sleep(Duration::from_millis(2));
                        Ok::<_, diesel::result::Error>(waited)
                    });
                    match done {
                        Ok(waited) => longest = longest.max(waited),
                        Err(_) => failures += 1,
                    }
                }
                (failures, longest)
            })
        })
        .collect();
    let mut longest = Duration::ZERO;
    for thread in threads {
        let (failures, waited) = thread.join().expect("a writer thread");
        assert_eq!(failures, 0, "a writer timed out waiting for the others");
        longest = longest.max(waited);
    }
    // Seven others ahead of a writer, 2 ms each: a fair queue keeps every wait far below
    // the timeout (a generous bound, for a loaded machine).
    assert!(
        longest < Duration::from_secs(3),
        "a writer waited {longest:?}"
    );
}
