#!/usr/bin/env python3
"""Writes hot.ld: the functions the hooks run, in the order they first run them, then those
`search` runs besides, as a linker script that build.rs hands to LLD on Linux x86-64 (see
docs/performance.md, "The code a hook runs, together").

    python3 scripts/hot-code.py [--data DIR] [BINARY] > hot.ld

BINARY (default: the release build, target/x86_64-unknown-linux-gnu/release/claude-mem) runs
each hook under callgrind (valgrind must be installed) with the payloads of tests/fixtures/hooks:
a skipped tool, captures of each tool, a prompt, a Stop, session starts, a session end. DIR, a
data directory to copy (one a few thousand sessions old, as the hooks bench fills), gives the
prompt and the session start something to recall and to list, and `search` something to find
(it asks in the project with the most sessions); without it they run on what the captures
stored. Run it again when a hook starts running much new code: what it no longer
names costs nothing, what it does not name yet stays where the linker puts it.

Names are written so that they survive a new compiler and a new version of claude-mem: the
crate hashes of v0 names become wildcards (.cargo/config.toml asks for v0 names), a C function
cloned by GCC (`.constprop.0`) is named with its clones, and a function of the C library is
named by its archive member, with every variant of the string functions the library picks
between at start-up (valgrind's processor is not the machine's).
"""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hooks")

# (hook, payload), in the order that decides the layout: the most frequent hooks first.
RUNS = [
    ("capture", "TodoWrite"),
    ("capture", "PostToolUse-1.json"),
    ("capture", "PostToolUse-5.json"),
    ("capture", "PostToolUse-2.json"),
    ("capture", "PostToolUse-3.json"),
    ("capture", "PostToolUse-4.json"),
    ("capture", "PostToolUse-6.json"),
    ("capture", "PostToolUse-7.json"),
    ("capture", "PostToolUseFailure-1.json"),
    ("prompt", "UserPromptSubmit-1.json"),
    ("prompt", "UserPromptSubmit-2.json"),
    ("summary", "Stop-1.json"),
    ("context", "SessionStart-1.json"),
    ("context", "SessionStart-4.json"),
    ("cleanup", "SessionEnd-1.json"),
]


# Then `search`, whose process is as short as a hook's and as often waited for: the code it
# runs that no hook does comes after the hooks', in the order it first runs it.
# They are asked in the project with the most sessions (as a user asks in theirs).
SEARCHES = [
    ["search", "how", "did", "we", "fix", "locked", "database"],
    ["search", "--all", "cargo", "test"],
    ["search", "--json", "error"],
]


def payload_file(name, scratch):
    """A fixture's path; "TodoWrite" is the first capture's payload for a tool a hook skips."""
    if name != "TodoWrite":
        return os.path.join(FIXTURES, name)
    with open(os.path.join(FIXTURES, "PostToolUse-1.json")) as text:
        event = json.load(text)
    event.update(tool_name="TodoWrite", tool_input={"todos": []}, tool_response={})
    path = os.path.join(scratch, "todo.json")
    with open(path, "w") as out:
        json.dump(event, out)
    return path


def executed(binary, data, home, hook, payload, out):
    """The functions one hook run executes, in callgrind's order of first appearance."""
    # The session start and the prompt read the recall index only when it was synced lately.
    open(os.path.join(data, "index-synced"), "a").close()
    os.utime(os.path.join(data, "index-synced"))
    with open(payload, "rb") as stdin:
        return profiled([binary, "hook", hook], stdin, data, home, out)


def busiest_project(data):
    """The project with the most sessions in the data dir's database, and its newest prompt;
    (None, None) without one."""
    try:
        db = sqlite3.connect(f"file:{os.path.join(data, 'memory.db')}?mode=ro", uri=True)
        row = db.execute("SELECT project_dir FROM sessions GROUP BY 1 "
                         "ORDER BY count(*) DESC LIMIT 1").fetchone()
        prompt = row and db.execute(
            "SELECT p.prompt_text FROM user_prompts p JOIN sessions s "
            "ON s.session_id = p.session_id WHERE s.project_dir = ? "
            "ORDER BY p.created_at DESC LIMIT 1", [row[0]]).fetchone()
        db.close()
        return (row[0] if row else None, prompt[0] if prompt else None)
    except sqlite3.Error:
        return (None, None)


def in_project(data, project, prompt):
    """A session start that lists sessions and a prompt that recall answers (`prompt`, asked
    again), in `project` of the data dir: what the fixtures' own prompts, in a folder the data
    dir has no session of, leave out. None without a project."""
    if not project:
        return []
    session = "00000000-0000-4000-8000-00000000c0de"
    base = {"session_id": session, "cwd": project,
            "transcript_path": os.path.join(data, "none.jsonl")}
    runs = [("context", dict(base, hook_event_name="SessionStart", source="startup"))]
    if prompt:
        runs.append(("prompt", dict(base, hook_event_name="UserPromptSubmit", prompt=prompt)))
    return runs


def profiled(argv, stdin, data, home, out, project=None):
    """The functions a run of `argv` executes, in callgrind's order of first appearance (exit
    code 1 is a search that found nothing)."""
    env = dict(os.environ, HOME=home, CLAUDE_MEM_DATA_DIR=data, CLAUDE_MEM_COMPRESS="0")
    if project:
        env["CLAUDE_PROJECT_DIR"] = project
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"]
        + argv,
        stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    if done.returncode not in (0, 1):
        raise subprocess.CalledProcessError(done.returncode, argv)
    names = []
    with open(out) as text:
        for line in text:
            found = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if found:
                names.append(re.sub(r"'\d+$", "", found.group(1)))
    return names


