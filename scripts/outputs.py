"""outputs.py - read the test outputs committed under results/outputs/ and
turn them into figures; shared by scripts/paired-bootstrap and
scripts/results-check (a module, not a command).

An output file has one line per test item (a sentence, a word, an
example), TAB-separated, as score(1) writes it: column 1 and column 2 are
the item's two numbers (score: the log-probability and the number of
predicted tokens; any further columns, such as --per-token's, are read
past).  It may be compressed: .xz, .gz and .bz2 are read with the
standard library, .zst through zstd(1).

A metric turns the columns of one file into one figure:
  logppl   -sum(col1) / sum(col2): log-perplexity per predicted token
  ratio    sum(col1) / sum(col2): an error rate over lengths (PER)
  mean     mean(col1): an accuracy or an error rate over items (WER)
  sum      sum(col1): a count over items (test references a rule rejects)
  match    the share of lines whose two columns are the same string
           (default columns 2 and 3: score --task's gold and predicted,
           so "match*100" is its accuracy in percent)
optionally followed by the two columns to read instead of the default
(1 and 2; for match, 2 and 3), ":3,4", and by a scale, "*100" (percent):
"ratio:3,4*100" is g2p-eval --per-word's PER.  read_metric_runs reads the
files as a metric needs them.  With NumPy only."""
import bz2, gzip, lzma, subprocess

import numpy as np

METRICS = ('logppl', 'ratio', 'mean', 'sum', 'match')


def parse_metric(spec):
    """'logppl', 'mean*100' or 'ratio:3,4*100' -> (name, scale, (col,
    col)), columns counted from 1; ValueError on anything else."""
    head, _, scale = spec.partition('*')
    name, _, cols = head.partition(':')
    if name not in METRICS:
        raise ValueError('unknown metric %r (expected %s)' % (name, ', '.join(METRICS)))
    try:
        pair = tuple(int(c) for c in cols.split(',')) if cols else ((2, 3) if name == 'match' else (1, 2))
        if len(pair) != 2 or min(pair) < 1:
            raise ValueError
    except ValueError:
        raise ValueError('metric %r: the columns after : are not two column numbers' % spec)
    try:
        return name, float(scale) if scale else 1.0, pair
    except ValueError:
        raise ValueError('metric %r: the scale after * is not a number' % spec)


def read_text(path):
    if path.endswith('.xz'):
        return lzma.open(path, 'rt', encoding='utf-8').read()
    if path.endswith('.gz'):
        return gzip.open(path, 'rt', encoding='utf-8').read()
    if path.endswith('.bz2'):
        return bz2.open(path, 'rt', encoding='utf-8').read()
    if path.endswith('.zst'):
        r = subprocess.run(['zstd', '-dcq', path], capture_output=True)
        if r.returncode != 0:
            raise OSError('%s: zstd: %s' % (path, r.stderr.decode(errors='replace').strip()))
        return r.stdout.decode('utf-8')
    return open(path, encoding='utf-8').read()


def read_columns(path, cols=(1, 2)):
    """Two columns of every line (default the first two, where a missing
    second column reads as 1) as two float arrays.  ValueError names the
    file and line."""
    c1, c2 = [], []
    a, b = cols[0] - 1, cols[1] - 1
    text = read_text(path)
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    for k, line in enumerate(lines, 1):
        f = line.split('\t', max(a, b) + 1)
        if len(f) == 1 and cols == (1, 2):
            f.append('1')
        try:
            c1.append(float(f[a]))
            c2.append(float(f[b]))
        except (ValueError, IndexError):
            raise ValueError('%s:%d: expected numbers in columns %d and %d' % (path, k, a + 1, b + 1))
    if not c1:
        raise ValueError('%s: no lines' % path)
    return np.array(c1), np.array(c2)


def read_matches(path, cols=(2, 3)):
    """Per line, 1.0 when columns cols hold the same string, else 0.0,
    and an array of ones (one item a line).  ValueError names the file
    and line of a line without them."""
    a, b = cols[0] - 1, cols[1] - 1
    lines = read_text(path).split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    hit = []
    for k, line in enumerate(lines, 1):
        f = line.split('\t')
        if len(f) <= max(a, b):
            raise ValueError('%s:%d: expected columns %d and %d' % (path, k, a + 1, b + 1))
        hit.append(1.0 if f[a] == f[b] else 0.0)
    if not hit:
        raise ValueError('%s: no lines' % path)
    return np.array(hit), np.ones(len(hit))


def read_oovs(path):
    """The sum of column 3 (score's OOV count) over the file's lines."""
    return sum(int(l.split('\t', 3)[2]) for l in read_text(path).split('\n') if l)


def read_runs(paths, cols=(1, 2)):
    """Several runs (seeds) over the same items: two (runs x items) arrays
    of columns cols."""
    cols = [read_columns(p, cols) for p in paths]
    n = {len(c[0]) for c in cols}
    if len(n) != 1:
        raise ValueError('runs over different numbers of items: %s' %
                         ', '.join('%s %d' % (p, len(c[0])) for p, c in zip(paths, cols)))
    return np.stack([c[0] for c in cols]), np.stack([c[1] for c in cols])


def read_metric_runs(paths, metric):
    """read_runs for a parsed metric (parse_metric's triple): the string
    comparison of match, the numbers of the others."""
    if metric[0] == 'match':
        cols = [read_matches(p, metric[2]) for p in paths]
        n = {len(c[0]) for c in cols}
        if len(n) != 1:
            raise ValueError('runs over different numbers of items: %s' %
                             ', '.join('%s %d' % (p, len(c[0])) for p, c in zip(paths, cols)))
        return np.stack([c[0] for c in cols]), np.stack([c[1] for c in cols])
    return read_runs(paths, metric[2])


def from_sums(metric, s1, s2, n):
    """The metric from column sums s1, s2 over n items (arrays broadcast)."""
    name, scale = metric[:2]
    if name == 'logppl':
        return -s1 / s2 * scale
    if name == 'ratio':
        return s1 / s2 * scale
    if name == 'sum':
        return s1 * scale
    return s1 / n * scale  # mean and match


def figures(metric, c1, c2):
    """The metric of each run of (runs x items) arrays."""
    return from_sums(metric, c1.sum(axis=-1), c2.sum(axis=-1), c1.shape[-1])


def resampled(metric, c1, c2, weights):
    """The metric averaged over runs, on each resample of the items:
    weights is (resamples x items), how often each item is drawn."""
    s1 = weights @ c1.T
    s2 = weights @ c2.T
    return from_sums(metric, s1, s2, c1.shape[-1]).mean(axis=1)
