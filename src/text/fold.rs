//! Lower case without accents, and the scripts written without spaces: how the search index
//! and the model that ranks standing instructions both read a word, so that `Café` is `cafe`
//! to each of them.

/// Whether `c` is of a script written without spaces between words: Han, Hiragana, Katakana,
/// Hangul (Korean has spaces, but between phrases of several words).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F | 0x31F0..=0x31FF
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF
        | 0xFF66..=0xFF9F | 0x20000..=0x2FA1F)
}

/// Lower case without accents, as people type when they search: `Café` is `cafe`, `Straße`
/// is `strasse`, `Ærø` is `aero`. Latin letters are folded by the tables below; combining
/// marks (text in decomposed form) are dropped.
pub fn fold(piece: &str, out: &mut String) {
    out.clear();
    if piece.is_ascii() {
        out.push_str(piece);
        out.make_ascii_lowercase();
        return;
    }
    for c in piece.chars().flat_map(char::to_lowercase) {
        let code = c as u32;
        let table = |from: u32, table: &[u8]| {
            let letter = *table.get((code - from) as usize)?;
            (letter != b'.').then_some(char::from(letter))
        };
        let plain = match code {
            0x300..=0x36F => continue,
            0xC0..=0x24F => table(0xC0, LATIN),
            0x1E00..=0x1EFF => table(0x1E00, LATIN_ADDITIONAL),
            _ => None,
        };
        match (c, plain) {
            (_, Some(letter)) => out.push(letter),
            ('ß', _) => out.push_str("ss"),
            ('æ', _) => out.push_str("ae"),
            ('œ', _) => out.push_str("oe"),
            ('þ', _) => out.push_str("th"),
            ('ĳ', _) => out.push_str("ij"),
            ('ð' | 'đ', _) => out.push('d'),
            ('ø', _) => out.push('o'),
            ('ħ', _) => out.push('h'),
            ('ı', _) => out.push('i'),
            ('ł' | 'ŀ', _) => out.push('l'),
            ('ŧ', _) => out.push('t'),
            ('ŋ', _) => out.push('n'),
            _ => out.push(c),
        }
    }
}

/// The letter each of U+00C0 to U+024F is written with, '.' for the others (made from
/// Unicode's decompositions).
const LATIN: &[u8] = b"aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.yaaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii...jjkk.llllll....nnnnnn...oooooo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzzs................................oo.............uu............................aaiioouuuuuuuuuu.aaaa....ggkkoooo..j...gg..nnaa....aaaaeeeeiiiioooorrrruuuusstt..hh......aaeeooooooooyy............................";
/// The same for U+1E00 to U+1EFF (Vietnamese and others).
const LATIN_ADDITIONAL: &[u8] = b"aabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmmmmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvvwwwwwwwwwwxxxxyyzzzzzzhtwy.s....aaaaaaaaaaaaaaaaaaaaaaaaeeeeeeeeeeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy......";
