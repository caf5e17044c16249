#!/usr/bin/python3
"""PyTorch encoder-decoder with attention, the same network as llrnn's
(train(1) with featurize --source; lib/nn/encdec.c), written as one would
in PyTorch: the speed anchor of issue 15 (bench/g2p-speed), trained on the
same files.

  encoder  nn.Embedding + nn.LSTM(bidirectional, H/2 per direction) over
           packed sequences; the decoder starts from [h_fw; h_bw] of the
           last layer's final states, a zero cell and a zero context
  decoder  nn.LSTMCell over [embedding of the previous word; previous
           context] (input feeding), attention with query h_t: dot,
           bilinear (keys M W^T computed once) or MLP (v . tanh(h Wq + M Wk
           + c), M Wk + c computed once), masked softmax, context bmm
  output   nn.Linear([h; ctx] -> V) and cross-entropy (softmax), or the
           log-linear layer log b(x) + a . phi(x) with a = Linear([h; ctx]
           -> F) and phi from a lexicon plus one identity per word (ll);
           the same token counts as llrnn: every phoneme and one </s>

  g2p_torch.py --src train.src --tgt train.tgt --valid-src valid.src \\
      --valid-tgt valid.tgt [--output softmax|ll --lexicon L] \\
      [--attention dot|bilinear|mlp] [--time-only --max-tokens N]

Prints one 'RESULT key=value ...' line at the end; with --time-only the
training tokens/s over the steps of the first epoch (batching, forward,
backward, clipping, update), stopping after the step that reaches
--max-tokens.  Needs Debian's python3-torch with libopenblas0-pthread.
"""
import argparse
import random
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as Fn
    from torch.nn.utils.rnn import pack_padded_sequence
except ImportError:
    sys.exit("g2p_torch.py: torch: not installed (Debian package python3-torch)")

p = argparse.ArgumentParser()
p.add_argument('--src', required=True); p.add_argument('--tgt', required=True)
p.add_argument('--valid-src'); p.add_argument('--valid-tgt')
p.add_argument('--output', choices=['softmax', 'll'], default='softmax'); p.add_argument('--lexicon')
p.add_argument('--attention', choices=['dot', 'bilinear', 'mlp'], default='mlp')
p.add_argument('--embed', type=int, default=64); p.add_argument('--hidden', type=int, default=256)
p.add_argument('--enc-layers', type=int, default=1); p.add_argument('--attn-hidden', type=int, default=128)
p.add_argument('--batch', type=int, default=64); p.add_argument('--lr', type=float, default=1e-3)
p.add_argument('--optim', choices=['adam', 'rmsprop'], default='adam')
p.add_argument('--epochs', type=int, default=20); p.add_argument('--clip', type=float, default=5.0)
p.add_argument('--threads', type=int, default=2); p.add_argument('--seed', type=int, default=1)
p.add_argument('--time-only', action='store_true'); p.add_argument('--max-tokens', type=int, default=0)
a = p.parse_args()
torch.manual_seed(a.seed); random.seed(a.seed); torch.set_num_threads(a.threads)


def load(path):
    return [l.split() for l in open(path, encoding='utf-8')]


src, tgt = load(a.src), load(a.tgt)
if len(src) != len(tgt):
    sys.exit('g2p_torch: %s and %s differ in length' % (a.src, a.tgt))
EOS, UNK = '</s>', '<unk>'
svocab = sorted({c for s in src for c in s}) + [EOS, UNK]
tvocab = sorted({c for s in tgt for c in s}) + [EOS, UNK]
sidx = {w: i for i, w in enumerate(svocab)}; tidx = {w: i for i, w in enumerate(tvocab)}
Vs, V = len(svocab), len(tvocab); SPAD, BOS, TPAD = Vs, V, -100
H, E, h2 = a.hidden, a.embed, a.hidden // 2

if a.output == 'll':
    lex = {}
    for l in open(a.lexicon, encoding='utf-8'):
        w, _, f = l.rstrip('\n').partition('\t'); lex[w] = f.split()
    feats = sorted({f for w in tvocab for f in ['TOP:' + w] + lex.get(w, [])})
    fidx = {f: i for i, f in enumerate(feats)}; F = len(feats)
    rows, cols = [], []
    for w in tvocab:
        for f in ['TOP:' + w] + lex.get(w, []):
            rows.append(tidx[w]); cols.append(fidx[f])
    cnt = torch.zeros(V)
    for s in tgt:
        for w in s + [EOS]:
            cnt[tidx[w]] += 1
    logb = torch.log((cnt + 0.5) / (cnt + 0.5).sum())
    order = sorted(range(len(rows)), key=lambda k: rows[k])
    PhiCols = torch.tensor([cols[k] for k in order]); PhiVals = torch.ones(len(rows))
    PhiOffs = torch.searchsorted(torch.tensor([rows[k] for k in order]), torch.arange(V))


def ids(seq, idx):
    return [idx.get(w, idx[UNK]) for w in seq]


