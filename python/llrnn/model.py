"""llrnn.Model: one model file (any family the library scores: LSTM
language models of every output and input, open-vocabulary ones, ARPA or
binary n-grams) opened through libllrnn's model interface, scoring
sentences exactly as score(1) does, embedding them as score --embed does
and generating as gen(1) does.  Its API follows KenLM's Python module:
score, full_scores, perplexity, order."""
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
    "output", "input", "cell", "spelling", "oov", "operations", "dim", "embedding"])
ModelInfo.__doc__ = """What a model is (llr_model_describe):
kind       the file's kind, "model" or "ngram" (ARPA text too)
family     "rnnlm", "ngram", "encdec", "sentenc"
vocab_size the (target) vocabulary, <s>, </s> and <unk> included
has_unk    whether <unk> is in the vocabulary
order      the n-gram order; 0 for networks
layers, embed, hidden   the network's sizes; 0 for n-grams
output     rnnlm: "softmax", "loglinear", "tree", "classes"; else None
input      rnnlm: "word", "chars", "concat", "sum"; else None
cell       rnnlm: the recurrent cell, "lstm", "gru", "rnn", "vcrnn",
           "vcgru"; else None
spelling   whether it carries a spelling model (open scoring possible)
oov        how a word outside the vocabulary is scored: "unk" (as <unk>),
           "spread" (<unk>'s share by its spelling), "features" (an
           LL-RNN's own row of the word's features), "zero" (an n-gram
           without <unk>: log p 0, the context cut, as SRILM)
operations the model's operations, a tuple of "describe", "score",
           "score_pairs", "embed", "predict", "gen", "beam", "gen_features",
           "gen_source" (llr_model_info.ops)
dim        the size of Model.embed's vectors; 0 without
embedding  what they are: "cbow", "gru", "bigru" (sentence encoders),
           "lm-input-mean" (an LSTM LM); None without
"""

TokenScore = collections.namedtuple("TokenScore", ["logprob", "ngram_length", "oov"])
TokenScore.__doc__ = """One predicted token of full_scores: its log-probability in the
base asked for; the n-gram length, as KenLM's full_scores gives it (an
n-gram model's longest listed n-gram ending in the token, <s> counted: 1
for a unigram, <unk>'s for an unknown word; 0 for a word an n-gram without
<unk> does not score, and 0 for every network); whether the word is
outside the vocabulary."""

Generated = collections.namedtuple("Generated", ["text", "words", "logprob", "ended", "score"])
Generated.__doc__ = """One sentence of Model.generate:
text     the line gen(1) prints: the prefix (a language model's) and the
         generated words, separated by spaces
words    the generated words alone, a tuple of str (</s> not among them)
logprob  the log-probability of the prefix, the words and, when ended,
         </s>: the number gen --logprob prints, in the base asked for
         (natural logs by default, as gen)
ended    True when </s> ended it, False when max_len cut it
score    an encoder-decoder's rank, logprob (natural) / length^len_norm;
         None for a language model
"""


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


def _words(sentence, what="sentence", empty_ok=False):
    """The words of one tokenised sentence, UTF-8 encoded, as score(1)
    reads a line (its end of line, "\n" or "\r\n", aside): runs of
    characters other than space and TAB, a <s> first and a </s> last
    taken as markers.  Messages name the sentence as what; empty_ok lets
    it have no word (a generation prefix)."""
    if isinstance(sentence, str):
        b = sentence.encode("utf-8")  # a lone surrogate: UnicodeEncodeError, a ValueError
    elif isinstance(sentence, bytes):
        sentence.decode("utf-8")  # not UTF-8: UnicodeDecodeError, a ValueError
        b = sentence
    else:
        raise TypeError(what + ": expected str (tokens separated by spaces), got %s"
                        % type(sentence).__name__)
    # a line as read from a file: its end of line is not a token
    if b.endswith(b"\r\n"):
        b = b[:-2]
    elif b.endswith(b"\n"):
        b = b[:-1]
    if b"\n" in b or b"\0" in b:
        raise ValueError(what + ": a newline or NUL inside (one sentence, one line)")
    words = [w for w in b.replace(b"\t", b" ").split(b" ") if w]
    if words and words[0] == b"<s>":
        del words[0]
    if words and words[-1] == b"</s>":
        del words[-1]
    if not words and not empty_ok:
        raise ValueError(what + ": empty (no word besides the markers)")
    if b"<s>" in words or b"</s>" in words:
        w = "<s>" if b"<s>" in words else "</s>"
        raise ValueError(what + ": %s inside the sentence (a marker only as its first or last token)" % w)
    return words


