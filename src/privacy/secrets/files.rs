//! Files that are secrets by their name: a Read or Write of one is recorded, its content is not.

/// Whether the file at `path` holds secrets by its name alone: `.env` and `.env.*` (but not
/// `.env.example` and the like, which are committed on purpose), keys and certificates with
/// their private part (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `id_rsa` and its kin but not
/// `*.pub`), and the credential files of common tools (`.netrc`, `.npmrc`, `.pypirc`,
/// `.pgpass`, `.git-credentials`, `credentials`, …).
pub fn is_secret_file(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let extension = lower.rsplit_once('.').map(|(_, e)| e);
    if lower == ".env" || lower == ".envrc" || lower.ends_with(".env") {
        return true;
    }
    if let Some(variant) = lower.strip_prefix(".env.") {
        return !["example", "sample", "template", "dist", "defaults"]
            .iter()
            .any(|public| variant.split('.').any(|part| part == *public));
    }
    if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
        .iter()
        .any(|key| lower.starts_with(key))
    {
        return extension != Some("pub");
    }
    matches!(
        extension,
        Some("pem" | "key" | "p12" | "pfx" | "jks" | "keystore")
    ) || [
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".git-credentials",
        ".htpasswd",
        "credentials",
        ".credentials",
        "credentials.json",
        ".credentials.json",
        "credentials.yml",
        "credentials.yaml",
        "credentials.toml",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "secrets.toml",
    ]
    .contains(&lower.as_str())
        || (lower.starts_with("client_secret") && extension == Some("json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_files_by_name() {
        for path in [
            "/p/.env",
            ".env.local",
            "/p/.env.production",
            "/p/config/prod.env",
            "/home/u/.ssh/id_rsa",
            "/home/u/.ssh/id_ed25519",
            "server.pem",
            "/etc/ssl/private/site.key",
            "/home/u/.netrc",
            "/home/u/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.aws/credentials",
            "/home/u/.claude/.credentials.json",
            "/home/u/.git-credentials",
            "C:\\Users\\u\\.env",
        ] {
            assert!(is_secret_file(path), "{path}");
        }
        for path in [
            "/p/.env.example",
            "/p/.env.sample",
            "/p/.env.local.template",
            "/home/u/.ssh/id_rsa.pub",
            "/p/src/credentials.rs",
            "/p/src/env.rs",
            "/p/keys.md",
            "/p/monkey.txt",
            "/p/README.md",
            "/p/environment.ts",
        ] {
            assert!(!is_secret_file(path), "{path}");
        }
    }
}
