//! The order of results: bm25, then what a result holds of the query and what it is.
//!
//! FTS5's bm25 over the OR of a query's words ranks a long text that repeats one rare word
//! above a short one that holds them all. So a result's bm25 (its columns weighted: what names
//! an item above what it answered) is scaled by the share of the query's weight it holds, each
//! term weighing its rarity in the index (a name in every turn of a conversation counts for
//! less than the one rare word of a question), and results that hold the whole query as typed,
//! then all its words, come first. Then what the compressor wrote (memories, summaries) and
//! what a person wrote (prompts) weigh more than what a tool answered, and recent work a little
//! more than old: within a few days about a tenth, halving every month. A result in the
//! context of others gains a share of theirs: of the two items before and the two after it in
//! its session (the nearer ones more), and of the session's best (a conversation's turn is
//! read with the turns around it). Results with the same text (the same command with the same
//! output, run again) are one result with a count.
//!
//! Which terms a result holds comes from `cmem_matched(fts)`, an FTS5 auxiliary function
//! registered here: a bitmask of the expression's phrases found in the row; how rare they are,
//! from the rows of the index and how many hold each phrase: as the search's bm25 counted them
//! (`cmem_bm25`, see `bm25.rs`), or, for the team's notes, `cmem_rarity(fts)`.

use std::ffi::c_int;

use anyhow::Result;
use rusqlite::ffi;
use rusqlite::{Connection, OptionalExtension};

use super::auxiliary::{Answer, answer, first_match, ok};
use super::bm25::Counts;
use super::query::Query;
use super::schema::key_of;
use crate::store::rows::Kind;

/// A matching row, before it is ranked.
pub struct Candidate {
    pub id: i64,
    /// bm25 of the row: lower (more negative) is better.
    pub bm25: f64,
    /// The phrases of the query found in the row, bit n for phrase n.
    pub matched: u64,
    pub kind: Kind,
    /// Days since it was captured, to the millisecond: whole seconds made two searches a
    /// moment apart order the items of one second differently (0 for a time ahead of the
    /// clock).
    pub age_days: f64,
    /// Its text's hash: rows with the same are one result.
    pub digest: i64,
    /// Where it is (none for a team's note, which has no context).
    pub place: Option<Place>,
}

/// Where an item is: its session, and its time there.
#[derive(Debug, Clone)]
pub struct Place {
    pub session: String,
    pub created_at: String,
}

/// A ranked result: the best of the rows with its text, and how many there are.
pub struct Ranked {
    pub id: i64,
    pub bm25: f64,
    pub count: usize,
    pub standing: Standing,
    pub place: Option<Place>,
}

/// Where a result stands in the order: its tier (2: the whole query as typed; 1: every term;
/// 0: some), then its relevance. Results of two searches with one query (ours and the team's
/// notes) are put in one order by it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Standing {
    pub tier: u8,
    pub relevance: f64,
}

impl Standing {
    /// The better first.
    pub fn order(a: &Standing, b: &Standing) -> std::cmp::Ordering {
        b.tier
            .cmp(&a.tier)
            .then(b.relevance.total_cmp(&a.relevance))
    }
}

/// How much more a row weighs by what it is.
fn kind_weight(kind: Kind) -> f64 {
    match kind {
        Kind::Memory => 1.5,
        Kind::Summary => 1.4,
        Kind::Prompt => 1.2,
        Kind::Message => 1.1,
        Kind::Observation | Kind::Session => 1.0,
    }
}

/// A new row weighs this much more than an old one, halving every [`RECENT_HALF_LIFE_DAYS`].
const RECENT_BONUS: f64 = 0.1;
const RECENT_HALF_LIFE_DAYS: f64 = 30.0;

