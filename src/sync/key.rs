//! The secret key of a sync remote, and the one-line token a person carries between machines.
//!
//! The key is 32 random bytes from the operating system (getrandom). The token is `cmk1-`
//! followed by the key, the first 8 bytes of the remote's id and a CRC-32 of both, in base32
//! (lower case, no padding): one word a terminal never wraps in the middle of a character, that
//! survives copying through a chat or a password manager, whose mistyped letters the checksum
//! catches before anything is tried with it, and that says which remote it was made for, so
//! that a key of another remote is told apart from a wrong one. The CRC is no protection: the
//! authenticated encryption is (see `chunk`).
//!
//! The key is wiped from memory once used: its bytes live on the heap (moving a `Key` copies
//! no secret) and are zeroed when it is dropped, and so is every buffer that held it in clear
//! on the way (a token's bytes, a token read back). The maintenance process syncs in the
//! background and lives on: what a later bug or a core dump could show of its memory holds no
//! key. Not wiped: the token on its way to a person who asked to see it (`sync key`, `sync
//! setup`) or into the key file, in commands that end at once.

use anyhow::{Result, bail};
use zeroize::{Zeroize, Zeroizing};

/// What every token starts with: claude-mem key, version 1.
const PREFIX: &str = "cmk1-";
const KEY_BYTES: usize = 32;
/// How much of the remote's id a token names.
pub const REMOTE_PREFIX: usize = 8;
const BODY: usize = KEY_BYTES + REMOTE_PREFIX + 4;
/// The letters of a token after its prefix.
const LETTERS: usize = (BODY * 8).div_ceil(5);
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A remote's secret key, with the id of the remote it was made for.
#[derive(PartialEq, Eq)]
pub struct Key {
    /// Zeroed when the key is dropped.
    pub bytes: Box<[u8; KEY_BYTES]>,
    /// The first bytes of the remote's id.
    pub remote: [u8; REMOTE_PREFIX],
}

impl Drop for Key {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

// The key never lands in a log or an error message by accident.
impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key(remote {})", hex(&self.remote))
    }
}

impl Key {
    /// A new random key for the remote whose id is `remote`.
    pub fn generate(remote: &[u8; 16]) -> Result<Key> {
        let mut bytes = Box::new([0u8; KEY_BYTES]);
        random(&mut bytes[..])?;
        let mut prefix = [0u8; REMOTE_PREFIX];
        prefix.copy_from_slice(&remote[..REMOTE_PREFIX]);
        Ok(Key {
            bytes,
            remote: prefix,
        })
    }

    /// Whether this key was made for the remote whose id is `remote`.
    pub fn made_for(&self, remote: &[u8; 16]) -> bool {
        self.remote[..] == remote[..REMOTE_PREFIX]
    }

    /// The token a person copies. Every buffer is sized once, so no growth leaves a copy
    /// behind.
    pub fn token(&self) -> String {
        let mut body = Zeroizing::new(Vec::with_capacity(BODY));
        body.extend_from_slice(&self.bytes[..]);
        body.extend_from_slice(&self.remote);
        let crc = crc32fast::hash(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        let mut token = String::with_capacity(PREFIX.len() + LETTERS);
        token.push_str(PREFIX);
        base32(&body, &mut token);
        token
    }

    /// Reads a token as a person may have pasted it: spaces, line breaks and upper case are
    /// forgiven, a changed or missing letter is not.
    pub fn parse(text: &str) -> Result<Key> {
        // Sized once: no growth leaves a copy behind.
        let mut clean = Zeroizing::new(String::with_capacity(text.len()));
        clean.extend(
            text.chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| c.to_ascii_lowercase()),
        );
        let Some(body) = clean.strip_prefix(PREFIX) else {
            bail!("that is not a claude-mem sync key (a key starts with {PREFIX})");
        };
        let bytes = unbase32(body).filter(|b| b.len() == BODY).ok_or_else(|| {
            anyhow::anyhow!(
                "the key is cut or mistyped (it is {} letters after {PREFIX}, of a-z and 2-7): \
                     copy it again from `claude-mem sync key` on a machine that syncs",
                LETTERS
            )
        })?;
        let (payload, crc) = bytes.split_at(KEY_BYTES + REMOTE_PREFIX);
        if crc32fast::hash(payload).to_le_bytes()[..] != crc[..] {
            bail!(
                "the key is mistyped (its checksum does not match): copy it again from \
                 `claude-mem sync key` on a machine that syncs"
            );
        }
        let mut key = Key {
            bytes: Box::new([0; KEY_BYTES]),
            remote: [0; REMOTE_PREFIX],
        };
        key.bytes.copy_from_slice(&payload[..KEY_BYTES]);
        key.remote.copy_from_slice(&payload[KEY_BYTES..]);
        Ok(key)
    }
}

