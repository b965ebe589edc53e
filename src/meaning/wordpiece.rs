//! Text into the model's vocabulary ids, as BERT's uncased tokenizer cuts it (the one the model
//! was distilled through): control characters dropped, lower case without accents, a space
//! around each CJK character and each punctuation mark, then each word as the longest pieces
//! the vocabulary holds, the pieces after the first written `##…`. A word the pieces cannot
//! spell is the unknown token, as in BERT.

use crate::text::find;

/// Longer words are the unknown token (BERT's `max_input_chars_per_word`).
const LONGEST_WORD: usize = 100;

/// The vocabulary: each id's piece, the ids in the byte order of their pieces (a lookup is a
/// binary search: a search that starts builds no table of 30,522 entries), the unknown token.
pub struct Vocabulary {
    pieces: Vec<&'static str>,
    order: &'static [u8],
    unknown: u32,
}

impl Vocabulary {
    /// From the model's `vocab.txt` (a piece per line, in id order) and `order.u16` (the ids
    /// sorted by their pieces' bytes, little-endian u16).
    pub fn new(lines: &'static str, order: &'static [u8]) -> Vocabulary {
        let mut pieces = Vec::with_capacity(order.len() / 2);
        let mut start = 0;
        for end in find::bytes(b'\n', lines.as_bytes()) {
            pieces.push(&lines[start..end]);
            start = end + 1;
        }
        let mut vocabulary = Vocabulary {
            pieces,
            order,
            unknown: 0,
        };
        vocabulary.unknown = vocabulary.id("[UNK]").unwrap_or(0);
        vocabulary
    }

    /// The id of `piece`, if the vocabulary holds it.
    fn id(&self, piece: &str) -> Option<u32> {
        let at = |k: usize| {
            u32::from(u16::from_le_bytes([
                self.order[2 * k],
                self.order[2 * k + 1],
            ]))
        };
        let (mut low, mut high) = (0, self.order.len() / 2);
        while low < high {
            let middle = low + (high - low) / 2;
            let id = at(middle);
            match self
                .pieces
                .get(id as usize)?
                .as_bytes()
                .cmp(piece.as_bytes())
            {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(id),
            }
        }
        None
    }

    /// The ids of `text`'s pieces, in order.
    pub fn ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut folded = String::new();
        for word in words(text) {
            crate::text::fold(&word, &mut folded);
            self.pieces(&folded, &mut ids);
        }
        ids
    }

    /// The longest pieces first, from the start of `word`.
    fn pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > LONGEST_WORD {
            ids.push(self.unknown);
            return;
        }
        let found = ids.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            let id = loop {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(id) = self.id(&piece) {
                    break Some(id);
                }
                match word[..end].char_indices().next_back() {
                    Some((at, _)) if at > start => end = at,
                    _ => break None,
                }
            };
            let Some(id) = id else {
                ids.truncate(found);
                ids.push(self.unknown);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}

/// The words of `text` as BERT's basic tokenizer splits them: at white space, with each
/// punctuation mark and each CJK character a word of its own.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let end = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.chars() {
        if c == '\0' || c == '\u{FFFD}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if c.is_whitespace() {
            end(&mut word, &mut words);
        } else if is_punctuation(c) || crate::text::is_cjk(c) {
            end(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.push(c);
        }
    }
    end(&mut word, &mut words);
    words
}

/// BERT's punctuation: every ASCII character that is not a letter, a digit or a space, and
/// outside ASCII what is neither a letter, a digit, a mark nor a space (Unicode's P classes,
/// and its symbols with them: std has no table of the classes).
fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    !(c.is_alphanumeric() || c.is_whitespace() || ('\u{300}'..='\u{36F}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        let lines = "[PAD]\n[UNK]\nrate\nlimit\n##er\n##s\nthe\n_\nload\n##ing\ncafe\n,\n";
        let mut ids: Vec<u16> = (0..12).collect();
        let pieces: Vec<&str> = lines.lines().collect();
        ids.sort_by_key(|&i| pieces[usize::from(i)]);
        let order: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        Vocabulary::new(lines, order.leak())
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces_the_vocabulary_holds() {
        let v = vocabulary();
        assert_eq!(v.ids("Rate limiters"), vec![2, 3, 4, 5]);
        assert_eq!(v.ids("_loading, the"), vec![7, 8, 9, 11, 6]);
        assert_eq!(v.ids("Café"), vec![10]);
    }

    #[test]
    fn a_word_the_pieces_cannot_spell_is_the_unknown_token() {
        let v = vocabulary();
        assert_eq!(v.ids("rateq the"), vec![1, 6]);
        assert_eq!(v.ids(&"a".repeat(101)), vec![1]);
    }

    #[test]
    fn punctuation_and_cjk_characters_are_words_of_their_own() {
        assert_eq!(
            words("a,b 日本 x—y\u{7}"),
            ["a", ",", "b", "日", "本", "x", "—", "y"]
        );
    }
}
