//! Seats, teams and per-seat containers (§1, §7).

use std::fmt;
use std::ops::{Index, IndexMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `Display` and serde as the bare number, shared by the numbered types [`Seat`] and
/// [`Team`] so that their wire forms stay alike: deserializing goes through `new`, and a
/// number out of range is refused with `$refusal` followed by the number given.
macro_rules! number_display_and_serde {
    ($numbered:ident, $refusal:literal) => {
        impl fmt::Display for $numbered {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl Serialize for $numbered {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_u8(self.0)
            }
        }

        impl<'de> Deserialize<'de> for $numbered {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$numbered, D::Error> {
                let number = u8::deserialize(deserializer)?;
                $numbered::new(number).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!($refusal, ", got {}"), number))
                })
            }
        }
    };
}

/// A seat at the table, `0..=3`, numbered in order of play: the seat on a player's right
/// is the next one to act.
///
/// Serialized as its number; deserializing anything outside `0..=3` fails.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seat(u8);

impl Seat {
    /// The four seats in order of play.
    pub const ALL: [Seat; 4] = [Seat(0), Seat(1), Seat(2), Seat(3)];

    /// The seat with this number, if it is in `0..=3`.
    #[inline]
    pub const fn new(number: u8) -> Option<Seat> {
        if number < 4 { Some(Seat(number)) } else { None }
    }

    /// The seat number, `0..=3`.
    #[inline]
    pub const fn number(self) -> u8 {
        self.0
    }

    /// The seat number as an index, `0..4`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The seat `n` places further in order of play.
    #[inline]
    #[must_use]
    pub const fn offset(self, n: u8) -> Seat {
        Seat((self.0 + n % 4) % 4)
    }

    /// The seat on this player's right: the next to act (`i + 1`).
    #[inline]
    #[must_use]
    pub const fn right(self) -> Seat {
        self.offset(1)
    }

    /// The seat across the table: the partner in partnership mode (`i + 2`).
    #[inline]
    #[must_use]
    pub const fn across(self) -> Seat {
        self.offset(2)
    }

    /// The seat on this player's left: the previous to act (`i + 3`).
    #[inline]
    #[must_use]
    pub const fn left(self) -> Seat {
        self.offset(3)
    }

    /// This seat's team in partnership mode: seats 0 and 2 are team 0, seats 1 and 3 team 1.
    #[inline]
    pub const fn team(self) -> Team {
        Team(self.0 % 2)
    }
}

number_display_and_serde!(Seat, "seat must be 0, 1, 2 or 3");

impl fmt::Debug for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seat({})", self.0)
    }
}

/// A partnership team: team 0 is seats {0, 2}, team 1 is seats {1, 3} (partners sit
/// across). Serialized as its number.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Team(u8);

impl Team {
    /// Both teams.
    pub const ALL: [Team; 2] = [Team(0), Team(1)];

    /// The team with this number, if it is 0 or 1.
    pub const fn new(number: u8) -> Option<Team> {
        if number < 2 { Some(Team(number)) } else { None }
    }

    /// The team number, 0 or 1.
    pub const fn number(self) -> u8 {
        self.0
    }

    /// The two seats of this team.
    pub const fn members(self) -> [Seat; 2] {
        [Seat(self.0), Seat(self.0 + 2)]
    }

    /// The other team.
    #[must_use]
    pub const fn other(self) -> Team {
        Team(1 - self.0)
    }
}

number_display_and_serde!(Team, "team must be 0 or 1");

/// One value per seat, indexed by [`Seat`] (never by a bare integer). Serialized as a
/// 4-element array in seat order.
///
/// ```
/// use leekha::rules::{BySeat, Seat};
///
/// let mut totals = BySeat::new([90, 50, 40, 36]);
/// totals[Seat::ALL[1]] += 5;
/// assert_eq!(totals.map(|t| t * 2), BySeat::new([180, 110, 80, 72]));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BySeat<T>([T; 4]);

impl<T> BySeat<T> {
    /// Wraps an array in seat order.
    #[inline]
    pub const fn new(values: [T; 4]) -> BySeat<T> {
        BySeat(values)
    }

    /// Builds each seat's value from the seat.
    #[inline]
    pub fn from_fn(mut f: impl FnMut(Seat) -> T) -> BySeat<T> {
        BySeat([f(Seat(0)), f(Seat(1)), f(Seat(2)), f(Seat(3))])
    }

