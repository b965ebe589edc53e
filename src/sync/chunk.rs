//! What the remote holds, byte by byte: sealed chunks of records, and one sealed header.
//!
//! A chunk is JSON Lines (see `ops`), compressed (deflate, flate2's pure-Rust backend), then
//! encrypted with XChaCha20-Poly1305 (RustCrypto's `chacha20poly1305`) under the remote's key,
//! with a fresh random 24-byte nonce per file: random nonces of that size never repeat in
//! practice, so no counter has to survive a crash or be shared between machines. The
//! associated data binds a chunk to its place (the remote's id, the machine's folder, its
//! number): a chunk copied under another name, or to another remote, fails to open as surely
//! as a changed byte. A chunk that fails to open is refused whole.
//!
//! The header (`header` at the root of the remote's tree) holds the remote's random id in
//! clear, so that a key made for another remote is told apart from a wrong key, and a sealed
//! format name, which only the key opens: opening it proves the key before anything is read.

use std::io::{Read, Write};

use anyhow::{Context, Result, bail};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

use super::key::{self, Key};

const CHUNK_MAGIC: &[u8; 8] = b"cmchunk1";
const HEADER_MAGIC: &[u8; 8] = b"cmhead01";
const NONCE: usize = 24;
const TAG: usize = 16;
/// What the header seals: the format of the remote, which a later claude-mem may change.
const HEADER_FORMAT: &[u8] = b"claude-mem-sync/1";
/// No chunk this claude-mem writes comes near this once inflated (see `ops::CHUNK_BYTES`): a
/// larger one is refused rather than filling memory.
const MAX_PLAIN: u64 = 512 << 20;

/// A sealed chunk larger than this is refused from its size alone, never read: a remote that
/// anyone can push to cannot make a sync hold more. What this claude-mem writes stays far
/// under it: `ops::CHUNK_BYTES` of text and one more record (at most the payload cap,
/// `CLAUDE_MEM_MAX_PAYLOAD_BYTES`), compressed.
pub const MAX_SEALED: u64 = 16 << 20;

/// Where a chunk belongs: bound into its encryption.
pub struct Place<'a> {
    pub remote: &'a [u8; 16],
    pub machine: &'a str,
    pub seq: i64,
}

impl Place<'_> {
    fn aad(&self) -> Vec<u8> {
        let mut aad = CHUNK_MAGIC.to_vec();
        aad.extend_from_slice(self.remote);
        aad.extend_from_slice(format!("{}/{}", self.machine, self.seq).as_bytes());
        aad
    }
}

/// The cipher, which keeps its own copy of the key (wiped when it is dropped: the crate's
/// `zeroize` feature); taken by reference, so that no other copy is left on the stack.
fn cipher(key: &Key) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new((&*key.bytes).into())
}

fn nonce() -> Result<[u8; NONCE]> {
    let mut nonce = [0u8; NONCE];
    key::random(&mut nonce)?;
    Ok(nonce)
}

/// Compresses and encrypts a chunk's text for its place.
pub fn seal(key: &Key, place: &Place, plain: &[u8]) -> Result<Vec<u8>> {
    let mut deflate = DeflateEncoder::new(Vec::new(), Compression::default());
    deflate.write_all(plain)?;
    let packed = deflate.finish()?;
    let nonce = nonce()?;
    let sealed = cipher(key)
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: &packed,
                aad: &place.aad(),
            },
        )
        .map_err(|_| anyhow::anyhow!("cannot encrypt a chunk"))?;
    let mut out = CHUNK_MAGIC.to_vec();
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Decrypts and inflates a chunk read from `place`; an error when it is not whole, was
/// changed, was moved, or was sealed with another key.
pub fn open(key: &Key, place: &Place, bytes: &[u8]) -> Result<Vec<u8>> {
    let Some(rest) = bytes.strip_prefix(CHUNK_MAGIC) else {
        bail!("not a claude-mem chunk");
    };
    if rest.len() < NONCE + TAG {
        bail!("cut short");
    }
    let (nonce, sealed) = rest.split_at(NONCE);
    let nonce: [u8; NONCE] = nonce.try_into()?;
    let packed = cipher(key)
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: sealed,
                aad: &place.aad(),
            },
        )
        .map_err(|_| anyhow::anyhow!("it does not authenticate (cut, changed, or moved)"))?;
    let mut plain = Vec::new();
    DeflateDecoder::new(&packed[..])
        .take(MAX_PLAIN + 1)
        .read_to_end(&mut plain)
        .context("it does not inflate")?;
    if plain.len() as u64 > MAX_PLAIN {
        bail!("it inflates past {} MiB", MAX_PLAIN >> 20);
    }
    Ok(plain)
}

