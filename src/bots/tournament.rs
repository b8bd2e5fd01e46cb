//! Duplicate-deal tournaments: how many points per round a candidate bot saves against a
//! baseline bot.
//!
//! Each deal (the first round of a seeded [`Game`]) is played five times: once with four
//! baselines (the reference) and once with the candidate in each seat and baselines in the
//! other three. In each seat the candidate's points are compared with what the baseline
//! took in that seat on the same cards, so the luck of the deal cancels out. The four seat
//! differences of a deal are averaged into one sample; the report gives the mean over the
//! deals with a 95% confidence interval (mean ± 1.96·sd/√n). In partnership the points
//! compared are the team's (the candidate and its baseline partner).
//!
//! Everything is seeded: the same configuration gives the same results, except the
//! timing figures (and except when the expert's time budget, rather than its iteration
//! cap, ends its searches).
//!
//! The simulator runs the table with the whole [`Game`]; each bot gets only its seat's view
//! and the round's public history.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

use crate::rules::{Action, Card, Game, Mode, RuleOptions, Seat, SeatView};

use super::ismcts::choose_ismcts;
use super::omniscient::choose_omniscient;
use super::{BotLevel, ExpertConfig, choose, choose_expert};

/// Who sits at a tournament seat: a bot level, or the omniscient measuring bot, which reads
/// every hand and therefore exists only here (no seat of a real game can be given it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contestant {
    /// A bot of this level, seeing only its seat's view.
    Bot(BotLevel),
    /// The expert's search with every hand revealed: the information limit.
    Omniscient,
    /// Information-set tree search within the expert's budget, measured against the
    /// expert's flat search.
    Ismcts,
}

impl Contestant {
    /// Every contestant: the bot levels weakest first, then the search under measure and
    /// the omniscient bound.
    pub fn all() -> impl Iterator<Item = Contestant> {
        BotLevel::ALL
            .into_iter()
            .map(Contestant::Bot)
            .chain([Contestant::Ismcts, Contestant::Omniscient])
    }

    /// The name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Contestant::Bot(level) => level.as_str(),
            Contestant::Omniscient => "omniscient",
            Contestant::Ismcts => "ismcts",
        }
    }

    /// Parses a name of [`Contestant::as_str`].
    pub fn parse(raw: &str) -> Option<Contestant> {
        Contestant::all().find(|c| c.as_str() == raw)
    }
}

impl From<BotLevel> for Contestant {
    fn from(level: BotLevel) -> Contestant {
        Contestant::Bot(level)
    }
}

impl fmt::Display for Contestant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TournamentConfig {
    /// The bot being measured.
    pub candidate: Contestant,
    /// The bot it is measured against (and that fills the other seats).
    pub baseline: Contestant,
    /// The number of deals; each is played 5 times (reference + candidate in each seat).
    pub deals: usize,
    /// The seed of the deals and of the bots' random streams.
    pub seed: u64,
    /// The rules of the table.
    pub options: RuleOptions,
    /// The expert's search limits, whichever side plays expert.
    pub expert: ExpertConfig,
}

/// The seeded outcome of a tournament: identical for identical configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct TournamentResults {
    /// Deals played.
    pub deals: usize,
    /// Mean points per round saved by the candidate against the baseline in the same seat
    /// on the same deal (positive: the candidate is better).
    pub mean_saved: f64,
    /// Standard deviation of the per-deal savings.
    pub sd: f64,
    /// Lower bound of the 95% confidence interval of `mean_saved`.
    pub ci_low: f64,
    /// Upper bound of the 95% confidence interval of `mean_saved`.
    pub ci_high: f64,
    /// Mean points per round the candidate took (its team's in partnership).
    pub candidate_points: f64,
    /// Mean points per round the baseline took in the same seats (reference tables).
    pub baseline_points: f64,
    /// Every per-deal saving, in deal order.
    pub per_deal: Vec<f64>,
}