/// How much each term of a query weighs: its rarity in the index, `ln(1 + rows / rows that
/// hold it)` (as bm25 and recall weigh words). Empty when the query has one phrase (a row
/// holds it or is not a result) or nothing matches.
pub fn rarity(conn: &Connection, query: &Query) -> Result<Vec<f64>> {
    if query.phrases.len() < 2 {
        return Ok(Vec::new());
    }
    let counts: Option<String> = conn
        .prepare_cached("SELECT cmem_rarity(fts) FROM fts WHERE fts MATCH ?1 LIMIT 1")?
        .query_row([&query.expression], |r| r.get(0))
        .optional()?;
    let Some(counts) = counts else {
        return Ok(Vec::new());
    };
    let counts: Vec<i64> = counts.split(' ').map(|n| n.parse().unwrap_or(0)).collect();
    let Some((&rows, held)) = counts.split_first() else {
        return Ok(Vec::new());
    };
    let held = held.to_vec();
    Ok(weights(query, &Counts { rows, held }))
}

/// [`rarity`] from the counts of the query's bm25 (see `bm25.rs`), which a search's query of
/// its candidates made: empty when the query has one phrase.
pub fn weights(query: &Query, counts: &Counts) -> Vec<f64> {
    if query.phrases.len() < 2 {
        return Vec::new();
    }
    let rows = counts.rows as f64;
    let mut weights = vec![0.0; query.terms];
    for (phrase, &count) in query.phrases.iter().zip(&counts.held) {
        if let Some(term) = phrase
            && let Some(weight) = weights.get_mut(*term)
        {
            *weight = (1.0 + rows / (count as f64).max(1.0)).ln();
        }
    }
    weights
}

/// The rows in rank order, the same texts made one; `weights` (see [`rarity`]) weigh the
/// query's terms, each the same when it is empty.
pub fn rank(query: &Query, weights: &[f64], candidates: Vec<Candidate>) -> Vec<Ranked> {
    // What orders them, with each candidate's index in `candidates`: sorting the candidates
    // themselves moved their sessions' and times' strings around.
    let mut order: Vec<(Standing, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let (tier, share) = holds(query, weights, c.matched);
            let relevance = -c.bm25
                * share
                * kind_weight(c.kind)
                * (1.0 + RECENT_BONUS * 0.5f64.powf(c.age_days / RECENT_HALF_LIFE_DAYS));
            (Standing { tier, relevance }, n)
        })
        .collect();
    order.sort_by(|(a, m), (b, n)| {
        let (x, y) = (&candidates[*m], &candidates[*n]);
        Standing::order(a, b)
            .then(x.age_days.total_cmp(&y.age_days))
            .then(key_of(y.id).cmp(&key_of(x.id)))
    });
    let mut candidates: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
    let mut out: Vec<Ranked> = Vec::with_capacity(order.len());
    let mut seen: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    for (standing, n) in order {
        let Some(c) = candidates[n].take() else {
            continue;
        };
        match seen.get(&c.digest) {
            Some(&at) => out[at].count += 1,
            None => {
                seen.insert(c.digest, out.len());
                out.push(Ranked {
                    id: c.id,
                    bm25: c.bm25,
                    count: 1,
                    standing,
                    place: c.place,
                });
            }
        }
    }
    out
}

/// Where a result is: its session, and the items around it there.
pub struct Context {
    pub session: String,
    pub around: Around,
}

/// The items around a result in its session: `[0]` the one just before it and the one just
/// after, `[1]` the ones before and after those.
pub type Around = [[Option<i64>; 2]; 2];

/// The share of its neighbours' relevance a result gains (see `context.rs`): of each of the
/// two next to it, and of each of the two past those. Measured on the relevance bench (all of
/// LoCoMo, recall@10, with the shares of weight below): the better of the next two at 0.3,
/// 0.687; their sum, the same; the sum of four at 0.3 and 0.15, 0.707 (0.2 and 0.2, 0.713;
/// 0.25 and 0.125, 0.705). The coding set's recall@10 is 0.936 with any sum, 0.947 with the
/// better of two: one query's second item leaves the ten. With the share raised to 1.5 and the
/// session's share, the two past the next ones at 0.17 rather than 0.15 took LoCoMo from
/// 0.632 / 0.717 / 0.526 (recall@5 / @10 / MRR) to 0.631 / 0.721 / 0.528 and the conventions
/// set's recall@10 from 0.693 to 0.688 (its recall@5 and MRR the same), coding and remem
/// unchanged. 0.16 gave LoCoMo 0.719; 0.18 and 0.2 gave 0.722 and 0.720 but put one coding
/// query's session sixth (recall@5 0.894 to 0.872): 0.17 is at the edge of what the coding set
/// allows, a few LoCoMo questions gained on the sets it was chosen on, not a margin.
const NEIGHBOUR_SHARE: [f64; 2] = [0.3, 0.17];
/// The share of its session's best relevance a result gains. On all of LoCoMo (with the
/// neighbours): 0, 0.1 and 0.2 gave recall@10 0.665, 0.676 and 0.688; 0.2 lost a coding
/// query (recall@10 0.947 to 0.936). With four neighbours and weighed terms, 0.15 gave 0.717
/// against 0.715.
const SESSION_SHARE: f64 = 0.1;

