//! What one seat knows, built only from its [`SeatView`] and the public history of the
//! round. The same [`Table`] record is kept up to date inside the expert's rollouts, so the
//! heuristic policy sees the same kind of facts whether it plays for real or in a rollout.

use crate::rules::{
    Card, CardSet, Phase, RuleOptions, Seat, SeatView, Suit, Trick, talbees_leekha,
};

/// The cards of `card`'s suit ranked below it.
#[inline]
pub(crate) fn below(card: Card) -> CardSet {
    let suit = CardSet::suit(card.suit());
    suit - CardSet::above(card.rank(), card.suit()) - CardSet::single(card)
}

/// The cards of `card`'s suit ranked above it.
#[inline]
pub(crate) fn above(card: Card) -> CardSet {
    CardSet::above(card.rank(), card.suit())
}

/// The public record of a round: what every seat (and every rollout) can know from the
/// cards played so far. Plain `Copy` data so that rollouts copy it for free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// Every card played this round, the current trick included.
    pub played: CardSet,
    /// Per seat: the suits it showed out of (bit `Suit::index`), so holds none of.
    pub voids: [u8; 4],
    /// Per seat: cards it certainly does not hold, from the forced-Leekha and talbees rules.
    pub lacks: [CardSet; 4],
    /// Per seat: the points it took this round.
    pub points: [u32; 4],
}

impl Table {
    /// Records that `seat` plays `card` to `trick` (called before the card joins the trick,
    /// so `trick` holds what the seat saw when it chose).
    #[inline]
    pub fn observe(&mut self, seat: Seat, card: Card, trick: &Trick, rules: &RuleOptions) {
        self.played.insert(card);
        let Some(led) = trick.led_suit() else {
            return;
        };
        let i = seat.index();
        if card.suit() != led {
            self.voids[i] |= 1 << led.index();
            // Showing out with a card that is not a forced Leekha proves the seat held no
            // forced Leekha at that moment, and hands only shrink during play.
            let forced = rules.forced_leekha.cards();
            if !forced.contains(card) {
                self.lacks[i] |= forced;
            }
        } else if let Some(leekha) = talbees_leekha(trick, rules)
            && card != leekha
        {
            // Talbees would have forced the Leekha out of a holder.
            self.lacks[i].insert(leekha);
        }
    }

    /// Whether `seat` is known to hold no card of `suit`.
    #[inline]
    pub fn is_void(&self, seat: Seat, suit: Suit) -> bool {
        self.voids[seat.index()] & (1 << suit.index()) != 0
    }
}

/// Everything one seat knows in the playing phase: its hand, the public record, where its
/// own passed cards are, how many cards each seat holds, and the trick in progress.
#[derive(Clone, Debug)]
pub(crate) struct Knowledge {
    /// The seat.
    pub me: Seat,
    /// The rules of the game.
    pub rules: RuleOptions,
    /// The seat's hand.
    pub hand: CardSet,
    /// The public record of the round.
    pub table: Table,
    /// Per seat: cards this seat knows the other seat holds (its own pass, not yet played).
    pub known: [CardSet; 4],
    /// Per seat: how many cards it holds.
    pub counts: [u8; 4],
    /// The trick in progress.
    pub trick: Trick,
    /// The round's plays, when the history fits the view (else empty: no inference is
    /// drawn from a history that cannot be trusted).
    pub history: Vec<(Seat, Card)>,
    /// Who led the round's first trick.
    pub first_leader: Seat,
    /// The seat whose pass we received, and those cards (what that seat knows we hold).
    pub giver: Option<(Seat, CardSet)>,
}

impl Knowledge {
    /// Builds what `view.seat` knows from its view and the round's `history` (every card
    /// played this round, in order). `None` for a spectator view or outside the playing
    /// phase.
    pub fn new(view: &SeatView, history: &[(Seat, Card)]) -> Option<Knowledge> {
        let me = view.seat?;
        if view.phase != Phase::Playing {
            return None;
        }
        let rules = view.rules;
        let trick_cards: Vec<Card> = view.trick.cards.iter().map(|p| p.card).collect();
        let trick = Trick::from_cards(view.trick.leader, &trick_cards)?;

        let mut table = Table::default();
        let consistent = history_fits(view, history);
        if consistent {
            let mut current = Trick::new(view.dealer.right());
            for &(seat, card) in history {
                table.observe(seat, card, &current, &rules);
                current = push(current, card);
                if current.is_complete() {
                    let winner = current.taker();
                    table.points[winner.index()] += current.points();
                    current = Trick::new(winner);
                }
            }
        } else {
            // Keep what is certain: the cards seen, and the public points.
            for &(_, card) in history {
                table.played.insert(card);
            }
        }
        // The view is authoritative for what it shows.
        table.played |= trick.set();
        if let Some(last) = &view.last_trick {
            for played in &last.cards {
                table.played.insert(played.card);
            }
        }
        for summary in view.seats.iter() {
            table.points[summary.seat.index()] = summary.round_points;
        }

        let mut known = [CardSet::EMPTY; 4];
        if let (Some(passed), Some(direction)) = (view.passed, view.pass_direction) {
            // After the exchange the receiver holds our pass until it plays those cards.
            let receiver = direction.receiver(me);
            let with_receiver = passed - table.played - view.hand;
            if consistent {
                known[receiver.index()] = with_receiver;
            } else {
                // Without a trustworthy history some of them may have been played: all we
                // know is that nobody else holds them.
                for seat in Seat::ALL {
                    if seat != me && seat != receiver {
                        table.lacks[seat.index()] |= with_receiver;
                    }
                }
            }
        }
        let counts: [u8; 4] = std::array::from_fn(|i| view.seats[Seat::ALL[i]].cards_in_hand);
        let giver = match (view.received, view.pass_direction) {
            (Some(received), Some(direction)) => Some((direction.giver(me), received)),
            _ => None,
        };
        Some(Knowledge {
            me,
            rules,
            hand: view.hand,
            table,
            known,
            counts,
            trick,
            history: if consistent {
                history.to_vec()
            } else {
                Vec::new()
            },
            first_leader: view.dealer.right(),
            giver,
        })
    }

    /// The cards this seat cannot see: in the other hands (or played but missing from an
    /// incomplete history).
    pub fn unseen(&self) -> CardSet {
        CardSet::FULL - self.hand - self.table.played
    }
}

/// Adds `card` to `trick` (the caller guarantees the trick is incomplete and the card new).
#[inline]
pub(crate) fn push(mut trick: Trick, card: Card) -> Trick {
    trick.push(card);
    trick
}

/// Whether `history` is a well-formed record of this round that ends with the view's trick:
/// the right length, each trick led by the previous winner, seats in turn, no repeats.
fn history_fits(view: &SeatView, history: &[(Seat, Card)]) -> bool {
    let expected = usize::from(view.tricks_played) * 4 + view.trick.cards.len();
    if history.len() != expected {
        return false;
    }
    let mut seen = CardSet::EMPTY;
    let mut current = Trick::new(view.dealer.right());
    for &(seat, card) in history {
        if seat != current.next_seat() || !seen.insert(card) || view.hand.contains(card) {
            return false;
        }
        current = push(current, card);
        if current.is_complete() {
            current = Trick::new(current.taker());
        }
    }
    let tail = &history[history.len() - view.trick.cards.len()..];
    current.leader() == view.trick.leader
        && tail
            .iter()
            .zip(&view.trick.cards)
            .all(|(&(seat, card), played)| seat == played.seat && card == played.card)
}
