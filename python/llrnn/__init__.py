"""llrnn - score sentences with llrnn's language models from Python.

A pure-Python module over the shared library libllrnn (ctypes; no
compiler needed), with the API of KenLM's Python module:

    import llrnn
    with llrnn.Model("model.llrnn") as m:      # or an ARPA file
        print(m.score("le chat dort ."))       # log10 p, </s> included
        print(m.score("le chat dort .", base="e"))   # ln p, as score(1)
        for logprob, _, oov in m.full_scores("le chat dort ."):
            print(logprob, oov)
        print(m.perplexity("le chat dort ."), m.info.family, m.order)

Sentences are tokenised text, tokens separated by spaces, as score(1)
reads a line (tok(1) tokenises raw text).  The numbers are score(1)'s on
the same model and line, words outside the vocabulary included.

The library is looked for in $LLRNN_LIB (a path, e.g. build/libllrnn.so
of a built clone), else beside this module, else as libllrnn.so.0 where
the dynamic loader looks (make install puts it in PREFIX/lib).

Errors: llrnn.Error (the library's message, e.g. a missing or corrupt
model); TypeError for a sentence that is not a str; ValueError for an
empty sentence, a marker inside one, text that is not UTF-8, a closed
model; OSError when the library cannot be loaded.
"""
from .model import Error, Model, ModelInfo, TokenScore

__all__ = ["Error", "Model", "ModelInfo", "TokenScore"]
