#!/usr/bin/env python3
"""charcnn_torch.py - a PyTorch reference of llrnn's character-aware LSTM
language model (train --input chars --output softmax, issue 16), written
for bench/chars-speed: the model of Kim, Jernite, Sontag & Rush (2016) as
one would write it in PyTorch, the way their code does it (every position
of a batch through the convolution, not each distinct word once).

  charcnn_torch.py [--max-tokens N] [--threads N] [--batch N] ... train.tok

Model, as llrnn's: a word is BOW, its characters (at most 48: the first 47
and the last), EOW; <s> and </s> have characters of their own; characters
embedded in --char-embed numbers; for each width w of --char-filters
(w:n,...) n filters of width w (a Conv1d, the word padded to the widest
filter), max over time, tanh of the max plus the bias; --highway highway
layers (transform-gate bias -2); --layers LSTM layers of --hidden; a
softmax over the vocabulary (every type of the file and </s>).  Training
as train's: sentences bucketed by length into batches of --batch, batch
order shuffled, the mean of -log p over a batch's tokens, gradient
clipped to norm 5, RMSprop lr 0.001 (torch defaults).

Prints one line: "RESULT tokens=N seconds=S tokens_per_s=R" where S is
the time spent in the training steps (batching included, data loading
and start-up not), as train --max-tokens reports its own.
"""
import argparse
import random
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("charcnn_torch.py: torch: not installed (Debian package python3-torch)")

MAXW = 48
PAD, BOW, EOW, UNK, BOS, EOS = 0, 1, 2, 3, 4, 5
FIRST = 7


def spell(word, cid):
    if word == "<s>":
        body = [BOS]
    elif word == "</s>":
        body = [EOS]
    else:
        body = [cid.get(c, UNK) for c in word]
        if len(body) > MAXW - 1:
            body = body[: MAXW - 1] + body[-1:]
    return [BOW] + body + [EOW]


class CharLM(nn.Module):
    def __init__(self, nchars, V, dc, filters, highway, hidden, layers):
        super().__init__()
        self.emb = nn.Embedding(nchars, dc, padding_idx=PAD)
        self.convs = nn.ModuleList([nn.Conv1d(dc, n, w) for w, n in filters])
        D = sum(n for _, n in filters)
        self.hw = nn.ModuleList([nn.Linear(D, 2 * D) for _ in range(highway)])
        for h in self.hw:
            with torch.no_grad():
                h.bias[D:].fill_(-2.0)
        self.D = D
        self.lstm = nn.LSTM(D, hidden, layers)
        self.out = nn.Linear(hidden, V)

    def words(self, chars):  # chars: N x L
        x = self.emb(chars).transpose(1, 2)  # N x dc x L
        y = torch.cat([torch.tanh(c(x).max(dim=2).values) for c in self.convs], 1)
        for h in self.hw:
            gt = h(y)
            g, t = F.relu(gt[:, : self.D]), torch.sigmoid(gt[:, self.D:])
            y = t * g + (1 - t) * y
        return y

    def forward(self, chars, T, B):  # chars: T*B x L, time-major
        x = self.words(chars).view(T, B, self.D)
        h, _ = self.lstm(x)
        return self.out(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("--max-tokens", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--char-embed", type=int, default=15)
    ap.add_argument("--char-filters", default="1:25,2:50,3:75,4:100,5:125,6:150")
    ap.add_argument("--highway", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    filters = [tuple(int(v) for v in p.split(":")) for p in a.char_filters.split(",")]
    sents = [l.split() for l in open(a.train, encoding="utf-8")]
    sents = [s[: a.max_len - 1] for s in sents if s]
    vocab = {"</s>": 0}
    chars = set()
    for s in sents:
        for w in s:
            if w not in vocab:
                vocab[w] = len(vocab)
                chars.update(w)
    cid = {c: FIRST + i for i, c in enumerate(sorted(chars))}
    words = ["<s>"] + list(vocab)  # input index 0 is <s>, then the vocabulary
    sp = [spell(w, cid) for w in words]
    wmax = max(w for w, _ in filters)
    L = max(max(len(s) for s in sp), wmax)
    table = torch.zeros(len(sp), L, dtype=torch.long)
    for i, s in enumerate(sp):
        table[i, : len(s)] = torch.tensor(s)
    model = CharLM(FIRST + len(cid), len(vocab), a.char_embed, filters, a.highway, a.hidden, a.layers)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.001)
    order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
    batches = [order[i: i + a.batch] for i in range(0, len(order), a.batch)]
    random.shuffle(batches)
    done, spent = 0, 0.0
    while done < a.max_tokens:
        for bt in batches:
            t0 = time.perf_counter()
            B = len(bt)
            T = max(len(sents[i]) for i in bt) + 1
            inp = torch.zeros(T, B, dtype=torch.long)
            tgt = torch.full((T, B), -100, dtype=torch.long)
            for b, i in enumerate(bt):
                ids = [vocab[w] for w in sents[i]] + [0]
                inp[: len(ids), b] = torch.tensor([0] + [x + 1 for x in ids[:-1]])
                tgt[: len(ids), b] = torch.tensor(ids)
            logits = model(table[inp.view(-1)], T, B)
            loss = F.cross_entropy(logits.view(T * B, -1), tgt.view(-1), ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            spent += time.perf_counter() - t0
            done += int((tgt >= 0).sum())
            if done >= a.max_tokens:
                break
    print("RESULT tokens=%d seconds=%.3f tokens_per_s=%.0f" % (done, spent, done / spent), flush=True)


if __name__ == "__main__":
    sys.exit(main())