def archives(name):
    """The archives the linker reads for `-l<name>`: some are scripts naming others (Debian's
    libm.a is `GROUP ( libm-2.36.a libmvec.a )`)."""
    path = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    if not os.path.isabs(path):
        return []
    with open(path, "rb") as file:
        if file.read(8) == b"!<arch>\n":
            return [path]
    with open(path) as script:
        named = re.findall(r"[^\s()]+\.a\b", script.read())
    return [os.path.join(os.path.dirname(path), os.path.basename(n)) for n in named]


def archive_members():
    """Which member of the C library's archives defines each function, and the archive as a
    pattern (its version a wildcard)."""
    members = {}
    for name in ["libc.a", "libm.a", "libgcc.a", "libgcc_eh.a"]:
        for path in archives(name):
            pattern = re.sub(r"-[0-9.]+\.a$", "-*.a", os.path.basename(path))
            listing = subprocess.run(["nm", "-A", "--defined-only", path], capture_output=True,
                                     text=True).stdout
            for line in listing.splitlines():
                fields = line.split()
                if len(fields) == 3 and fields[1] in "TtWi":
                    member = fields[0].split(":")[-2]
                    members.setdefault(fields[2], (pattern, member))
    return members


def sections(name):
    """The input sections a compiler puts a function in: LLVM and GCC give cold functions
    (Rust's `#[cold]`, a vector's growth) their own prefix, GCC `main` its own."""
    prefixes = [".text.", ".text.unlikely.", ".text.startup.", ".text.hot."]
    return " ".join(prefix + name for prefix in prefixes)


def pattern(name, members):
    """The input sections that hold `name`, as a linker script names them."""
    if name in members:
        archive, member = members[name]
        variant = re.match(r"^([a-z0-9_]+?)-(avx|evex|sse|ssse)", member)
        if variant:
            member = variant.group(1) + "-*.o"
        return f"*{archive}:{member}(.text .text.*)"
    if name.startswith("_R"):
        # A local symbol's number (`.10196`, from LTO), new with each build, stands for any.
        base = re.sub(r"\.\d+$", "", name)
        # Crate hashes (Cs…_) and back-references (B…_), whose offsets move with them.
        glob = re.sub(r"Cs[0-9a-zA-Z]+_", "*", base)
        glob = re.sub(r"B[0-9a-zA-Z]*_", "*", glob)
        glob = re.sub(r"[*]+", "*", glob)
        if base != name:
            return f"*({sections(glob)} {sections(glob + '.*')})"
        return f"*({sections(glob)})"
    base = re.sub(r"\.(constprop|isra|part|cold|lto_priv)\.\d+$", "", name)
    if base != name:
        return f"*({sections(base)} {sections(base + '.*')})"
    return f"*({sections(name)})"


def resolvers(binary):
    """The C library's resolvers of its functions' variants (`memcpy_ifunc`): every one the
    binary holds runs at start-up, whether a hook calls its function or not."""
    listing = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    return [fields[-1] for fields in map(str.split, listing.splitlines())
            if fields and fields[-1].endswith("_ifunc")]


def main():
    args = sys.argv[1:]
    corpus = None
    if args[:1] == ["--data"]:
        corpus, args = args[1], args[2:]
    binary = args[0] if args else os.path.join(
        ROOT, "target", "x86_64-unknown-linux-gnu", "release", "claude-mem")
    members = archive_members()
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "data")
        home = os.path.join(scratch, "home")
        os.makedirs(home)
        if corpus:
            shutil.copytree(corpus, data)
        else:
            os.makedirs(data, mode=0o700)
        order = []
        for index, (hook, payload) in enumerate(RUNS):
            out = os.path.join(scratch, f"run{index}.out")
            order += executed(binary, data, home, hook, payload_file(payload, scratch), out)
        project, prompt = busiest_project(data)
        for index, (hook, event) in enumerate(in_project(data, project, prompt)):
            out = os.path.join(scratch, f"project{index}.out")
            payload = os.path.join(scratch, f"project{index}.json")
            with open(payload, "w") as file:
                json.dump(event, file)
            order += executed(binary, data, home, hook, payload, out)
        for index, words in enumerate(SEARCHES):
            out = os.path.join(scratch, f"search{index}.out")
            order += profiled([binary] + words, subprocess.DEVNULL, data, home, out, project)
    # The C runtime's start-up and the program's entry, which are no archive's members.
    patterns = [f"*{crt}.o(.text .text.*)" for crt in ["crt1", "crti", "crtbeginT", "crtend"]]
    for name in resolvers(binary) + order:
        if name.startswith("0x") or name.startswith("("):
            continue
        found = pattern(name, members)
        if found not in patterns:
            patterns.append(found)
    print(HEADER.strip())
    print("SECTIONS\n{\n  .text.hot : {")
    for found in patterns:
        print("    " + found)
    print("  }\n}\nINSERT BEFORE .text;")
    print(f"hot-code: {len(patterns)} patterns", file=sys.stderr)


HEADER = """
/* The functions claude-mem's hooks run, gathered at the start of the code in the order they
   first run them, then those `search` runs besides: see build.rs and docs/performance.md
   ("The code a hook runs, together").
   Written by scripts/hot-code.py; write it again rather than by hand. */
"""

if __name__ == "__main__":
    main()