    /// The values in seat order.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// Each seat with its value, in seat order.
    #[inline]
    pub fn iter_seats(&self) -> impl Iterator<Item = (Seat, &T)> {
        Seat::ALL.into_iter().zip(self.0.iter())
    }

    /// Applies `f` to every value.
    #[inline]
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> BySeat<U> {
        BySeat(self.0.map(f))
    }

    /// A per-seat container of references.
    #[inline]
    pub fn as_ref(&self) -> BySeat<&T> {
        BySeat(self.0.each_ref())
    }

    /// The inner array in seat order.
    #[inline]
    pub fn into_inner(self) -> [T; 4] {
        self.0
    }
}

impl<T> Index<Seat> for BySeat<T> {
    type Output = T;

    #[inline]
    fn index(&self, seat: Seat) -> &T {
        &self.0[seat.index()]
    }
}

impl<T> IndexMut<Seat> for BySeat<T> {
    #[inline]
    fn index_mut(&mut self, seat: Seat) -> &mut T {
        &mut self.0[seat.index()]
    }
}

impl<T> From<[T; 4]> for BySeat<T> {
    fn from(values: [T; 4]) -> BySeat<T> {
        BySeat(values)
    }
}

impl<'a, T> IntoIterator for &'a BySeat<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A set of seats as a 4-bit mask, e.g. the seats that still have to act. Serialized as a
/// list of seat numbers in seat order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeatSet(u8);

impl SeatSet {
    /// No seat.
    pub const EMPTY: SeatSet = SeatSet(0);
    /// All four seats.
    pub const ALL: SeatSet = SeatSet(0b1111);

    /// The set holding just `seat`.
    #[inline]
    pub const fn single(seat: Seat) -> SeatSet {
        SeatSet(1 << seat.0)
    }

    /// Whether `seat` is in the set.
    #[inline]
    pub const fn contains(self, seat: Seat) -> bool {
        self.0 & (1 << seat.0) != 0
    }

    /// Adds `seat`.
    #[inline]
    pub fn insert(&mut self, seat: Seat) {
        self.0 |= 1 << seat.0;
    }

    /// Removes `seat`.
    #[inline]
    pub fn remove(&mut self, seat: Seat) {
        self.0 &= !(1 << seat.0);
    }

    /// The number of seats.
    #[inline]
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether no seat is in the set.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The seats in seat order.
    pub fn iter(self) -> impl Iterator<Item = Seat> + Clone {
        Seat::ALL.into_iter().filter(move |&s| self.contains(s))
    }
}

impl FromIterator<Seat> for SeatSet {
    fn from_iter<I: IntoIterator<Item = Seat>>(iter: I) -> SeatSet {
        let mut set = SeatSet::EMPTY;
        for seat in iter {
            set.insert(seat);
        }
        set
    }
}

impl fmt::Debug for SeatSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(|s| s.0)).finish()
    }
}

impl Serialize for SeatSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for SeatSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SeatSet, D::Error> {
        Ok(Vec::<Seat>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_follow_the_rule_book() {
        for seat in Seat::ALL {
            let i = seat.number();
            assert_eq!(seat.right().number(), (i + 1) % 4);
            assert_eq!(seat.left().number(), (i + 3) % 4);
            assert_eq!(seat.across().number(), (i + 2) % 4);
            assert_eq!(seat.right().left(), seat);
            assert!(seat.team().members().contains(&seat));
        }
    }

    #[test]
    fn seats_and_teams_are_their_numbers_on_the_wire() {
        for seat in Seat::ALL {
            assert_eq!(seat.to_string(), seat.number().to_string());
            assert_eq!(serde_json::to_string(&seat).unwrap(), seat.to_string());
            assert_eq!(
                serde_json::from_str::<Seat>(&seat.to_string()).unwrap(),
                seat
            );
        }
        for team in Team::ALL {
            assert_eq!(serde_json::to_string(&team).unwrap(), team.to_string());
            assert_eq!(
                serde_json::from_str::<Team>(&team.to_string()).unwrap(),
                team
            );
        }
        let seat = serde_json::from_str::<Seat>("4").unwrap_err().to_string();
        assert!(
            seat.starts_with("seat must be 0, 1, 2 or 3, got 4"),
            "{seat}"
        );
        let team = serde_json::from_str::<Team>("2").unwrap_err().to_string();
        assert!(team.starts_with("team must be 0 or 1, got 2"), "{team}");
    }
}
