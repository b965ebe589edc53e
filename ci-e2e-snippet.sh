# For .ci/run, before `cargo test`: install the pinned Claude Code CLI for the end-to-end test
# (tests/e2e_claude_code.rs) and make the test require it. Without CLAUDE_MEM_E2E_CLAUDE the
# test installs the CLI itself or skips; with it, a CLI that does not run fails the build.
# Keep the version in sync with CLAUDE_CODE_VERSION in the test. Cold install: ~175 MB, ~11 s.
claude_code_version=2.1.330
e2e_dir="${CARGO_TARGET_DIR:-target}/e2e/claude-code-$claude_code_version"
if [ ! -x "$e2e_dir/node_modules/.bin/claude" ]; then
  command -v npm >/dev/null 2>&1 || { echo ".ci/run: npm is needed for the end-to-end test" >&2; exit 1; }
  rm -rf "$e2e_dir.partial"
  mkdir -p "$e2e_dir.partial"
  # --engine-strict=false: the package asks for Node 22 but the CLI is a native executable.
  # Install scripts must be allowed: the postinstall puts the native binary in place.
  npm install --prefix "$e2e_dir.partial" --no-audit --no-fund --no-save --loglevel=error \
    --engine-strict=false "@anthropic-ai/claude-code@$claude_code_version"
  mv "$e2e_dir.partial" "$e2e_dir"
fi
CLAUDE_MEM_E2E_CLAUDE="$(cd "$e2e_dir" && pwd)/node_modules/.bin/claude"
export CLAUDE_MEM_E2E_CLAUDE
"$CLAUDE_MEM_E2E_CLAUDE" --version
