#!/usr/bin/python3
"""score-lines.py [--base e|2|10] [--open|--closed] MODEL - the Python
module's numbers in score(1)'s --per-token columns (tests/54-python.bats):
for each line of stdin, Model.score, the number of predictions, the OOVs,
then token=logprob from Model.full_scores, every figure %.4f.  Errors:
"score-lines.py: MESSAGE" on stderr, status 1."""
import sys

import llrnn


def main(argv):
    base, open_, args = "e", None, list(argv)
    while args and args[0].startswith("--"):
        a = args.pop(0)
        if a == "--base":
            base = args.pop(0)
        elif a in ("--open", "--closed"):
            open_ = a == "--open"
        else:
            sys.exit("usage: score-lines.py [--base B] [--open|--closed] MODEL")
    if len(args) != 1:
        sys.exit("usage: score-lines.py [--base B] [--open|--closed] MODEL")
    try:
        with llrnn.Model(args[0], open=open_) as m:
            for line in sys.stdin:
                toks = list(m.full_scores(line, base=base))
                words = line.split()  # the markers score takes off, off
                words = words[words[:1] == ["<s>"]:len(words) - (words[-1:] == ["</s>"])] + ["</s>"]
                print("%.4f\t%d\t%d\t%s" % (m.score(line, base=base), len(toks), sum(t.oov for t in toks),
                                           "\t".join("%s=%.4f" % (w, t.logprob) for w, t in zip(words, toks))))
    except (llrnn.Error, ValueError, TypeError) as e:
        sys.stderr.write("score-lines.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
