#!/usr/bin/python3
"""disc_torch.py - the PyTorch reference for llrnn's discourse sentence
encoder speed (issue 17): a bidirectional GRU over word embeddings,
max-pooled over its hidden states (padded positions masked), with the
bilinear ORDER head u'W_k v + b_k of lib/nn/sentenc.c, cross-entropy,
Adam, gradient-norm clipping, on the ORDER lines of a disc-pairs file,
batches of --batch pairs in file order after a seeded shuffle.  The
vocabulary is the --top most frequent training tokens, the rest one
unknown id (as featurize --top).  Prints the training tokens/s (tokens of
the sentences encoded, over the time of the training steps) after
--max-time seconds, or after the step that reaches --max-tokens tokens
(as train --max-tokens), whichever comes first.

usage: disc_torch.py [--hidden H] [--embed E] [--batch B] [--top N]
                     [--threads T] [--max-time S] [--max-tokens N]
                     [--seed S] PAIRS"""
import argparse
import collections
import random
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("disc_torch.py: torch: not installed (Debian package python3-torch)")


class Enc(nn.Module):
    def __init__(self, V, E, H):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.gru = nn.GRU(E, H, batch_first=True, bidirectional=True)
        self.W = nn.Parameter(torch.empty(2 * H, 2, 2 * H).uniform_(-1 / (2 * H), 1 / (2 * H)))
        self.b = nn.Parameter(torch.zeros(2))

    def encode(self, ids, lens):
        x = self.emb(ids)
        packed = nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        h, _ = self.gru(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, padding_value=-1e30)
        return h.max(1).values

    def forward(self, ids, lens, n):
        e = self.encode(ids, lens)
        u, v = e[:n], e[n:]
        return torch.einsum("pi,ikj,pj->pk", u, self.W, v) + self.b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--embed", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--top", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-time", type=float, default=60)
    ap.add_argument("--max-tokens", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    ex = []
    cnt = collections.Counter()
    with open(a.pairs, encoding="utf-8") as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            if c[0] != "ORDER":
                continue
            s1, s2 = c[2].split(" "), c[3].split(" ")
            cnt.update(s1)
            cnt.update(s2)
            ex.append((int(c[1]), s1, s2))
    vocab = {w: i + 1 for i, (w, _) in enumerate(cnt.most_common(a.top))}
    ids = lambda s: [vocab.get(w, 0) for w in s]
    ex = [(y, ids(s1), ids(s2)) for y, s1, s2 in ex]
    random.Random(a.seed).shuffle(ex)
    model = Enc(len(vocab) + 1, a.embed, a.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, spent, steps, k = 0, 0.0, 0, 0
    while spent < a.max_time and (a.max_tokens <= 0 or tokens < a.max_tokens):
        if k >= len(ex):
            k = 0
        b = ex[k:k + a.batch]
        k += a.batch
        t0 = time.perf_counter()
        sents = [s for _, s, _ in b] + [s for _, _, s in b]
        lens = torch.tensor([len(s) for s in sents])
        pad = torch.zeros(len(sents), int(lens.max()), dtype=torch.long)
        for i, s in enumerate(sents):
            pad[i, :len(s)] = torch.tensor(s)
        y = torch.tensor([l for l, _, _ in b])
        loss = nn.functional.cross_entropy(model(pad, lens, len(b)), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        spent += time.perf_counter() - t0
        tokens += int(lens.sum())
        steps += 1
    print("torch bigru: %d steps, %d tokens in %.1f s: %.0f tokens/s (loss %.4f)" % (steps, tokens, spent, tokens / spent, loss.item()))


main()