/// Wall-clock figures: they vary from run to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TournamentTiming {
    /// Decisions the candidate made (passes and plays).
    pub decisions: usize,
    /// Median decision time of the candidate.
    pub p50: Duration,
    /// 99th percentile decision time of the candidate.
    pub p99: Duration,
    /// Longest decision of the candidate.
    pub max: Duration,
    /// Decisions with more than one legal option (where a bot actually thinks).
    pub choices: usize,
    /// Median time of those decisions.
    pub choice_p50: Duration,
    /// 99th percentile time of those decisions.
    pub choice_p99: Duration,
    /// Rounds played in all (5 per deal).
    pub rounds: usize,
    /// Wall-clock time of the whole tournament.
    pub elapsed: Duration,
    /// `rounds / elapsed`.
    pub rounds_per_second: f64,
}

/// What [`run`] measured. `Display` prints it as a few human-readable lines.
#[derive(Clone, Debug, PartialEq)]
pub struct TournamentReport {
    /// The configuration that was run.
    pub config: TournamentConfig,
    /// The seeded results.
    pub results: TournamentResults,
    /// The timings.
    pub timing: TournamentTiming,
}

/// Runs the tournament on one thread.
pub fn run(config: &TournamentConfig) -> TournamentReport {
    run_on(config, 1)
}

/// What one deal gave: the candidate's saving, the points on both sides and the
/// candidate's decision times.
struct DealOutcome {
    saved: f64,
    candidate: f64,
    baseline: f64,
    timer: Timer,
}

