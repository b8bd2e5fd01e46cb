//! What a client reads of a game view, and how it picks a random legal action from it or,
//! in `track` mode, from what it remembers of earlier views.

use leekha::rules::{Card, CardSet, RuleOptions, Seat, Trick, check_pass, legal_plays};
use rand::{Rng, RngExt};
use serde::Deserialize;
use serde_json::{Value, json};

/// The parts of a game view (`GameView` in the API) a client needs: parsed into these
/// types, not a generic JSON tree, so the load generator spends little CPU of the machine
/// it shares with the server.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct View {
    /// `waiting`, `active`, `finished`, …
    pub status: String,
    /// Bumped by every action.
    pub version: i64,
    /// The game's rule options.
    pub rules: Option<RuleOptions>,
    /// The seat whose view this is, if any.
    pub my_seat: Option<u8>,
    /// Whose turn it is.
    pub turn: Option<TurnPart>,
    round: Option<RoundPart>,
    legal_actions: Option<LegalPart>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
/// Whose turn it is.
pub struct TurnPart {
    /// The seats that may act now.
    pub seats: Vec<u8>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoundPart {
    number: u64,
    phase: String,
    hand: Vec<Card>,
    trick: TrickPart,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TrickPart {
    leader: u8,
    cards: Vec<PlayedPart>,
}

#[derive(Debug, Deserialize)]
struct PlayedPart {
    card: Card,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LegalPart {
    #[serde(rename = "type")]
    kind: String,
    cards: Vec<Card>,
}

/// Picks a random legal action from a seat's view.
pub fn random_action<R: Rng + ?Sized>(view: &View, rng: &mut R) -> Option<Value> {
    let legal = view.legal_actions.as_ref()?;
    let cards = &legal.cards;
    if cards.is_empty() {
        return None;
    }
    match legal.kind.as_str() {
        "play" => Some(
            json!({"type": "play", "card": cards[rng.random_range(0..cards.len())].to_string()}),
        ),
        "pass" => {
            let rules = view.rules.as_ref()?;
            let hand: CardSet = view.round.as_ref()?.hand.iter().copied().collect();
            for _ in 0..500 {
                let mut pick = CardSet::EMPTY;
                while pick.len() < 3 {
                    pick.insert(cards[rng.random_range(0..cards.len())]);
                }
                if check_pass(hand, pick, rules).is_ok() {
                    let codes: Vec<String> = pick.iter().map(|c| c.to_string()).collect();
                    return Some(json!({"type": "pass", "cards": codes}));
                }
            }
            None
        }
        _ => None,
    }
}

/// What a client knows of its table between requests.
#[derive(Default)]
pub struct TableState {
    /// The game being played, once started.
    pub game: Option<String>,
    /// Its rule options, from its first view.
    pub rules: Option<RuleOptions>,
    /// The latest response (a seat's view).
    pub latest: Option<View>,
    /// Each seat's hand after the exchange, with its round number, from that seat's own
    /// last response.
    pub hands: [Option<(u64, CardSet)>; 4],
}

impl TableState {
    /// Remembers a seat's hand from its own view, once the round's exchange is over.
    pub fn remember(&mut self, seat: usize, view: &View) {
        let Some(round) = &view.round else { return };
        if view.my_seat.map(usize::from) != Some(seat) || round.phase != "playing" {
            return;
        }
        self.hands[seat] = Some((round.number, round.hand.iter().copied().collect()));
    }

    /// A random legal play for `seat` from its remembered hand and the trick in `latest`,
    /// or `None` when the client does not know enough (then it fetches the seat's view).
    pub fn tracked_play<R: Rng + ?Sized>(
        &mut self,
        seat: usize,
        latest: &View,
        rng: &mut R,
    ) -> Option<Value> {
        let round = latest.round.as_ref()?;
        if round.phase != "playing" {
            return None;
        }
        let (known_round, hand) = self.hands[seat]?;
        if known_round != round.number {
            return None;
        }
        let leader = Seat::new(round.trick.leader)?;
        let cards: Vec<Card> = round.trick.cards.iter().map(|p| p.card).collect();
        let trick = Trick::from_cards(leader, &cards)?;
        let legal: Vec<Card> = legal_plays(hand, &trick, self.rules.as_ref()?)
            .iter()
            .collect();
        if legal.is_empty() {
            return None;
        }
        let card = legal[rng.random_range(0..legal.len())];
        let mut rest = hand;
        rest.remove(card);
        self.hands[seat] = Some((round.number, rest));
        Some(json!({"type": "play", "card": card.to_string()}))
    }
}