/// The results reordered by their context (`contexts`, by id): each gains
/// [`NEIGHBOUR_SHARE`] of the relevance of each of its neighbours that is itself a result,
/// and [`SESSION_SHARE`] of the best in its session. Tiers stay, and so do the
/// results: a neighbour that holds none of the words searched for is not one.
pub fn in_context(
    results: Vec<Ranked>,
    contexts: &std::collections::HashMap<i64, Context>,
) -> Vec<Ranked> {
    let own: std::collections::HashMap<i64, f64> = results
        .iter()
        .map(|r| (r.id, r.standing.relevance))
        .collect();
    let mut sessions: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for r in &results {
        if let Some(context) = contexts.get(&r.id) {
            let best = sessions.entry(context.session.as_str()).or_insert(0.0);
            *best = best.max(r.standing.relevance);
        }
    }
    let mut out = results;
    for r in &mut out {
        let Some(context) = contexts.get(&r.id) else {
            continue;
        };
        let neighbours: f64 = context
            .around
            .iter()
            .zip(NEIGHBOUR_SHARE)
            .map(|(at, share)| share * at.iter().flatten().filter_map(|n| own.get(n)).sum::<f64>())
            .sum();
        let session = sessions
            .get(context.session.as_str())
            .copied()
            .unwrap_or(0.0);
        r.standing.relevance += neighbours + SESSION_SHARE * session;
    }
    // Stable: results their context does not tell apart keep their order.
    out.sort_by(|x, y| Standing::order(&x.standing, &y.standing));
    out
}

/// How much more than its plain share of the query's weight a result that holds most of it
/// gains: the share is raised to this power. On the relevance bench, 1, 1.5 and 2 gave LoCoMo
/// recall@10 0.707, 0.715 and 0.716, and the coding set's recall@5 0.883, 0.894 and 0.862.
const SHARE_POWER: f64 = 1.5;

/// A row's tier (2: the whole query as typed; 1: every term; 0: some) and its share of the
/// query's weight (of its terms, when `weights` is empty), raised to [`SHARE_POWER`].
fn holds(query: &Query, weights: &[f64], matched: u64) -> (u8, f64) {
    let mut terms = 0u64;
    let mut whole = false;
    for (n, phrase) in query.phrases.iter().enumerate().take(64) {
        if matched & (1 << n) != 0 {
            match phrase {
                Some(term) => terms |= 1 << term,
                None => whole = true,
            }
        }
    }
    let held = terms.count_ones() as usize;
    let all = query.terms.max(1);
    let tier = if whole {
        2
    } else if held >= all && all > 1 {
        1
    } else {
        0
    };
    let whole_weight: f64 = weights.iter().sum();
    let share = if weights.len() == query.terms && whole_weight > 0.0 {
        let held: f64 = (0..weights.len().min(64))
            .filter(|t| terms & (1 << t) != 0)
            .map(|t| weights[t])
            .sum();
        held / whole_weight
    } else {
        held as f64 / all as f64
    };
    (tier, share.powf(SHARE_POWER))
}

/// Registers `cmem_matched(fts)`, `cmem_rarity(fts)` and `cmem_bm25(fts, ...)` on `conn`.
pub fn register(conn: &Connection) -> Result<()> {
    super::auxiliary::register(
        conn,
        &[
            (c"cmem_matched", matched),
            (c"cmem_rarity", rarity_counts),
            (c"cmem_bm25", super::bm25::bm25),
        ],
        "the search ranking",
    )
}