/// Runs the tournament with up to `threads` threads playing deals side by side. The
/// results are those of [`run`], deal for deal: each deal's seed is drawn up front in deal
/// order and its bots' streams depend on the deal alone. Only the timing figures change,
/// since the threads share the machine.
pub fn run_on(config: &TournamentConfig, threads: usize) -> TournamentReport {
    let start = Instant::now();
    let mut deal_rng = ChaCha8Rng::seed_from_u64(config.seed);
    let seeds: Vec<[u8; 32]> = (0..config.deals)
        .map(|_| {
            let mut seed = [0u8; 32];
            deal_rng.fill_bytes(&mut seed);
            seed
        })
        .collect();
    let next = AtomicUsize::new(0);
    let mut outcomes: Vec<Option<DealOutcome>> = (0..config.deals).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, config.deals.max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut played = Vec::new();
                    loop {
                        let deal = next.fetch_add(1, Ordering::Relaxed);
                        let Some(seed) = seeds.get(deal) else {
                            return played;
                        };
                        played.push((deal, play_deal(config, deal, *seed)));
                    }
                })
            })
            .collect();
        for worker in workers {
            // A bot's illegal move panics (see `play_round`): pass it on as it was.
            let played = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (deal, outcome) in played {
                outcomes[deal] = Some(outcome);
            }
        }
    });
    let mut per_deal = Vec::with_capacity(config.deals);
    let mut candidate_sum = 0.0;
    let mut baseline_sum = 0.0;
    let mut times = Vec::new();
    let mut choice_times = Vec::new();
    // In deal order, so that the sums are those of one thread (they are whole numbers
    // anyway, which floating point adds exactly in any order).
    for outcome in outcomes.into_iter().flatten() {
        per_deal.push(outcome.saved);
        candidate_sum += outcome.candidate;
        baseline_sum += outcome.baseline;
        times.extend(outcome.timer.all);
        choice_times.extend(outcome.timer.choices);
    }
    let n = per_deal.len();
    let mean = if n == 0 {
        0.0
    } else {
        per_deal.iter().sum::<f64>() / n as f64
    };
    let sd = if n < 2 {
        0.0
    } else {
        (per_deal.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let half = if n == 0 {
        0.0
    } else {
        1.96 * sd / (n as f64).sqrt()
    };
    let rounds = n * 4;
    let results = TournamentResults {
        deals: n,
        mean_saved: mean,
        sd,
        ci_low: mean - half,
        ci_high: mean + half,
        candidate_points: if rounds == 0 {
            0.0
        } else {
            candidate_sum / rounds as f64
        },
        baseline_points: if rounds == 0 {
            0.0
        } else {
            baseline_sum / rounds as f64
        },
        per_deal,
    };
    let elapsed = start.elapsed();
    let decisions = times.len();
    let choices = choice_times.len();
    let timing = TournamentTiming {
        decisions,
        p50: percentile(&mut times, 0.50),
        p99: percentile(&mut times, 0.99),
        max: times.iter().max().copied().unwrap_or_default(),
        choices,
        choice_p50: percentile(&mut choice_times, 0.50),
        choice_p99: percentile(&mut choice_times, 0.99),
        rounds: n * 5,
        elapsed,
        rounds_per_second: (n * 5) as f64 / elapsed.as_secs_f64().max(1e-9),
    };
    TournamentReport {
        config: *config,
        results,
        timing,
    }
}

/// Plays deal number `deal` five times: the reference table of baselines, then the
/// candidate in each seat.
fn play_deal(config: &TournamentConfig, deal: usize, seed: [u8; 32]) -> DealOutcome {
    let partnership = config.options.mode == Mode::Partnership;
    let score = |points: &[u32; 4], seat: Seat| -> f64 {
        let mut p = points[seat.index()];
        if partnership {
            p += points[seat.across().index()];
        }
        f64::from(p)
    };
    let game = Game::new(config.options, seed);
    let reference = play_round(
        &game,
        [config.baseline; 4],
        None,
        config,
        deal as u64,
        &mut Timer::default(),
    );
    let mut outcome = DealOutcome {
        saved: 0.0,
        candidate: 0.0,
        baseline: 0.0,
        timer: Timer::default(),
    };
    for seat in Seat::ALL {
        let mut levels = [config.baseline; 4];
        levels[seat.index()] = config.candidate;
        let points = play_round(
            &game,
            levels,
            Some(seat),
            config,
            deal as u64,
            &mut outcome.timer,
        );
        let candidate = score(&points, seat);
        let baseline = score(&reference, seat);
        outcome.candidate += candidate;
        outcome.baseline += baseline;
        outcome.saved += baseline - candidate;
    }
    outcome.saved /= 4.0;
    outcome
}

/// The decision times of the candidate.
#[derive(Default)]
struct Timer {
    all: Vec<Duration>,
    choices: Vec<Duration>,
}

/// Plays the first round of `game` with `levels` in the seats and returns each seat's
/// points. The candidate's decisions (`timed`) are timed. Each seat's bot draws from its own
/// stream, seeded by the deal and the seat only, so a baseline in a seat sees the same
/// stream at every table of the deal.
fn play_round(
    game: &Game,
    levels: [Contestant; 4],
    timed: Option<Seat>,
    config: &TournamentConfig,
    deal: u64,
    timer: &mut Timer,
) -> [u32; 4] {
    let mut game = game.clone();
    let mut rngs: [ChaCha8Rng; 4] = std::array::from_fn(|i| {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x9e37_79b9_7f4a_7c15);
        rng.set_stream(deal * 4 + i as u64);
        rng
    });
    let round = game.round_number();
    let before = game.totals();
    let mut history: Vec<(Seat, Card)> = Vec::with_capacity(52);
    while game.round_number() == round && !game.is_finished() {
        for seat in game.to_act().iter().collect::<Vec<_>>() {
            let view = game.view(seat);
            let options = view.legal_actions.cards().len();
            let rng = &mut rngs[seat.index()];
            let started = Instant::now();
            let action = decide(levels[seat.index()], &game, &view, &history, config, rng);
            let took = started.elapsed();
            if timed == Some(seat) {
                timer.all.push(took);
                if options > 1 {
                    timer.choices.push(took);
                }
            }
            let action = action.unwrap_or_else(|| fallback(&game, seat));
            // The bots only return legal actions (the tests hold them to it); a refusal
            // here would be a bug worth a loud failure in a measuring tool.
            game.apply(&action).unwrap_or_else(|e| {
                panic!("{} bot made an illegal move: {e}", levels[seat.index()])
            });
            if let Action::Play { seat, card } = action {
                history.push((seat, card));
            }
        }
    }
    let after = game.totals();
    std::array::from_fn(|i| after[Seat::ALL[i]] - before[Seat::ALL[i]])
}

