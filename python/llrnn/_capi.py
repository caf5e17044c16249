"""The C side of the llrnn module: finding and loading the shared library
(libllrnn.so.MAJOR) and the ctypes prototypes of the model interface of
lib/llrnn.h.  Nothing here is public; llrnn.Model is the interface.

The structures mirror lib/llrnn.h.  Those the library fills or returns
(llr_err, llr_model_info, llr_model_opts, llr_gen_opts, llr_gen_result)
sit in buffers larger than the C structure, so a field appended in C cannot write past Python's memory;
tests/54-python.bats checks the offsets against the C compiler's.
"""
import contextlib
import ctypes
import os
import subprocess
import sys
import threading

# libllrnn.so.MAJOR, MAJOR the first number of LLR_VERSION.
SONAME = "libllrnn.so.0"

# LLR_OPEN_*, LLR_OOV_* and LLR_MODEL_* of lib/llrnn.h.
OPEN_AUTO, OPEN_ON, OPEN_OFF = 0, 1, 2
OOV_MODES = {0: "unk", 1: "spread", 2: "features", 3: "zero"}
OPS = {1: "describe", 2: "score", 4: "score_pairs", 8: "embed", 16: "predict", 32: "tag",
       256: "gen", 512: "beam", 1024: "gen_features", 2048: "gen_source"}

_PAD = 4096  # bytes of room after a structure the library writes


class Err(ctypes.Structure):
    """struct llr_err."""
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


class ErrBuf(ctypes.Union):
    _fields_ = [("err", Err), ("_pad", ctypes.c_char * _PAD)]


class Opts(ctypes.Structure):
    """struct llr_model_opts."""
    _fields_ = [("open", ctypes.c_int), ("check_norm", ctypes.c_int),
                ("norm_samples", ctypes.c_int64), ("seed", ctypes.c_uint64),
                ("verify", ctypes.c_int)]


class OptsBuf(ctypes.Union):
    _fields_ = [("opts", Opts), ("_pad", ctypes.c_char * _PAD)]


class Info(ctypes.Structure):
    """struct llr_model_info."""
    _fields_ = [("kind", ctypes.c_char_p), ("family", ctypes.c_char_p),
                ("vocab", ctypes.c_int64), ("has_unk", ctypes.c_int), ("order", ctypes.c_int),
                ("layers", ctypes.c_int), ("embed", ctypes.c_int), ("hidden", ctypes.c_int),
                ("output", ctypes.c_char_p), ("input", ctypes.c_char_p), ("cell", ctypes.c_char_p),
                ("spelling", ctypes.c_int), ("oov", ctypes.c_int),
                ("log_outside", ctypes.c_double), ("spell_lambda", ctypes.c_double),
                ("sigs", ctypes.c_size_t),
                ("sigs_exact", ctypes.c_int), ("sig_samples", ctypes.c_char_p),
                ("norm_draws", ctypes.c_int64), ("norm_checked", ctypes.c_int64),
                ("norm_mismatched", ctypes.c_int64), ("norm_first", ctypes.c_char_p),
                ("norm_listed", ctypes.c_int32), ("norm_digits", ctypes.c_int32),
                ("norm_shorts", ctypes.c_int32), ("norm_dict", ctypes.c_int32),
                ("dim", ctypes.c_int), ("embedding", ctypes.c_char_p),
                ("ops", ctypes.c_uint)]


class InfoBuf(ctypes.Union):
    _fields_ = [("info", Info), ("_pad", ctypes.c_char * _PAD)]


class Sentence(ctypes.Structure):
    """struct llr_sentence: n words, without <s> and </s>."""
    _fields_ = [("words", ctypes.POINTER(ctypes.c_char_p)), ("n", ctypes.c_size_t)]


class SampleOpts(ctypes.Structure):
    """struct llr_sample_opts."""
    _fields_ = [("temperature", ctypes.c_double), ("top_k", ctypes.c_int32),
                ("top_p", ctypes.c_double), ("greedy", ctypes.c_int)]


class GenOpts(ctypes.Structure):
    """struct llr_gen_opts."""
    _fields_ = [("sample", SampleOpts), ("max_len", ctypes.c_int), ("beam", ctypes.c_int),
                ("nbest", ctypes.c_int), ("no_unk", ctypes.c_int), ("closed", ctypes.c_int),
                ("spell_tries", ctypes.c_int64), ("len_norm", ctypes.c_double),
                ("attention", ctypes.c_int), ("fsa", ctypes.c_char_p), ("regex", ctypes.c_char_p),
                ("grammar", ctypes.c_char_p)]


