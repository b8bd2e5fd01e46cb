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
    for (i, a) in action_rows.iter().enumerate() {
        if a.seq != i as i64 + 1 {
            return Ok(Some(format!(
                "action log has a gap: #{} holds seq {}",
                i + 1,
                a.seq
            )));
        }
    }
    if action_rows.len() as i64 != row.action_count {
        return Ok(Some(format!(
            "action_count is {} but the log holds {}",
            row.action_count,
            action_rows.len()
        )));
    }
    let mut actions = Vec::with_capacity(action_rows.len());
    for a in &action_rows {
        match serde_json::from_str::<Action>(&a.action) {
            Ok(action) => actions.push(action),
            Err(e) => return Ok(Some(format!("action {} does not parse: {e}", a.seq))),
        }
    }
    let events = store::all_events(conn, id)?;
    for (i, e) in events.iter().enumerate() {
        if e.seq != i as i64 + 1 {
            return Ok(Some(format!(
                "event log has a gap: #{} holds seq {}",
                i + 1,
                e.seq
            )));
        }
    }
    if events.len() as i64 != row.event_count {
        return Ok(Some(format!(
            "event_count is {} but the log holds {}",
            row.event_count,
            events.len()
        )));
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
        if let Some(reason) = verify_game(conn, id)? {
            mismatches.push(Mismatch {
                game_id: id.clone(),
                reason,
            });
        }
    }
    let (_, discrepancies) = crate::ratings::verify(conn, rated_game)?;
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
