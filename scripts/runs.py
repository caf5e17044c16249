"""runs.py - what the results reports read from training runs and write
back: a model file's meta (or that member kept alone, which stands for a
model file that is gone), the validation figure of its kept epoch, the
sample standard deviation over seeds, a paired bootstrap interval
(scripts/paired-bootstrap), those intervals said in words, and an atomic
write.  Shared by
scripts/ud-headline and scripts/g2p-seeds (a module, not a command).
Failures raise RunError with a message naming the file."""
import os, subprocess, tarfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class RunError(Exception):
    pass


def meta(path):
    """A model file's meta member as a dict; PATH.meta may be that member
    kept alone (`tar -xOf MODEL meta`), read when it ends in .meta."""
    try:
        if path.endswith('.meta'):
            with open(path, encoding='utf-8') as f:
                text = f.read()
        else:
            with tarfile.open(path) as t:
                text = t.extractfile('meta').read().decode('utf-8')
    except (OSError, KeyError, AttributeError, tarfile.TarError, UnicodeDecodeError) as e:
        raise RunError('%s: cannot read its meta member (%s)' % (path, e))
    return dict(l.split('=', 1) for l in text.splitlines() if '=' in l)


def model_or_meta(model):
    """MODEL, or the meta member kept alone beside it (the same name with
    .meta for its extension; pipelines/kept-runs.mk) when MODEL is not
    there."""
    kept = os.path.splitext(model)[0] + '.meta'
    return kept if not os.path.exists(model) and os.path.exists(kept) else model


def kept_valid(curve, best):
    """The validation figure of the kept epoch best, from train --log."""
    try:
        lines = open(curve, encoding='utf-8').read().split('\n')
    except OSError as e:
        raise RunError(str(e))
    head = lines[0].split('\t')
    for l in lines[1:]:
        f = dict(zip(head, l.split('\t')))
        if f.get('epoch') == best:
            return float(f['valid'])
    raise RunError('%s: no line for the kept epoch %s' % (curve, best))


def sd(x):
    """The sample standard deviation (NaN for one value)."""
    return float(np.std(x, ddof=1)) if len(x) > 1 else float('nan')


def bootstrap(a_files, b_files, samples, metric='logppl'):
    """paired-bootstrap's line for A - B as a dict of its columns."""
    cmd = [os.path.join(HERE, 'paired-bootstrap'), '--samples', str(samples), '--metric', metric]
    for f in a_files:
        cmd += ['-a', f]
    for f in b_files:
        cmd += ['-b', f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RunError('paired-bootstrap: ' + r.stderr.strip())
    head, vals = r.stdout.strip().split('\n')
    return dict(zip(head.split('\t'), vals.split('\t')))


def favours(d, lower_better=()):
    """'better' or 'worse' for A when the difference d (bootstrap()'s
    dict, figure set) is significant, else None; a figure in lower_better
    is better low, as WER, others better high, as a log-likelihood."""
    if d['significant'] != 'yes':
        return None
    diff = float(d['diff'])
    return 'better' if (diff < 0 if d['figure'] in lower_better else diff > 0) else 'worse'


def diffs_in_words(diffs, row_words, figure_words, lower_better=()):
    """One line per difference (bootstrap()'s dicts with a, b and figure
    set): A against B, the difference, its 95% interval and whether it is
    significant, and which side it favours (a figure in lower_better is
    better low, as WER; others better high, as a log-likelihood)."""
    lines = []
    for d in diffs:
        diff, lo, hi = float(d['diff']), float(d['lo']), float(d['hi'])
        side = favours(d, lower_better)
        if side:
            verdict = '%s for %s, significant (the interval excludes 0)' % (side, row_words[d['a']])
        else:
            verdict = 'not significant (the interval contains 0)'
        lines.append('- %s against %s, %s: %+.4f [%+.4f, %+.4f], %s.' % (
            row_words[d['a']][:1].upper() + row_words[d['a']][1:], row_words[d['b']], figure_words[d['figure']],
            diff, lo, hi, verdict))
    return lines


def write(path, text):
    """path gets text whole or not at all."""
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)