/// The auxiliary function `cmem_rarity`: "ROWS N0 N1 ...", the rows of the index and how many
/// hold each phrase of the expression, as bm25 counts them (whatever row it is called on).
unsafe extern "C" fn rarity_counts(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    /// Counts the rows `xQueryPhrase` visits.
    unsafe extern "C" fn count(
        _api: *const ffi::Fts5ExtensionApi,
        _fts: *mut ffi::Fts5Context,
        rows: *mut std::ffi::c_void,
    ) -> c_int {
        // SAFETY: `rows` is the counter handed to `xQueryPhrase` below, alive for its call.
        unsafe { *rows.cast::<i64>() += 1 };
        ffi::SQLITE_OK
    }
    // SAFETY: FTS5 hands a valid API, context and result context for the duration of the
    // call; each counter outlives the `xQueryPhrase` that counts into it.
    unsafe {
        answer(ctx, || {
            let api = &*api;
            let (Some(row_count), Some(phrase_count), Some(query_phrase)) =
                (api.xRowCount, api.xPhraseCount, api.xQueryPhrase)
            else {
                return Err(ffi::SQLITE_ERROR);
            };
            let mut rows: i64 = 0;
            ok(row_count(fts, &mut rows))?;
            let mut out = rows.to_string();
            for phrase in 0..phrase_count(fts) {
                let mut held: i64 = 0;
                let counter = (&raw mut held).cast::<std::ffi::c_void>();
                ok(query_phrase(fts, phrase, counter, Some(count)))?;
                out.push(' ');
                out.push_str(&held.to_string());
            }
            Ok(Answer::Text(out))
        });
    }
}