def _int(name, v, lo, hi):
    """v, an int (not a bool) in [lo, hi], or TypeError / ValueError
    naming the argument, with the range gen(1) accepts."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s: expected an int, got %s" % (name, type(v).__name__))
    if not lo <= v <= hi:
        raise ValueError("%s: %d out of range (%d .. %d)" % (name, v, lo, hi))
    return v


def _float(name, v, lo, hi, lo_open=False):
    """v, a real number in [lo, hi] ((lo, hi] with lo_open), as a float."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: expected a number, got %s" % (name, type(v).__name__))
    v = float(v)
    if not (lo < v <= hi if lo_open else lo <= v <= hi):
        raise ValueError("%s: %r out of range (%s%g .. %g]" % (name, v, "(" if lo_open else "[", lo, hi))
    return v


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("llrnn: this method returns a numpy array: install numpy (Debian: python3-numpy)")
    return numpy


def _sentences(sentences, what="sentences"):
    """The words of each sentence of a list (any iterable but a str)."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError("%s: expected a list of sentences, got a single %s" % (what, type(sentences).__name__))
    try:
        it = iter(sentences)
    except TypeError:
        raise TypeError("%s: expected a list of sentences, got %s" % (what, type(sentences).__name__)) from None
    return [_words(s, "%s[%d]" % (what, i)) for i, s in enumerate(it)]


class _Batch:
    """A batch of encoded sentences as the library reads them: llr_sentence
    B whose words point into one array of all the batch's words (kept
    alive here)."""

    def __init__(self, words):
        self.B = len(words)
        flat = [w for ws in words for w in ws]
        self._arr = (ctypes.c_char_p * max(len(flat), 1))(*flat)
        self.sents = (_capi.Sentence * max(self.B, 1))()
        base, size = ctypes.addressof(self._arr), ctypes.sizeof(ctypes.c_char_p)
        ptr = ctypes.POINTER(ctypes.c_char_p)
        o = 0
        for b, ws in enumerate(words):
            s = self.sents[b]
            s.words = ctypes.cast(base + o * size, ptr)
            s.n = len(ws)
            o += len(ws)
        self.tokens = len(flat) + self.B


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
        self._open = open
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
            output=s(i.output), input=s(i.input), cell=s(i.cell), spelling=bool(i.spelling),
            oov=_capi.OOV_MODES.get(i.oov, str(i.oov)),
            operations=tuple(n for bit, n in sorted(_capi.OPS.items()) if i.ops & bit),
            dim=i.dim, embedding=s(i.embedding))

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

    def _score(self, sentence, lengths=False):
        """Natural-log probabilities of the words then </s>, and OOV flags;
        with lengths, the n-gram lengths too (llr_model_score_lengths)."""
        words = _words(sentence)
        n = len(words)
        with self._lock, _capi.blas_order(True):
            h = self._handle()
            if n > self._cap:  # the buffers, reused from call to call, grow
                cap = max(n, 2 * self._cap, 64)
                self._wbuf = (ctypes.c_char_p * cap)()
                self._lp = (ctypes.c_double * (cap + 1))()
                self._oov = (ctypes.c_ubyte * (cap + 1))()
                self._len = (ctypes.c_int32 * (cap + 1))()
                self._cap = cap
            self._wbuf[:n] = words
            sent = _capi.Sentence(self._wbuf, n)
            err = _capi.ErrBuf()
            if lengths:
                rc = _capi.lib().llr_model_score_lengths(h, ctypes.byref(sent), 1, self._lp, self._oov, self._len,
                                                         ctypes.byref(err))
            else:
                rc = _capi.lib().llr_model_score(h, ctypes.byref(sent), 1, self._lp, self._oov, None,
                                                 ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
            got = self._lp[:n + 1], [o != 0 for o in self._oov[:n + 1]]
            return got + (self._len[:n + 1],) if lengths else got

    def full_scores(self, sentence, bos=True, eos=True, base=10):
        """Yield a TokenScore (logprob, ngram_length, oov) for each word of
        sentence, then for </s> unless eos is False, as KenLM's full_scores
        does.  logprob is in base 10 by default, as KenLM's; base="e" gives
        natural logs, base=2 bits (score(1) --base).  ngram_length is
        KenLM's too: the length of the n-gram an n-gram model found, <s>
        counted (0 for networks).  bos is KenLM's, and must be True."""
        _check_bos(bos)
        div = _log_base(base)
        lp, oov, lens = self._score(sentence, lengths=True)
        if not eos:
            lp, oov = lp[:-1], oov[:-1]
        for v, n, o in zip(lp, lens, oov):
            yield TokenScore(v / div, n, o)

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

    def score_batch(self, sentences, threads=1, bos=True, eos=True, base=10, batch=64):
        """The total log-probability of each of sentences (a list of str),
        as a numpy float64 array: the numbers score() gives one by one, and
        score(1) gives for the lines, to the last bit.  The library scores
        batch sentences in one call (score --batch) and splits each call
        among threads threads (score --threads; 1: the calling thread),
        which an LSTM model uses; the other families score on one.  bos,
        eos and base are score()'s; a bad sentence raises before any is
        scored, naming it (sentences[3]: ...)."""
        _check_bos(bos)
        div = _log_base(base)
        threads = _int("threads", threads, 1, 1024)
        batch = _int("batch", batch, 1, 4096)
        np = _numpy()
        words = _sentences(sentences)
        out = np.empty(len(words), dtype=np.float64)
        lib = _capi.lib()
        with self._lock, _capi.blas_order(True):
            h = self._handle()
            err = _capi.ErrBuf()
            rc = lib.llr_model_set_threads(h, threads, ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
            try:
                for start in range(0, len(words), batch):
                    part = words[start:start + batch]
                    bt = _Batch(part)
                    lp = (ctypes.c_double * bt.tokens)()
                    oov = (ctypes.c_ubyte * bt.tokens)()
                    rc = lib.llr_model_score(h, bt.sents, bt.B, lp, oov, None, ctypes.byref(err))
                    if rc != 0:
                        _raise(rc, err)
                    o = 0
                    for b, w in enumerate(part):
                        k = len(w) + 1
                        total = 0.0
                        for v in lp[o:o + k - (0 if eos else 1)]:  # in order, as score(1) adds them
                            total += v
                        out[start + b] = total / div
                        o += k
            finally:
                lib.llr_model_set_threads(h, 1, ctypes.byref(err))
        return out

    def score_pair(self, source, target, eos=True, base=10):
        """An encoder-decoder's log-probability of target given source
        (two str of tokens), </s> included unless eos is False: the
        number score --source prints for the line pair (log10 by default;
        base="e" natural logs).  A source word outside the source
        vocabulary reads as its <unk>.  llrnn.Error for a model that reads
        no source."""
        div = _log_base(base)
        src = _words(source, "source", empty_ok=True)
        tgt = _words(target, "target")
        lib = _capi.lib()
        with self._lock, _capi.blas_order(True):
            h = self._handle()
            s, t = _Batch([src]), _Batch([tgt])
            lp = (ctypes.c_double * t.tokens)()
            oov = (ctypes.c_ubyte * t.tokens)()
            err = _capi.ErrBuf()
            rc = lib.llr_model_score_pairs(h, s.sents, t.sents, 1, lp, oov, ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
        total = 0.0
        for v in lp[:t.tokens - (0 if eos else 1)]:
            total += v
        return total / div

    # --- embedding

    def embed(self, sentences, batch=64):
        """Vectors of sentences, as score --embed writes them: a numpy
        float32 array of len(sentences) rows and info.dim columns (a single
        str gives one vector, a 1-D array).  A sentence encoder's encoding,
        or for an LSTM language model with word input the mean of its
        words' input embeddings (info.embedding says which); a word
        outside the vocabulary reads as <unk>.  llrnn.Error for a model
        without embeddings (n-grams, encoder-decoders)."""
        one = isinstance(sentences, (str, bytes))
        words = [_words(sentences)] if one else _sentences(sentences)
        batch = _int("batch", batch, 1, 4096)
        np = _numpy()
        lib = _capi.lib()
        with self._lock, _capi.blas_order(True):
            h = self._handle()
            err = _capi.ErrBuf()
            rc = lib.llr_model_embed(h, None, 0, None, None, ctypes.byref(err))  # can it?
            if rc != 0:
                _raise(rc, err)
            dim = self.info.dim
            out = np.zeros((len(words), dim), dtype=np.float32)
            for start in range(0, len(words), batch):
                bt = _Batch(words[start:start + batch])
                view = out[start:start + bt.B]
                rc = lib.llr_model_embed(h, bt.sents, bt.B, view.ctypes.data, None, ctypes.byref(err))
                if rc != 0:
                    _raise(rc, err)
        return out[0] if one else out

    # --- features

    def features(self, word):
        """The features of word (one token, a str) as the output layer of
        an LSTM language model sees it: a list of (name, value) pairs, in
        the order gen --show-features prints them ("NAME" for value 1,
        else "NAME=VALUE").  A vocabulary word's row of the feature matrix
        phi (an LL-RNN's lexicon features; none in a softmax model), any
        other string's features from the model's extractors (orthography,
        suffixes...) and its unseen-word features.
        llrnn.Error for a model without word features (n-grams and the
        encoder families)."""
        if isinstance(word, bytes):
            word.decode("utf-8")  # not UTF-8: UnicodeDecodeError, a ValueError
            b = word
        elif isinstance(word, str):
            b = word.encode("utf-8")
        else:
            raise TypeError("word: expected str, got %s" % type(word).__name__)
        if not b:
            raise ValueError("word: empty")
        if any(c in b for c in b" \t\n\r\0"):
            raise ValueError("word: one token, without spaces, newlines or NUL: %r" % (word,))
        got = []

        def emit(name, n, value, ctx):
            got.append((ctypes.string_at(name, n).decode("utf-8", "replace"), value))
            return 0
        fn = _capi.FEATURE_FN(emit)
        with self._lock:
            h = self._handle()
            err = _capi.ErrBuf()
            rc = _capi.lib().llr_model_word_features(h, b, fn, None, ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
        return got

    # --- generation

    def generate(self, prefix="", n=1, temperature=1.0, top_k=0, top_p=1.0, seed=1, greedy=False,
                 beam=0, nbest=1, max_len=100, no_unk=False, len_norm=1.0, base="e"):
        """Sentences from the model, as gen(1) draws them: a list of
        Generated (text, words, logprob, ended, score), the i-th the i-th
        line gen -m MODEL -s seed -n n -p prefix --logprob prints for the
        same options.

        A language model continues prefix (a str of tokens; "" starts from
        <s>): n sentences drawn with temperature, top_k (0: all words) and
        top_p (1: all the mass) from a generator seeded with seed (gen -s,
        default 1), or with greedy=True the most probable word at every
        step (one sentence), or with beam=K a beam search giving its nbest
        best sentences (gen --beam K --nbest N; not for n-gram models).
        An encoder-decoder reads prefix as its source and decodes it by
        beam search (beam 0 or 1: greedy), ranking by logprob /
        length^len_norm; it does not sample.  At most max_len generated
        words a sentence; no_unk never produces <unk> nor an unseen word
        (gen --no-unk).  A model opened with open=False draws no unseen
        words (gen --closed).  logprob is in natural logs by default, as
        gen --logprob prints it; base=10 or 2 as score().

        Arguments out of gen's ranges raise ValueError (TypeError for a
        wrong type); a model that cannot generate (a sentence encoder)
        raises llrnn.Error with the library's message."""
        div = _log_base(base)
        pre = _words(prefix, "prefix", empty_ok=True)
        n = _int("n", n, 1, 1000000000)
        temperature = _float("temperature", temperature, 1e-6, 1e6)
        top_k = _int("top_k", top_k, 0, 2**31 - 1)
        top_p = _float("top_p", top_p, 0.0, 1.0, lo_open=True)
        seed = _int("seed", seed, 0, 2**63 - 1)
        beam = _int("beam", beam, 0, 1000)
        nbest = _int("nbest", nbest, 1, 1000)
        max_len = _int("max_len", max_len, 1, 100000)
        len_norm = _float("len_norm", len_norm, 0.0, 10.0)
        if not isinstance(greedy, bool) or not isinstance(no_unk, bool):
            raise TypeError("greedy, no_unk: expected True or False")
        source = "gen_source" in self.info.operations
        if source:
            beam = max(beam, 1)  # gen over sources: beam 1 is greedy
            if greedy and beam > 1:
                raise ValueError("greedy and beam exclude each other")
        else:
            if greedy and beam:
                raise ValueError("greedy and beam exclude each other")
            if (greedy or beam) and n != 1:
                raise ValueError("n applies to sampling; greedy and beam give one sentence (nbest for more)")
        if nbest > 1 and not beam:
            raise ValueError("nbest needs beam")
        if beam and nbest > beam:
            raise ValueError("nbest %d is more than beam %d" % (nbest, beam))
        lib = _capi.lib()
        opts = _capi.GenOptsBuf()
        lib.llr_gen_opts_init(ctypes.byref(opts))
        o = opts.opts
        o.sample.temperature, o.sample.top_k, o.sample.top_p = temperature, top_k, top_p
        o.sample.greedy = int(greedy)
        o.max_len, o.beam, o.nbest, o.no_unk, o.len_norm = max_len, beam, nbest, int(no_unk), len_norm
        o.closed = int(self._open is False)
        words = (ctypes.c_char_p * max(len(pre), 1))(*pre)
        sent = _capi.Sentence(words, len(pre))
        prefix_text = [w.decode("utf-8") for w in pre]
        out = []
        with self._lock, _capi.blas_order(False):
            h = self._handle()
            err = _capi.ErrBuf()
            g = ctypes.c_void_p()
            rc = lib.llr_gen_new(h, ctypes.byref(opts), ctypes.byref(g), ctypes.byref(err))
            if rc != 0:
                _raise(rc, err)
            try:
                rc = lib.llr_gen_start(g, ctypes.byref(sent), ctypes.byref(err))
                if rc != 0:
                    _raise(rc, err)
                if beam:
                    rc = lib.llr_gen_beam(g, ctypes.byref(err))
                    if rc < 0:
                        _raise(rc, err)
                    out += self._results(g, rc, prefix_text, source, div)
                else:
                    rng = _capi.Rng()
                    lib.llr_rng_seed(ctypes.byref(rng), seed)
                    left = 1 if greedy else n
                    while left > 0:
                        k = min(left, _capi.GEN_BATCH)
                        left -= k
                        rc = lib.llr_gen_sample(g, ctypes.byref(rng), k, ctypes.byref(err))
                        if rc != 0:
                            _raise(rc, err)
                        out += self._results(g, k, prefix_text, source, div)
            finally:
                lib.llr_gen_free(g)
        return out

    @staticmethod
    def _results(g, k, prefix, source, div):
        lib = _capi.lib()
        got = []
        r = _capi.GenResultBuf()
        for i in range(k):
            lib.llr_gen_result_get(g, i, ctypes.byref(r))
            words = tuple(lib.llr_gen_word(g, i, j).decode("utf-8", "replace") for j in range(r.r.n))
            text = " ".join(list(words) if source else prefix + list(words))
            got.append(Generated(text, words, r.r.logp_total / div, bool(r.r.ended),
                                 r.r.score if source else None))
        return got
