//! How near two short texts are in meaning, with no model to run: a static model (a vector per
//! vocabulary piece, a text the mean of its pieces' vectors) distilled from all-MiniLM-L6-v2
//! and linked into the binary (`model/`, its licence and how it was made in `model/NOTICE`).
//! A coding task ("write a rate limiter for the upload endpoint") shares no word with the
//! standing instruction that applies to it ("always add type hints to public functions"), and
//! full text cannot tell which of a project's dozen rules bear on it; this model orders them
//! (docs/relevance.md, "The semantic channel"). Nothing is fetched, nothing is computed in the
//! background: a few texts are embedded when a search asks, in microseconds each. No hook
//! reads it.

mod wordpiece;

use std::sync::OnceLock;

use wordpiece::Vocabulary;

/// The size of a vector.
const DIMS: usize = 256;

/// 30,522 rows of `DIMS` int8, a row per vocabulary id.
static TABLE: &[u8] = include_bytes!("model/table.i8");
/// Each row's scale, a little-endian f32.
static SCALES: &[u8] = include_bytes!("model/scales.f32");
/// The vocabulary, a piece per line in id order.
static VOCAB: &str = include_str!("model/vocab.txt");
/// The ids in the byte order of their pieces, little-endian u16.
static ORDER: &[u8] = include_bytes!("model/order.u16");

/// A text as the model reads it: unit length, or all zero when it holds no known piece.
pub struct Meaning([f32; DIMS]);

impl Meaning {
    /// The cosine of the two texts' vectors: 1 the same meaning, 0 nothing in common.
    pub fn near(&self, other: &Meaning) -> f32 {
        self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum()
    }
}

/// What `text` means to the model.
pub fn of(text: &str) -> Meaning {
    static VOCABULARY: OnceLock<Vocabulary> = OnceLock::new();
    let ids = VOCABULARY
        .get_or_init(|| Vocabulary::new(VOCAB, ORDER))
        .ids(text);
    let mut sum = [0f32; DIMS];
    let mut rows = 0usize;
    for id in ids {
        let at = id as usize;
        let (Some(row), Some(scale)) = (
            TABLE.get(at * DIMS..(at + 1) * DIMS),
            SCALES.get(at * 4..at * 4 + 4),
        ) else {
            continue;
        };
        let scale = f32::from_le_bytes([scale[0], scale[1], scale[2], scale[3]]);
        for (s, &q) in sum.iter_mut().zip(row) {
            *s += f32::from(q.cast_signed()) * scale;
        }
        rows += 1;
    }
    let length = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if rows > 0 && length > 0.0 {
        for s in &mut sum {
            *s /= length;
        }
    }
    Meaning(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linked_model_is_whole() {
        assert_eq!(TABLE.len() % DIMS, 0);
        assert_eq!(TABLE.len() / DIMS, SCALES.len() / 4);
        assert_eq!(TABLE.len() / DIMS, VOCAB.lines().count());
        let pieces: Vec<&str> = VOCAB.lines().collect();
        let order: Vec<&str> = ORDER
            .chunks(2)
            .map(|id| pieces[usize::from(u16::from_le_bytes([id[0], id[1]]))])
            .collect();
        assert_eq!(order.len(), pieces.len());
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "order.u16 is not sorted"
        );
    }

    /// The ids BERT's tokenizer (Hugging Face `tokenizers`, the model's `tokenizer.json`, no
    /// special tokens) gives these texts.
    #[test]
    fn texts_are_cut_as_the_models_own_tokenizer_cuts_them() {
        let vocabulary = Vocabulary::new(VOCAB, ORDER);
        let cases: &[(&str, &[u32])] = &[
            (
                "add a late fee of 1.5% per month on overdue invoices",
                &[
                    5587, 1037, 2397, 7408, 1997, 1015, 1012, 1019, 1003, 2566, 3204, 2006, 2058,
                    20041, 1999, 6767, 23522,
                ],
            ),
            (
                "fix the flaky login test",
                &[8081, 1996, 13109, 4817, 2100, 8833, 2378, 3231],
            ),
            (
                "test files go under `spec/`, not `tests/`",
                &[
                    3231, 6764, 2175, 2104, 1036, 28699, 1013, 1036, 1010, 2025, 1036, 5852, 1013,
                    1036,
                ],
            ),
            (
                "Prefix _private_helpers in Café's naïve code—日本語 ok?",
                &[
                    17576, 1035, 2797, 1035, 2393, 2545, 1999, 7668, 1005, 1055, 15743, 3642, 1517,
                    1864, 1876, 1950, 7929, 1029,
                ],
            ),
        ];
        for (text, ids) in cases {
            assert_eq!(vocabulary.ids(text), *ids, "{text}");
        }
    }

    #[test]
    fn a_task_is_nearer_the_rule_that_applies_than_one_that_does_not() {
        let task = of("fix the flaky login test");
        let tests = of("test files go under `spec/`, not `tests/`");
        let branches = of("never commit directly to main");
        assert!(task.near(&tests) > task.near(&branches) + 0.2);
        assert!((tests.near(&tests) - 1.0).abs() < 1e-4);
    }

    #[test]
    fn a_text_of_nothing_known_is_near_nothing() {
        assert_eq!(of("").near(&of("money")), 0.0);
    }
}
