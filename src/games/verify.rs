//! `leekha verify`: every game replayed from its seed and action log must equal its stored
//! snapshot, and its logs must be contiguous.

use crate::db::AnyConnection;
use crate::db::games as store;
use crate::error::Error;
use crate::rules::{Action, Game, RuleOptions, Seed, replay};

/// A game whose stored state disagrees with its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The game.
    pub game_id: String,
    /// What disagrees.
    pub reason: String,
}

/// Checks one game; `Ok(None)` when it is consistent.
///
/// # Errors
/// Database errors.
pub fn verify_game(conn: &mut AnyConnection, id: &str) -> Result<Option<String>, Error> {
    let Some(row) = store::find(conn, id)? else {
        return Ok(Some("game vanished".into()));
    };
    let Some(seed_hex) = &row.seed else {
        return Ok(None);
    };
    let Some(seed) = Seed::from_hex(seed_hex) else {
        return Ok(Some("the seed is not 64 hex digits".into()));
    };
    let rules: RuleOptions = match serde_json::from_str(&row.rules) {
        Ok(r) => r,
        Err(e) => return Ok(Some(format!("the rules do not parse: {e}"))),
    };
    let action_rows = store::actions(conn, id)?;
    let action_seqs = action_rows.iter().map(|a| a.seq);
    if let Some(problem) = log_problem("action", action_seqs, row.action_count) {
        return Ok(Some(problem));
    }
    let mut actions = Vec::with_capacity(action_rows.len());
    for a in &action_rows {
        match serde_json::from_str::<Action>(&a.action) {
            Ok(action) => actions.push(action),
            Err(e) => return Ok(Some(format!("action {} does not parse: {e}", a.seq))),
        }
    }
    let events = store::all_events(conn, id)?;
    if let Some(problem) = log_problem("event", events.iter().map(|e| e.seq), row.event_count) {
        return Ok(Some(problem));
    }
    let replayed = match replay(rules, *seed.bytes(), &actions) {
        Ok(g) => g,
        Err(e) => return Ok(Some(format!("replay fails: {e:?}"))),
    };
    let stored: Game = match row.state.as_deref().map(serde_json::from_str) {
        Some(Ok(g)) => g,
        Some(Err(e)) => return Ok(Some(format!("the stored state does not parse: {e}"))),
        None => return Ok(Some("a started game has no stored state".into())),
    };
    if stored != replayed {
        return Ok(Some(
            "the stored state differs from the replay of seed and actions".into(),
        ));
    }
    let finished = row.status == crate::games::GameStatus::Finished;
    if finished != replayed.is_finished() {
        return Ok(Some(format!(
            "status is {} but the rules say finished = {}",
            row.status,
            replayed.is_finished()
        )));
    }
    Ok(None)
}

/// What is wrong with a log (of `what`: `action`, `event`) whose entries hold `seqs`, in
/// order, and whose game counts `count` entries: they must be numbered 1, 2, … up to `count`.
fn log_problem(what: &str, seqs: impl Iterator<Item = i64>, count: i64) -> Option<String> {
    let mut held = 0;
    for (i, seq) in (1..).zip(seqs) {
        if seq != i {
            return Some(format!("{what} log has a gap: #{i} holds seq {seq}"));
        }
        held = i;
    }
    (held != count).then(|| format!("{what}_count is {count} but the log holds {held}"))
}

/// Checks every started game, then that the stored ratings replay from the rated games in
/// order ([`crate::ratings::verify`]); returns how many games were checked and the
/// mismatches (a rating's names `rating:<user>:<mode>`).
///
/// # Errors
/// Database errors.
pub fn verify_all(conn: &mut AnyConnection) -> Result<(usize, Vec<Mismatch>), Error> {
    let ids = store::started_ids(conn)?;
    let mut mismatches = Vec::new();
    for id in &ids {
        // A game's row, actions and events are written together: read together, so that a
        // game played meanwhile is seen before or after a change, never halfway.
        if let Some(reason) = crate::db::snapshot(conn, |conn| verify_game(conn, id))? {
            mismatches.push(Mismatch {
                game_id: id.clone(),
                reason,
            });
        }
    }
    let (_, discrepancies) =
        crate::db::snapshot(conn, |conn| crate::ratings::verify(conn, rated_game))?;
    mismatches.extend(discrepancies.into_iter().map(|d| Mismatch {
        game_id: d.subject,
        reason: d.reason,
    }));
    Ok((ids.len(), mismatches))
}

/// A finished rated game as the rating replay needs it; `None` when `id` is not one.
fn rated_game(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<crate::ratings::RatedGame>, Error> {
    let Some(row) = store::find(conn, id)? else {
        return Ok(None);
    };
    if !row.rated || row.status != crate::games::GameStatus::Finished {
        return Ok(None);
    }
    let (Some(Ok(result)), Ok(rules)) = (
        row.result.as_deref().map(serde_json::from_str),
        serde_json::from_str::<RuleOptions>(&row.rules),
    ) else {
        return Ok(None);
    };
    let players = store::seats(conn, id)?
        .into_iter()
        .filter_map(|s| Some((crate::rules::Seat::new(s.seat as u8)?, s.user_id?)))
        .collect();
    Ok(Some(crate::ratings::RatedGame {
        mode: rules.mode,
        result,
        players,
    }))
}

#[cfg(test)]
mod tests {
    use super::log_problem;

    #[test]
    fn a_log_is_numbered_from_one_without_gaps_up_to_its_count() {
        assert_eq!(log_problem("event", [1, 2, 3].into_iter(), 3), None);
        assert_eq!(log_problem("event", [].into_iter(), 0), None);
        assert_eq!(
            log_problem("event", [1, 3].into_iter(), 2).as_deref(),
            Some("event log has a gap: #2 holds seq 3")
        );
        assert_eq!(
            log_problem("action", [1, 2].into_iter(), 3).as_deref(),
            Some("action_count is 3 but the log holds 2")
        );
    }
}
