"""llrnn.Model: one model file (any family the library scores: LSTM
language models of every output and input, open-vocabulary ones, ARPA or
binary n-grams) opened through libllrnn's model interface, scoring
sentences exactly as score(1) does.  Its API follows KenLM's Python
module: score, full_scores, perplexity, order."""
import collections
import ctypes
import math
import os
import threading

from . import _capi


class Error(Exception):
    """A failure the llrnn library reports: a missing, unreadable or corrupt
    model, a word it cannot score.  str() is the library's message, naming
    the file ("m.llrnn: ..."); code is its LLR_E* code (a negative int)."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


Error.__module__ = "llrnn"


def _raise(rc, err):
    msg = err.err.msg.decode("utf-8", "replace")
    if not msg:
        msg = _capi.lib().llr_strerror(rc).decode("utf-8", "replace")
    raise Error(msg, rc)


ModelInfo = collections.namedtuple("ModelInfo", [
    "kind", "family", "vocab_size", "has_unk", "order", "layers", "embed", "hidden",
    "output", "input", "spelling", "oov", "operations"])
ModelInfo.__doc__ = """What a model is (llr_model_describe):
kind       the file's kind, "model" or "ngram" (ARPA text too)
family     "rnnlm", "ngram", "encdec", "sentenc"
vocab_size the (target) vocabulary, <s>, </s> and <unk> included
has_unk    whether <unk> is in the vocabulary
order      the n-gram order; 0 for networks
layers, embed, hidden   the network's sizes; 0 for n-grams
output     rnnlm: "softmax", "loglinear", "tree", "classes"; else None
input      rnnlm: "word", "chars", "concat", "sum"; else None
spelling   whether it carries a spelling model (open scoring possible)
oov        how a word outside the vocabulary is scored: "unk" (as <unk>),
           "spread" (<unk>'s share by its spelling), "features" (an
           LL-RNN's own row of the word's features), "zero" (an n-gram
           without <unk>: log p 0, the context cut, as SRILM)
operations the model's operations, a tuple of "describe", "score",
           "score_pairs", "embed", "predict", "gen", "beam", "gen_features",
           "gen_source" (llr_model_info.ops)