class GenOptsBuf(ctypes.Union):
    _fields_ = [("opts", GenOpts), ("_pad", ctypes.c_char * _PAD)]


class GenResult(ctypes.Structure):
    """struct llr_gen_result."""
    _fields_ = [("n", ctypes.c_size_t), ("logp", ctypes.POINTER(ctypes.c_float)),
                ("logp_total", ctypes.c_double), ("ended", ctypes.c_int),
                ("eos_logp", ctypes.c_float), ("score", ctypes.c_double)]


class GenResultBuf(ctypes.Union):
    _fields_ = [("r", GenResult), ("_pad", ctypes.c_char * _PAD)]


class Rng(ctypes.Structure):
    """struct llr_rng (xoshiro256**: four words of state)."""
    _fields_ = [("s", ctypes.c_uint64 * 4)]


# llr_feature_fn: int (*)(const char *name, size_t len, float value, void *ctx)
FEATURE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t, ctypes.c_float,
                              ctypes.c_void_p)

# LLR_GEN_BATCH: sentences one llr_gen_sample call draws at most.
GEN_BATCH = 32

_lib = None


class _OrderGate:
    """Who multiplies in which order.  score(1) sums every product in one
    fixed order (llr_blas_set_fixed_order(1): its numbers do not depend on
    the batch), gen(1) in OpenBLAS's (the default): the module does each
    as its tool does.  The setting is the process's, so calls in one order
    run together, from any number of threads, and a call in the other
    order waits until they are done (then switches)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._fixed = True  # as lib() leaves it
        self._active = 0

    @contextlib.contextmanager
    def order(self, fixed):
        with self._cond:
            while self._active and self._fixed != fixed:
                self._cond.wait()
            if self._fixed != fixed:
                lib().llr_blas_set_fixed_order(int(fixed))
                self._fixed = fixed
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()


_gate = _OrderGate()


def blas_order(fixed):
    """A context in which the library multiplies in score's fixed order
    (fixed=True: scoring, embedding) or in gen's (False: generation)."""
    return _gate.order(fixed)


def candidates():
    """Where the library is looked for, in order: $LLRNN_LIB alone when set;
    otherwise beside this module, then the soname through the dynamic
    loader's search (LD_LIBRARY_PATH, the ld.so cache)."""
    env = os.environ.get("LLRNN_LIB")
    if env:
        return [env]
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME), SONAME]


_CORE = ("import ctypes, sys\n"
         "f = ctypes.CDLL(sys.argv[1]).llr_blas_better_core\n"
         "f.restype = ctypes.c_char_p\n"
         "c = f()\n"
         "print(c.decode() if c else '')\n")


def blas_core(path):
    """The tools' choice of OpenBLAS kernels (llrnn(1), ENVIRONMENT), made
    here too so that the module's numbers are theirs: OpenBLAS reads
    OPENBLAS_CORETYPE when it is loaded, so a child process loads the
    library and asks llr_blas_better_core, and the variable is set before
    this process loads it.  Nothing when the user set the variable, or
    when the child fails (the kernels OpenBLAS picks then stay)."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return
    try:
        r = subprocess.run([sys.executable, "-c", _CORE, path], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return
    core = r.stdout.strip() if r.returncode == 0 else ""
    if core:
        os.environ["OPENBLAS_CORETYPE"] = core


def lib():
    """The loaded library with its prototypes set; OSError naming every
    place tried when none loads."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: no such file" % path)
            continue
        blas_core(path)
        try:
            so = ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
            continue
        _prototypes(so)
        # score(1)'s products, summed in one order, so the numbers are its
        # numbers to the last bit whatever the batch (lib/llrnn.h, BLAS seam)
        so.llr_blas_set_fixed_order(1)
        # score(1)'s and gen(1)'s default --threads 1: OpenBLAS would
        # otherwise start a thread a core, which gains nothing on the small
        # products of scoring (Model.score_batch's threads are the library's)
        so.llr_blas_set_threads(1)
        _lib = so
        return so
    raise OSError("llrnn: cannot load the llrnn library (%s); build it (make) and set LLRNN_LIB "
                  "to build/libllrnn.so, or install it (make install)" % "; ".join(tried))