/// The contestant's action. Only the omniscient bot is handed the game; every bot gets
/// the seat's view and the history, as in a real game.
fn decide<R: Rng + ?Sized>(
    contestant: Contestant,
    game: &Game,
    view: &SeatView,
    history: &[(Seat, Card)],
    config: &TournamentConfig,
    rng: &mut R,
) -> Option<Action> {
    match contestant {
        Contestant::Omniscient => choose_omniscient(game, view.seat?, history),
        Contestant::Ismcts => choose_ismcts(view, history, &config.expert, rng),
        Contestant::Bot(BotLevel::Expert) => choose_expert(view, history, &config.expert, rng),
        Contestant::Bot(level) => choose(level, view, history, rng),
    }
}

/// A legal action when a bot returned none although the seat must act (never expected).
fn fallback(game: &Game, seat: Seat) -> Action {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    match game.random_pass(seat, &mut rng) {
        Some(cards) => Action::Pass {
            seat,
            cards: cards.iter().collect(),
        },
        None => {
            let legal = game.legal_plays(seat);
            let card = legal
                .nth(rng.random_range(0..legal.len().max(1)))
                .unwrap_or(Card::QUEEN_OF_SPADES);
            Action::Play { seat, card }
        }
    }
}

/// The `q` quantile (nearest rank) of `values`, sorting them.
fn percentile(values: &mut [Duration], q: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    values.sort_unstable();
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl fmt::Display for TournamentReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        let r = &self.results;
        let t = &self.timing;
        let unit = if c.options.mode == Mode::Partnership {
            "team points"
        } else {
            "points"
        };
        writeln!(
            f,
            "candidate {} vs baseline {}: {} duplicate deals, seed {}",
            c.candidate, c.baseline, r.deals, c.seed
        )?;
        writeln!(
            f,
            "rules: {}",
            serde_json::to_string(&c.options).unwrap_or_default()
        )?;
        let expert = Contestant::Bot(BotLevel::Expert);
        if c.candidate == expert || c.baseline == expert {
            writeln!(
                f,
                "expert: max {} rollouts, time budget {} ms per decision",
                c.expert.max_iterations,
                c.expert.time_budget.as_millis()
            )?;
        }
        writeln!(
            f,
            "{unit} per round: candidate {:.3}, baseline in the same seats {:.3}",
            r.candidate_points, r.baseline_points
        )?;
        writeln!(
            f,
            "saved against the baseline: {:+.3} {unit}/round (95% CI {:+.3} .. {:+.3}, sd {:.3}, n {})",
            r.mean_saved, r.ci_low, r.ci_high, r.sd, r.deals
        )?;
        writeln!(
            f,
            "candidate decision time: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} decisions",
            ms(t.p50),
            ms(t.p99),
            ms(t.max),
            t.decisions
        )?;
        writeln!(
            f,
            "  with a choice (2+ legal options): p50 {:.3} ms, p99 {:.3} ms over {} decisions",
            ms(t.choice_p50),
            ms(t.choice_p99),
            t.choices
        )?;
        write!(
            f,
            "speed: {:.1} rounds/s ({} rounds in {:.1} s)",
            t.rounds_per_second,
            t.rounds,
            t.elapsed.as_secs_f64()
        )
    }
}
