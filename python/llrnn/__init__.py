"""llrnn - score sentences with llrnn's language models from Python, and
embed and generate them.

A pure-Python module over the shared library libllrnn (ctypes; no
compiler needed), with the API of KenLM's Python module:

    import llrnn
    with llrnn.Model("model.llrnn") as m:      # or an ARPA file
        print(m.score("le chat dort ."))       # log10 p, </s> included
        print(m.score("le chat dort .", base="e"))   # ln p, as score(1)
        for logprob, _, oov in m.full_scores("le chat dort ."):
            print(logprob, oov)
        print(m.perplexity("le chat dort ."), m.info.family, m.order)

Beyond KenLM's API, as the tools do it on the same model:

    m.generate("le chat", n=3, seed=7, top_k=50)   # gen -p 'le chat' -n 3 -s 7 --top-k 50
    m.generate(beam=4, nbest=2)                    # gen --beam 4 --nbest 2
    m.embed(["le chat dort .", "il pleut ."])      # score --embed: numpy, a row a sentence
    m.features("chat")                             # gen --show-features: [(name, value)]
    m.score_batch(lines, threads=2)                # score --threads 2: numpy, log10
    m.score_pair("c a t", "K AE1 T")               # score --source (encoder-decoders)

Sentences are tokenised text, tokens separated by spaces, as score(1)
reads a line (tok(1) tokenises raw text).  The numbers are score(1)'s on
the same model and line, words outside the vocabulary included.

The library is looked for in $LLRNN_LIB (a path, e.g. build/libllrnn.so
of a built clone), else beside this module, else as libllrnn.so.0 where
the dynamic loader looks (make install puts it in PREFIX/lib).

Generation gives gen(1)'s sentences and log-probabilities for the same
seed and options, and embed score --embed's vectors to the last bit;
scoring sums its products
in score's fixed order and generation in OpenBLAS's, as the tools do (the
library's setting is the process's: calls of the two kinds from several
threads take turns).

Errors: llrnn.Error (the library's message, e.g. a missing or corrupt
model, or an operation the model lacks: an n-gram model has no embed);
TypeError for a sentence that is not a str or an argument of the wrong
type; ValueError for an empty sentence, a marker inside one, text that is
not UTF-8, an argument out of range, a closed model; OSError when the
library cannot be loaded.  Installing: make install PYTHONDIR=DIR, or
pip install --no-build-isolation ./python (python/pyproject.toml).
"""
from .model import Error, Generated, Model, ModelInfo, TokenScore

__all__ = ["Error", "Generated", "Model", "ModelInfo", "TokenScore"]