class EncDec(nn.Module):
    def __init__(s):
        super().__init__()
        s.semb = nn.Embedding(Vs + 1, E, padding_idx=SPAD)
        s.enc = nn.LSTM(E, h2, num_layers=a.enc_layers, bidirectional=True)
        s.temb = nn.Embedding(V + 1, E)
        s.cell = nn.LSTMCell(E + H, H)
        if a.attention == 'bilinear':
            s.W = nn.Linear(H, H, bias=False)
        if a.attention == 'mlp':
            s.Wq = nn.Linear(H, a.attn_hidden, bias=False); s.Wk = nn.Linear(H, a.attn_hidden)
            s.v = nn.Linear(a.attn_hidden, 1, bias=False)
        s.out = nn.Linear(2 * H, V if a.output == 'softmax' else F)

    def forward(s, x, xl, y_in):
        # x: S x B source ids, xl: lengths (descending), y_in: T x B inputs
        packed = pack_padded_sequence(s.semb(x), xl)
        M, (hn, _) = s.enc(packed)
        M, _ = nn.utils.rnn.pad_packed_sequence(M)            # S x B x H
        M = M.transpose(0, 1)                                  # B x S x H
        B, S = M.shape[0], M.shape[1]
        mask = torch.arange(S).unsqueeze(0) >= xl.unsqueeze(1)  # B x S, True = padding
        h = torch.cat([hn[-2], hn[-1]], 1); c = torch.zeros_like(h); ctx = torch.zeros_like(h)
        K = s.W(M) if a.attention == 'bilinear' else s.Wk(M) if a.attention == 'mlp' else M
        emb = s.temb(y_in)
        outs = []
        for t in range(y_in.shape[0]):
            h, c = s.cell(torch.cat([emb[t], ctx], 1), (h, c))
            if a.attention == 'mlp':
                e = s.v(torch.tanh(K + s.Wq(h).unsqueeze(1))).squeeze(2)
            else:
                e = torch.bmm(K, h.unsqueeze(2)).squeeze(2)
            alpha = torch.softmax(e.masked_fill(mask, float('-inf')), 1)
            ctx = torch.bmm(alpha.unsqueeze(1), M).squeeze(1)
            outs.append(torch.cat([h, ctx], 1))
        o = s.out(torch.stack(outs).reshape(-1, 2 * H))
        if a.output == 'softmax':
            return o
        # log b(x) + a . phi(x): the sparse product as in torch_ref.py
        return logb + Fn.embedding_bag(PhiCols, o.t().contiguous(), offsets=PhiOffs, mode='sum',
                                       per_sample_weights=PhiVals).t()


def batches(S_, T_, shuffle):
    d = sorted(zip(S_, T_), key=lambda st: len(st[1]))
    bs = [d[i:i + a.batch] for i in range(0, len(d), a.batch)]
    if shuffle:
        random.shuffle(bs)
    for bt in bs:
        bt = sorted(bt, key=lambda st: -len(st[0]))
        xs = [ids(s_, sidx) + [sidx[EOS]] for s_, _ in bt]
        ys = [ids(t_, tidx) + [tidx[EOS]] for _, t_ in bt]
        Sx, Ty, B = max(map(len, xs)), max(map(len, ys)), len(bt)
        x = torch.full((Sx, B), SPAD, dtype=torch.long); yi = torch.full((Ty, B), BOS, dtype=torch.long)
        yo = torch.full((Ty, B), TPAD, dtype=torch.long)
        for b, (xx, yy) in enumerate(zip(xs, ys)):
            x[:len(xx), b] = torch.tensor(xx); yo[:len(yy), b] = torch.tensor(yy)
            yi[1:len(yy), b] = torch.tensor(yy[:-1])
        yield x, torch.tensor([len(xx) for xx in xs]), yi, yo


m = EncDec()
for n_, w in m.named_parameters():   # llrnn's initialisation: uniform(-0.08, 0.08)
    nn.init.uniform_(w, -0.08, 0.08)
opt = (torch.optim.Adam if a.optim == 'adam' else torch.optim.RMSprop)(m.parameters(), lr=a.lr)
lossf = nn.CrossEntropyLoss(ignore_index=TPAD, reduction='sum')


def evaluate():
    m.eval(); tot = n = 0
    with torch.no_grad():
        for x, xl, yi, yo in batches(vsrc, vtgt, False):
            tot += lossf(m(x, xl, yi), yo.reshape(-1)).item(); n += (yo != TPAD).sum().item()
    m.train(); return tot / n


nparams = sum(w.numel() for w in m.parameters())
print(f'output={a.output} attention={a.attention} Vs={Vs} V={V} params={nparams} pairs={len(src)} '
      f'threads={a.threads}', flush=True)
if a.valid_src:
    vsrc, vtgt = load(a.valid_src), load(a.valid_tgt)
best, bad = float('inf'), 0
for ep in range(a.epochs):
    t0 = time.time(); tot = n = 0
    for x, xl, yi, yo in batches(src, tgt, True):
        opt.zero_grad(); l = lossf(m(x, xl, yi), yo.reshape(-1)); k = (yo != TPAD).sum().item()
        (l / k).backward(); nn.utils.clip_grad_norm_(m.parameters(), a.clip); opt.step()
        tot += l.item(); n += k
        if a.max_tokens and n >= a.max_tokens:
            break
    dt = time.time() - t0
    if a.time_only:
        print(f'RESULT output={a.output} attention={a.attention} train_tokens={n} seconds={dt:.2f} '
              f'tokens_per_s={n / dt:.0f} loss={tot / n:.4f}')
        sys.exit(0)
    v = evaluate() if a.valid_src else float('nan')
    print(f'epoch {ep + 1} train_logppl {tot / n:.4f} valid_logppl {v:.4f} tokens_per_s {n / dt:.0f}', flush=True)
    if v < best - 1e-4:
        best, bad = v, 0
    else:
        bad += 1
        if bad >= 3:
            break
print(f'RESULT output={a.output} attention={a.attention} epochs={ep + 1} best_valid_logppl={best:.4f}')
