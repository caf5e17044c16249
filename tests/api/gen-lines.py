#!/usr/bin/python3
"""gen-lines.py MODEL [KEY=VALUE ...] - the Python module's
Model.generate, printed as gen(1) --logprob prints its lines
(tests/54-python-gen.bats): a language model's "text<TAB>logprob", an
encoder-decoder's n-best lines "source<TAB>rank<TAB>score<TAB>words<TAB>logprob"
for each line of stdin (a source); log-probabilities %.4f (%.0f when not
finite, as gen).  KEY=VALUE pairs are generate's keyword arguments, their
values Python literals (prefix='le chat', n=40, top_p=0.9).  Errors:
"gen-lines.py: MESSAGE" on stderr, status 1."""
import ast
import math
import sys

import llrnn


def lp(v):
    return "%.4f" % v if math.isfinite(v) else "%.0f" % v


def main(argv):
    if not argv or any("=" not in a for a in argv[1:]):
        sys.stderr.write("usage: gen-lines.py MODEL [KEY=VALUE ...]\n")
        return 2
    kw = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in argv[1:])}
    try:
        with llrnn.Model(argv[0], open=kw.pop("open", None)) as m:
            if "gen_source" in m.info.operations:
                for i, line in enumerate(sys.stdin, 1):
                    for r, g in enumerate(m.generate(line, **kw), 1):
                        print("%d\t%d\t%.4f\t%s\t%s" % (i, r, g.score, g.text, lp(g.logprob)))
            else:
                for g in m.generate(**kw):
                    print("%s\t%s" % (g.text, lp(g.logprob)))
    except (llrnn.Error, ValueError, TypeError) as e:
        sys.stderr.write("gen-lines.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