"""

TokenScore = collections.namedtuple("TokenScore", ["logprob", "ngram_length", "oov"])
TokenScore.__doc__ = """One predicted token of full_scores: its log-probability in the
base asked for, the n-gram length (always 0: the library does not report
the matched length yet), and whether the word is outside the vocabulary."""


def _log_base(base):
    """ln(base) for base 10, 2 or "e" (score(1) --base)."""
    if base in ("e", math.e):
        return 1.0
    if base in (10, "10"):
        return math.log(10.0)
    if base in (2, "2"):
        return math.log(2.0)
    raise ValueError("base: expected 10, 2 or 'e', got %r" % (base,))


def _check_bos(bos):
    if not bos:
        raise ValueError("bos=False: llrnn scores every sentence from <s> (the library has no other context)")


def _words(sentence):
    """The words of one tokenised sentence, UTF-8 encoded, as score(1)
    reads a line (its end of line, "\n" or "\r\n", aside): runs of
    characters other than space and TAB, a <s> first and a </s> last
    taken as markers."""
    if isinstance(sentence, str):
        b = sentence.encode("utf-8")  # a lone surrogate: UnicodeEncodeError, a ValueError
    elif isinstance(sentence, bytes):
        sentence.decode("utf-8")  # not UTF-8: UnicodeDecodeError, a ValueError
        b = sentence
    else:
        raise TypeError("sentence: expected str (tokens separated by spaces), got %s"
                        % type(sentence).__name__)
    # a line as read from a file: its end of line is not a token
    if b.endswith(b"\r\n"):
        b = b[:-2]
    elif b.endswith(b"\n"):
        b = b[:-1]
    if b"\n" in b or b"\0" in b:
        raise ValueError("sentence: a newline or NUL inside (one sentence, one line)")
    words = [w for w in b.replace(b"\t", b" ").split(b" ") if w]
    if words and words[0] == b"<s>":
        del words[0]
    if words and words[-1] == b"</s>":
        del words[-1]
    if not words:
        raise ValueError("sentence: empty (no word besides the markers)")
    if b"<s>" in words or b"</s>" in words:
        w = "<s>" if b"<s>" in words else "</s>"
        raise ValueError("sentence: %s inside the sentence (a marker only as its first or last token)" % w)
    return words


class Model:
    """A language model read from a file, as score(1) -m reads it.

    m = llrnn.Model(path) opens it; open (None, True, False) is score's
    default, --open or --closed: how words outside the vocabulary are scored
    (None: open when the model has a spelling model).  Close it with
    m.close() or use it in a with statement; a closed model raises
    ValueError.  A missing or corrupt file raises llrnn.Error with the
    library's message.  One model may be used from several threads: they
    take turns (the library's handle is not thread-safe)."""

    def __init__(self, path, open=None):
        self._h = None
        self._lock = threading.Lock()
        self._cap = 0
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError("path: expected a file name, got %s" % type(path).__name__)
        if open not in (None, True, False):
            raise ValueError("open: expected None (the model's default), True or False, got %r" % (open,))
        lib = _capi.lib()
        opts = lib.llr_model_opts_default()
        opts.opts.open = _capi.OPEN_AUTO if open is None else _capi.OPEN_ON if open else _capi.OPEN_OFF
        err = _capi.ErrBuf()
        h = ctypes.c_void_p()
        rc = lib.llr_model_open(os.fsencode(path), ctypes.byref(opts), ctypes.byref(h), ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        self._h = h
        self.path = os.fsdecode(path)
        buf = _capi.InfoBuf()
        rc = lib.llr_model_describe(h, ctypes.byref(buf))
        if rc != 0:
            self.close()
            raise Error("%s: %s" % (self.path, lib.llr_strerror(rc).decode()), rc)
        i = buf.info

        def s(b):
            return None if b is None else b.decode("utf-8", "replace")
        self.info = ModelInfo(
            kind=s(i.kind), family=s(i.family), vocab_size=i.vocab, has_unk=bool(i.has_unk),
            order=i.order, layers=i.layers, embed=i.embed, hidden=i.hidden,
            output=s(i.output), input=s(i.input), spelling=bool(i.spelling),
            oov=_capi.OOV_MODES.get(i.oov, str(i.oov)),
            operations=tuple(n for bit, n in sorted(_capi.OPS.items()) if i.ops & bit))

    # --- lifetime

    def close(self):
        """Free the model; closing twice is harmless."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before it had one
            return
        with lock:
            h, self._h = self._h, None
            if h:
                _capi.lib().llr_model_close(h)

    def __enter__(self):
        self._handle()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        self.close()

    @property
    def closed(self):
        return self._h is None

    def _handle(self):
        if self._h is None:
            raise ValueError("llrnn.Model: the model is closed")
        return self._h

    def __repr__(self):
        return "<llrnn.Model %r %s%s>" % (getattr(self, "path", "?"), self.info.family if hasattr(self, "info") else "",
                                          " closed" if self.closed else "")

    # --- what it is

    @property
    def order(self):
        """The n-gram order (KenLM's Model.order); 0 for networks."""
        return self.info.order

    @property
    def vocab_size(self):
        return self.info.vocab_size

    @property
    def family(self):
        return self.info.family

    # --- scoring

    def _score(self, sentence):
        """Natural-log probabilities of the words then </s>, and OOV flags."""
        words = _words(sentence)
        n = len(words)
        with self._lock:
            h = self._handle()
            if n > self._cap:  # the buffers, reused from call to call, grow
                cap = max(n, 2 * self._cap, 64)
                self._wbuf = (ctypes.c_char_p * cap)()
                self._lp = (ctypes.c_double * (cap + 1))()
                self._oov = (ctypes.c_ubyte * (cap + 1))()
                self._cap = cap
            self._wbuf[:n] = words
            sent = _capi.Sentence(self._wbuf, n)
            err = _capi.ErrBuf()
            rc = _capi.lib().llr_model_score(h, ctypes.byref(sent), 1, self._lp, self._oov, None,
                                             ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
            return self._lp[:n + 1], [o != 0 for o in self._oov[:n + 1]]

    def full_scores(self, sentence, bos=True, eos=True, base=10):
        """Yield a TokenScore (logprob, ngram_length, oov) for each word of
        sentence, then for </s> unless eos is False, as KenLM's full_scores
        does.  logprob is in base 10 by default, as KenLM's; base="e" gives
        natural logs, base=2 bits (score(1) --base).  bos is KenLM's, and
        must be True."""
        _check_bos(bos)
        div = _log_base(base)
        lp, oov = self._score(sentence)
        if not eos:
            lp, oov = lp[:-1], oov[:-1]
        for v, o in zip(lp, oov):
            yield TokenScore(v / div, 0, o)

    def score(self, sentence, bos=True, eos=True, base=10):
        """The total log-probability of sentence, a str of tokens separated
        by spaces (tokenise raw text with tok(1) first): log10 by default, as
        KenLM's Model.score; base="e" gives the natural log that score(1)
        prints by default, base=2 bits.  Every sentence is scored from <s>;
        the </s> that ends it counts unless eos is False (bos, KenLM's, must
        be True: there is no other context).  The same number
        as score(1) -m on the same model and line (OOVs scored as the model
        scores them, info.oov)."""
        _check_bos(bos)
        div = _log_base(base)
        lp, _ = self._score(sentence)
        if not eos:
            lp = lp[:-1]
        total = 0.0
        for v in lp:  # in order, as score(1) adds them
            total += v
        return total / div

    def perplexity(self, sentence):
        """exp(-L / T) over the sentence's T = words + 1 predictions (the
        </s> included), L the natural-log probability: score(1)'s
        perplexity of that one line."""
        lp, _ = self._score(sentence)
        total = 0.0
        for v in lp:
            total += v
        return math.exp(-total / len(lp))