/// Fills `buf` from the operating system's random source.
pub fn random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|err| anyhow::anyhow!("no random numbers from the system: {err}"))
}

/// `n` random bytes as lower-case hex: the ids of remotes and machines.
pub fn random_hex(n: usize) -> Result<String> {
    let mut bytes = vec![0u8; n];
    random(&mut bytes)?;
    Ok(hex(&bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower-case hex back to bytes; `None` for anything else.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Appends `bytes` in base32 to `out`.
fn base32(bytes: &[u8], out: &mut String) {
    let (mut buffer, mut bits) = (0u32, 0);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(*byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
}

/// The bytes of base32 `text`, wiped when dropped (a token's are a key); `None` for anything
/// else.
fn unbase32(text: &str) -> Option<Zeroizing<Vec<u8>>> {
    let mut out = Zeroizing::new(Vec::with_capacity(text.len() * 5 / 8 + 1));
    let (mut buffer, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let value = ALPHABET.iter().position(|a| *a == c)? as u32;
        buffer = (buffer << 5) | value;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    // The last letter's spare bits are zero as written: a letter that differs only there is a
    // typo the checksum cannot see (it decodes to the same bytes), so it is refused here.
    (buffer & ((1 << bits) - 1) == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_and_a_changed_letter_is_caught() {
        let key = Key::generate(&[7; 16]).unwrap();
        let token = key.token();
        assert!(token.starts_with("cmk1-"), "{token}");
        assert!(!token.contains(['=', '+', '/']), "{token}");
        assert_eq!(Key::parse(&token).unwrap(), key);
        // Pasted in upper case, broken over lines.
        let pasted = format!("  {}\n{}  ", &token[..30].to_uppercase(), &token[30..]);
        assert_eq!(Key::parse(&pasted).unwrap(), key);
        // The last letter carries spare bits: a typo there is caught whichever bit it changes.
        for at in [5, 20, token.len() - 1] {
            let mut typo = token.clone().into_bytes();
            typo[at] = if typo[at] == b'a' { b'b' } else { b'a' };
            let err = Key::parse(std::str::from_utf8(&typo).unwrap()).unwrap_err();
            assert!(format!("{err}").contains("mistyped"), "{at}: {err}");
        }
        let cut = Key::parse(&token[..token.len() - 3]).unwrap_err();
        assert!(format!("{cut}").contains("cut or mistyped"), "{cut}");
        assert!(Key::parse("hello").is_err());
        assert!(key.made_for(&[7; 16]));
        assert!(!key.made_for(&[8; 16]));
        assert!(!format!("{key:?}").contains(&hex(&key.bytes[..])));
    }

    #[test]
    fn a_typo_in_the_last_letters_spare_bits_is_caught() {
        // Keys whose token ends in `a` (spare bits 000): `b` differs only in a spare bit. About
        // one key in four ends so; the earlier test passed or failed by the random key.
        for _ in 0..64 {
            let token = Key::generate(&[7; 16]).unwrap().token();
            let last = token.len() - 1;
            let mut typo = token.clone().into_bytes();
            typo[last] = ALPHABET[(ALPHABET.iter().position(|a| *a == typo[last]).unwrap()) ^ 1];
            assert!(
                Key::parse(std::str::from_utf8(&typo).unwrap()).is_err(),
                "{token}"
            );
        }
    }

    #[test]
    fn two_keys_differ() {
        let a = Key::generate(&[1; 16]).unwrap();
        let b = Key::generate(&[1; 16]).unwrap();
        assert_ne!(a.bytes, b.bytes);
    }
}
