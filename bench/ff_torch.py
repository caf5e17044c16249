#!/usr/bin/python3
"""ff_torch.py - the feed-forward LM of Bengio et al. (2003) in PyTorch, the
yardstick of bench/ff-speed for llrnn's train --feedforward (issue 50).

The same network as lib/nn/ffnet.c with a softmax output: the embeddings
of the previous N-1 words (<s> before the sentence) concatenated, LAYERS
tanh layers of HIDDEN units, optional direct connections from the
embeddings to the output, a softmax over V; every predicted token (the
words and one </s> a sentence) a position, positions shuffled and cut into
batches of BATCH tokens; Adam, gradient norm clipped to 5.

  ff_torch.py --train train.tok [--extra valid.tok ...] --order 5
      --embed 64 --hidden 256 --batch 128 --threads 2 --max-tokens 50000

The vocabulary is every type of the given files plus </s> (train's
featurize with --extra gives the same V).  Times the training loop only
(batching, forward, backward, clipping, update) and prints one line
'RESULT tokens=N seconds=S tokens_per_s=T V=V params=P'.
"""
import argparse
import random
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("ff_torch.py: torch: not installed (Debian package python3-torch)")

p = argparse.ArgumentParser()
p.add_argument('--train', required=True)
p.add_argument('--extra', action='append', default=[])
p.add_argument('--order', type=int, default=5)
p.add_argument('--embed', type=int, default=64)
p.add_argument('--hidden', type=int, default=256)
p.add_argument('--layers', type=int, default=1)
p.add_argument('--direct', action='store_true')
p.add_argument('--batch', type=int, default=128)
p.add_argument('--lr', type=float, default=1e-3)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--max-tokens', type=int, default=50000)
p.add_argument('--seed', type=int, default=1)
a = p.parse_args()
torch.manual_seed(a.seed)
random.seed(a.seed)
torch.set_num_threads(a.threads)


def load(path):
    return [l.split() for l in open(path, encoding='utf-8') if l.strip()]


train = load(a.train)
types = sorted({w for f in [a.train] + a.extra for s in load(f) for w in s} | {'</s>'})
idx = {w: i for i, w in enumerate(types)}
V, BOS, C = len(types), len(types), a.order - 1
ctx, tgt = [], []
for s in train:
    ids = [idx[w] for w in s] + [idx['</s>']]
    for t, y in enumerate(ids):
        ctx.append([BOS] * max(0, C - t) + ids[max(0, t - C):t])
        tgt.append(y)
ctx, tgt = torch.tensor(ctx), torch.tensor(tgt)


class FF(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V + 1, a.embed)
        layers, d = [], C * a.embed
        for _ in range(a.layers):
            layers += [nn.Linear(d, a.hidden), nn.Tanh()]
            d = a.hidden
        self.hidden = nn.Sequential(*layers)
        self.out = nn.Linear(d, V)
        self.direct = nn.Linear(C * a.embed, V, bias=False) if a.direct else None

    def forward(self, x):
        e = self.emb(x).reshape(x.shape[0], -1)
        z = self.out(self.hidden(e))
        return z + self.direct(e) if self.direct is not None else z


m = FF()
opt = torch.optim.Adam(m.parameters(), lr=a.lr)
loss_fn = nn.CrossEntropyLoss(reduction='sum')
done, secs = 0, 0.0
while done < a.max_tokens:
    order = torch.randperm(len(tgt))
    for k in range(0, len(tgt), a.batch):
        t0 = time.perf_counter()
        b = order[k:k + a.batch]
        opt.zero_grad()
        loss = loss_fn(m(ctx[b]), tgt[b])
        (loss / len(b)).backward()
        nn.utils.clip_grad_norm_(m.parameters(), 5.0)
        opt.step()
        secs += time.perf_counter() - t0
        done += len(b)
        if done >= a.max_tokens:
            break
params = sum(q.numel() for q in m.parameters())
print('RESULT tokens=%d seconds=%.3f tokens_per_s=%.0f V=%d params=%d' % (done, secs, done / secs, V, params))