/// The auxiliary function: the bitmask of the phrases (the first 64) that occur in the row.
unsafe extern "C" fn matched(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 hands a valid API, context and result context for the duration of the
    // call.
    unsafe {
        answer(ctx, || {
            let api = &*api;
            let (Some(phrase_count), Some(phrase_first)) = (api.xPhraseCount, api.xPhraseFirst)
            else {
                return Err(ffi::SQLITE_ERROR);
            };
            // A phrase's first match tells that it has one: neither its other matches nor the
            // other phrases' (which `xInst` would merge into one list) need reading.
            let mut mask = 0u64;
            for phrase in 0..phrase_count(fts).min(64) {
                if first_match(phrase_first, fts, phrase)?.1 >= 0 {
                    mask |= 1 << phrase;
                }
            }
            Ok(Answer::Int(mask as i64))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::fts::query::parse;

    fn candidate(id: i64, bm25: f64, matched: u64, kind: Kind, age_days: f64) -> Candidate {
        Candidate {
            id,
            bm25,
            matched,
            kind,
            age_days,
            digest: id,
            place: None,
        }
    }

    fn order(query: &str, candidates: Vec<Candidate>) -> Vec<i64> {
        rank(&parse(query).unwrap().unwrap(), &[], candidates)
            .iter()
            .map(|r| r.id)
            .collect()
    }

    #[test]
    fn the_whole_query_then_all_its_words_come_first() {
        // Phrases: 0 login, 1 timeout, 2 "login timeout".
        let ranked = order(
            "login timeout",
            vec![
                candidate(1, -9.0, 0b001, Kind::Observation, 1.0),
                candidate(2, -3.0, 0b011, Kind::Observation, 1.0),
                candidate(3, -2.0, 0b111, Kind::Observation, 1.0),
            ],
        );
        assert_eq!(ranked, [3, 2, 1]);
    }

    #[test]
    fn what_was_written_for_people_and_recent_work_weigh_more() {
        let ranked = order(
            "deploy",
            vec![
                candidate(1, -1.0, 1, Kind::Observation, 1.0),
                candidate(2, -1.0, 1, Kind::Memory, 1.0),
                candidate(3, -1.0, 1, Kind::Prompt, 1.0),
            ],
        );
        assert_eq!(ranked, [2, 3, 1]);
        let ranked = order(
            "deploy",
            vec![
                candidate(1, -1.02, 1, Kind::Observation, 400.0),
                candidate(2, -1.0, 1, Kind::Observation, 0.5),
            ],
        );
        assert_eq!(ranked, [2, 1]);
    }

    #[test]
    fn a_rare_term_weighs_more_of_the_share_than_a_common_one() {
        // Terms: 0 maria (in every turn), 1 pottery, 2 glaze. Row 1 holds maria and pottery,
        // row 2 pottery and glaze: by count both hold two thirds, by weight row 2 most.
        let query = parse("maria pottery glaze").unwrap().unwrap();
        let rows = || {
            vec![
                candidate(1, -3.0, 0b011, Kind::Prompt, 1.0),
                candidate(2, -2.9, 0b110, Kind::Prompt, 1.0),
            ]
        };
        let ids = |weights: &[f64]| -> Vec<i64> {
            rank(&query, weights, rows()).iter().map(|r| r.id).collect()
        };
        assert_eq!(ids(&[]), [1, 2]);
        assert_eq!(ids(&[0.1, 2.0, 2.0]), [2, 1]);
    }

    #[test]
    fn the_same_text_is_one_result_with_a_count() {
        let query = parse("cargo test").unwrap().unwrap();
        let mut a = candidate(1, -2.0, 0b111, Kind::Observation, 1.0);
        let mut b = candidate(2, -2.0, 0b111, Kind::Observation, 3.0);
        a.digest = 7;
        b.digest = 7;
        let ranked = rank(
            &query,
            &[],
            vec![b, a, candidate(3, -1.0, 1, Kind::Prompt, 1.0)],
        );
        assert_eq!(
            ranked.iter().map(|r| (r.id, r.count)).collect::<Vec<_>>(),
            [(1, 2), (3, 1)]
        );
    }

    /// The order of `candidates` for `puppy beach` once ranked in their `contexts`:
    /// (id, session, around).
    fn puppy_beach_in_context(
        candidates: Vec<Candidate>,
        contexts: &[(i64, &str, Around)],
    ) -> Vec<i64> {
        let ranked = rank(&parse("puppy beach").unwrap().unwrap(), &[], candidates);
        let contexts = contexts
            .iter()
            .map(|&(id, session, around)| {
                let session = session.to_string();
                (id, Context { session, around })
            })
            .collect();
        in_context(ranked, &contexts).iter().map(|r| r.id).collect()
    }

    #[test]
    fn its_context_lifts_a_result_within_its_tier_only() {
        // Phrases: 0 puppy, 1 beach, 2 "puppy beach".
        let order = puppy_beach_in_context(
            vec![
                candidate(1, -4.0, 0b001, Kind::Prompt, 1.0),
                candidate(2, -2.0, 0b010, Kind::Prompt, 1.0),
                candidate(3, -2.5, 0b010, Kind::Prompt, 1.0),
                candidate(4, -0.1, 0b011, Kind::Prompt, 1.0),
            ],
            &[
                (1, "a", [[None, Some(2)], [None, None]]),
                (2, "a", [[Some(1), None], [None, None]]),
                (3, "b", [[None, None], [None, None]]),
                (4, "c", [[None, None], [None, None]]),
            ],
        );
        assert_eq!(order, [4, 1, 2, 3]);
    }

    #[test]
    fn a_result_two_items_away_lifts_it_less_than_one_next_to_it() {
        // Row 1 is next to the puppy, row 2 two items away, row 3 has none (sessions apart,
        // so that only the neighbours count).
        let order = puppy_beach_in_context(
            vec![
                candidate(9, -4.0, 0b001, Kind::Prompt, 1.0),
                candidate(1, -1.0, 0b010, Kind::Prompt, 1.0),
                candidate(2, -1.0, 0b010, Kind::Prompt, 1.0),
                candidate(3, -1.1, 0b010, Kind::Prompt, 1.0),
            ],
            &[
                (9, "a", [[None, Some(1)], [None, None]]),
                (1, "b", [[Some(9), None], [None, None]]),
                (2, "c", [[None, None], [Some(9), None]]),
                (3, "d", [[None, None], [None, None]]),
            ],
        );
        assert_eq!(order, [9, 1, 2, 3]);
    }
}
