//! The remote as the user names it, made safe to hand to git and to show: a remote that git
//! would read as an option (`-…`) or as a program to run (`ext::`, `fd::`) is refused, and a
//! user name and password in an http(s) URL (a token, often) are taken out of it. The URL
//! without them is what is kept, shown and passed on git's command line; the credential is
//! kept in a file of its own (`sync/credential`, 0600) and given to git only through a
//! credential helper that reads it from git's environment, which other users cannot read
//! (`Git::credential`), scoped to the remote's host, so that a redirect elsewhere gets
//! nothing.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// A user name and password taken out of a remote's URL.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Credential {
    pub username: String,
    pub password: Option<String>,
    /// What git's `credential.<url>.*` keys match: the scheme and host (with its port).
    pub scope: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credential for {}", self.scope)
    }
}

/// Transports that make git run a program named in the URL.
const PROGRAMS: &[&str] = &["ext", "fd"];

/// Refuses a remote git would read as an option or a program to run.
pub fn check(url: &str) -> Result<()> {
    if url.starts_with('-') {
        bail!("a remote cannot start with '-' (git would read {url:?} as an option)");
    }
    if url.chars().any(char::is_control) {
        bail!("a remote cannot hold a control character (a line break, a tab)");
    }
    if let Some((transport, _)) = url.split_once("::")
        && PROGRAMS.contains(&transport.to_ascii_lowercase().as_str())
    {
        bail!(
            "a remote cannot use git's {transport}:: transport, which runs a program named in \
             it: name a path, or a URL git takes (ssh, https, file://)"
        );
    }
    Ok(())
}

/// The URL without its user name and password, and them, when it is http(s) and has them.
/// A password in another kind of URL is refused: ssh and git's own protocol do not use it.
pub fn split(url: &str) -> Result<(String, Option<Credential>)> {
    check(url)?;
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok((url.to_string(), None));
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return Ok((url.to_string(), None));
    };
    let (userinfo, host) = (&rest[..at], &rest[at + 1..authority_end]);
    let (user, password) = match userinfo.split_once(':') {
        Some((user, password)) => (user, Some(decode(password))),
        None => (userinfo, None),
    };
    let scheme_lower = scheme.to_ascii_lowercase();
    if scheme_lower != "http" && scheme_lower != "https" {
        if password.is_some() {
            bail!(
                "a password in a {scheme}:// remote is not used by git: give it to your ssh \
                 agent or a credential helper, and name the remote without it"
            );
        }
        return Ok((url.to_string(), None));
    }
    let credential = Credential {
        username: decode(user),
        password,
        scope: format!("{scheme_lower}://{host}"),
    };
    if credential.username.contains(['\n', '\0'])
        || credential
            .password
            .as_deref()
            .is_some_and(|p| p.contains(['\n', '\0']))
    {
        bail!("the remote's user name or password holds a line break");
    }
    Ok((format!("{scheme}://{}", &rest[at + 1..]), Some(credential)))
}

/// `url` as it may be shown: without its user name and password.
pub fn shown(url: &str) -> String {
    split(url).map_or_else(|_| "the remote".to_string(), |(url, _)| url)
}

/// Percent-decoding, as git decodes the user name and password of a URL.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_leaves_the_url_and_the_rest_stays() {
        let (url, cred) = split("https://ghp_S3cret@github.com/you/mem.git").unwrap();
        assert_eq!(url, "https://github.com/you/mem.git");
        let cred = cred.unwrap();
        assert_eq!(cred.username, "ghp_S3cret");
        assert_eq!(cred.password, None);
        assert_eq!(cred.scope, "https://github.com");
        let (url, cred) = split("https://oauth2:p%40ss@gitlab.example:8443/a/b").unwrap();
        assert_eq!(url, "https://gitlab.example:8443/a/b");
        let cred = cred.unwrap();
        assert_eq!(
            (cred.username.as_str(), cred.password.as_deref()),
            ("oauth2", Some("p@ss"))
        );
        assert_eq!(cred.scope, "https://gitlab.example:8443");
        assert!(!format!("{cred:?}").contains("p@ss"));
        // An @ in the path is no user name.
        let (url, cred) = split("https://host/a@b").unwrap();
        assert_eq!((url.as_str(), cred), ("https://host/a@b", None));
        for plain in [
            "git@github.com:you/mem.git",
            "/srv/mem.git",
            "ssh://git@host/x",
        ] {
            assert_eq!(split(plain).unwrap(), (plain.to_string(), None));
        }
        assert!(split("ssh://git:pw@host/x").is_err());
    }

    #[test]
    fn options_and_programs_are_refused() {
        for bad in [
            "--upload-pack=touch /tmp/x",
            "-u",
            "ext::sh -c touch% /tmp/x",
            "EXT::sh",
            "fd::3",
            "/srv/a\nb",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
        assert!(check("codecommit::us-east-1://repo").is_ok());
        assert!(check("/srv/mem-git").is_ok());
    }
}