/// The header of a new remote.
pub fn seal_header(key: &Key, remote: &[u8; 16]) -> Result<Vec<u8>> {
    let nonce = nonce()?;
    let aad = header_aad(remote);
    let sealed = cipher(key)
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: HEADER_FORMAT,
                aad: &aad,
            },
        )
        .map_err(|_| anyhow::anyhow!("cannot encrypt the header"))?;
    let mut out = aad;
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// The remote's id, read from its header without the key; `None` when it is no header of ours.
pub fn header_remote(bytes: &[u8]) -> Option<[u8; 16]> {
    bytes.strip_prefix(HEADER_MAGIC)?.get(..16)?.try_into().ok()
}

/// Whether `key` opens the header: the key is this remote's.
pub fn opens_header(key: &Key, bytes: &[u8]) -> bool {
    let Some(remote) = header_remote(bytes) else {
        return false;
    };
    let rest = &bytes[HEADER_MAGIC.len() + 16..];
    if rest.len() < NONCE + TAG {
        return false;
    }
    let (nonce, sealed) = rest.split_at(NONCE);
    let Ok(nonce) = <[u8; NONCE]>::try_from(nonce) else {
        return false;
    };
    cipher(key)
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: sealed,
                aad: &header_aad(&remote),
            },
        )
        .is_ok_and(|format| format == HEADER_FORMAT)
}

fn header_aad(remote: &[u8; 16]) -> Vec<u8> {
    let mut aad = HEADER_MAGIC.to_vec();
    aad.extend_from_slice(remote);
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(seq: i64) -> Place<'static> {
        Place {
            remote: &[3; 16],
            machine: "m1",
            seq,
        }
    }

    #[test]
    fn a_chunk_opens_only_whole_in_its_place_with_its_key() {
        let key = Key::generate(&[3; 16]).unwrap();
        let plain = b"{\"type\":\"prompt\",\"prompt_text\":\"secret marker\"}\n".repeat(50);
        let sealed = seal(&key, &place(1), &plain).unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
        assert!(
            sealed.len() < plain.len() / 4,
            "compressed: {}",
            sealed.len()
        );
        assert_eq!(open(&key, &place(1), &sealed).unwrap(), plain);
        // Another nonce each time.
        assert_ne!(seal(&key, &place(1), &plain).unwrap(), sealed);
        let mut flipped = sealed.clone();
        let last = flipped.len() - 20;
        flipped[last] ^= 1;
        assert!(open(&key, &place(1), &flipped).is_err());
        assert!(open(&key, &place(1), &sealed[..sealed.len() - 1]).is_err());
        assert!(open(&key, &place(1), &sealed[..10]).is_err());
        assert!(
            open(&key, &place(2), &sealed).is_err(),
            "moved to another number"
        );
        let other = Key::generate(&[3; 16]).unwrap();
        assert!(open(&other, &place(1), &sealed).is_err());
    }

    #[test]
    fn the_header_tells_its_remote_and_opens_with_its_key() {
        let remote = [9; 16];
        let key = Key::generate(&remote).unwrap();
        let header = seal_header(&key, &remote).unwrap();
        assert_eq!(header_remote(&header), Some(remote));
        assert!(opens_header(&key, &header));
        assert!(!opens_header(&Key::generate(&remote).unwrap(), &header));
        let mut changed = header.clone();
        changed[10] ^= 1;
        assert!(!opens_header(&key, &changed));
        assert_eq!(header_remote(b"hello world, this is text"), None);
    }
}