def _prototypes(so):
    c_model = ctypes.c_void_p
    so.llr_model_opts_default.argtypes = []
    so.llr_model_opts_default.restype = OptsBuf
    so.llr_model_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(OptsBuf), ctypes.POINTER(c_model),
                                  ctypes.POINTER(ErrBuf)]
    so.llr_model_open.restype = ctypes.c_int
    so.llr_model_close.argtypes = [c_model]
    so.llr_model_close.restype = None
    so.llr_model_describe.argtypes = [c_model, ctypes.POINTER(InfoBuf)]
    so.llr_model_describe.restype = ctypes.c_int
    so.llr_model_score.argtypes = [c_model, ctypes.POINTER(Sentence), ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_ubyte),
                                   ctypes.c_void_p, ctypes.POINTER(ErrBuf)]
    so.llr_model_score.restype = ctypes.c_int
    so.llr_model_score_lengths.argtypes = [c_model, ctypes.POINTER(Sentence), ctypes.c_size_t,
                                           ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_ubyte),
                                           ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ErrBuf)]
    so.llr_model_score_lengths.restype = ctypes.c_int
    so.llr_model_score_pairs.argtypes = [c_model, ctypes.POINTER(Sentence), ctypes.POINTER(Sentence),
                                         ctypes.c_size_t, ctypes.POINTER(ctypes.c_double),
                                         ctypes.POINTER(ctypes.c_ubyte), ctypes.POINTER(ErrBuf)]
    so.llr_model_score_pairs.restype = ctypes.c_int
    so.llr_model_set_threads.argtypes = [c_model, ctypes.c_int, ctypes.POINTER(ErrBuf)]
    so.llr_model_set_threads.restype = ctypes.c_int
    so.llr_model_embed.argtypes = [c_model, ctypes.POINTER(Sentence), ctypes.c_size_t, ctypes.c_void_p,
                                   ctypes.c_void_p, ctypes.POINTER(ErrBuf)]
    so.llr_model_embed.restype = ctypes.c_int
    so.llr_model_word_features.argtypes = [c_model, ctypes.c_char_p, FEATURE_FN, ctypes.c_void_p,
                                           ctypes.POINTER(ErrBuf)]
    so.llr_model_word_features.restype = ctypes.c_int
    c_gen = ctypes.c_void_p
    so.llr_gen_opts_init.argtypes = [ctypes.POINTER(GenOptsBuf)]
    so.llr_gen_opts_init.restype = None
    so.llr_gen_new.argtypes = [c_model, ctypes.POINTER(GenOptsBuf), ctypes.POINTER(c_gen), ctypes.POINTER(ErrBuf)]
    so.llr_gen_new.restype = ctypes.c_int
    so.llr_gen_free.argtypes = [c_gen]
    so.llr_gen_free.restype = None
    so.llr_gen_start.argtypes = [c_gen, ctypes.POINTER(Sentence), ctypes.POINTER(ErrBuf)]
    so.llr_gen_start.restype = ctypes.c_int
    so.llr_gen_sample.argtypes = [c_gen, ctypes.POINTER(Rng), ctypes.c_size_t, ctypes.POINTER(ErrBuf)]
    so.llr_gen_sample.restype = ctypes.c_int
    so.llr_gen_beam.argtypes = [c_gen, ctypes.POINTER(ErrBuf)]
    so.llr_gen_beam.restype = ctypes.c_int
    so.llr_gen_result_get.argtypes = [c_gen, ctypes.c_size_t, ctypes.POINTER(GenResultBuf)]
    so.llr_gen_result_get.restype = None
    so.llr_gen_word.argtypes = [c_gen, ctypes.c_size_t, ctypes.c_size_t]
    so.llr_gen_word.restype = ctypes.c_char_p
    so.llr_rng_seed.argtypes = [ctypes.POINTER(Rng), ctypes.c_uint64]
    so.llr_rng_seed.restype = None
    so.llr_blas_set_fixed_order.argtypes = [ctypes.c_int]
    so.llr_blas_set_fixed_order.restype = None
    so.llr_blas_set_threads.argtypes = [ctypes.c_int]
    so.llr_blas_set_threads.restype = None
    so.llr_strerror.argtypes = [ctypes.c_int]
    so.llr_strerror.restype = ctypes.c_char_p
