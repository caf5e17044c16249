"""The C side of the llrnn module: finding and loading the shared library
(libllrnn.so.MAJOR) and the ctypes prototypes of the model interface of
lib/llrnn.h.  Nothing here is public; llrnn.Model is the interface.

The structures mirror lib/llrnn.h.  Those the library fills or returns
(llr_err, llr_model_info, llr_model_opts) sit in buffers larger than the C
structure, so a field appended in C cannot write past Python's memory;
tests/54-python.bats checks the offsets against the C compiler's.
"""
import ctypes
import os

# libllrnn.so.MAJOR, MAJOR the first number of LLR_VERSION.
SONAME = "libllrnn.so.0"

# LLR_OPEN_*, LLR_OOV_* and LLR_MODEL_* of lib/llrnn.h.
OPEN_AUTO, OPEN_ON, OPEN_OFF = 0, 1, 2
OOV_MODES = {0: "unk", 1: "spread", 2: "features", 3: "zero"}
OPS = {1: "describe", 2: "score", 4: "score_pairs", 8: "embed", 16: "predict",
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
                ("norm_samples", ctypes.c_int64), ("seed", ctypes.c_uint64)]


class OptsBuf(ctypes.Union):
    _fields_ = [("opts", Opts), ("_pad", ctypes.c_char * _PAD)]


class Info(ctypes.Structure):
    """struct llr_model_info."""
    _fields_ = [("kind", ctypes.c_char_p), ("family", ctypes.c_char_p),
                ("vocab", ctypes.c_int64), ("has_unk", ctypes.c_int), ("order", ctypes.c_int),
                ("layers", ctypes.c_int), ("embed", ctypes.c_int), ("hidden", ctypes.c_int),
                ("output", ctypes.c_char_p), ("input", ctypes.c_char_p),
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


_lib = None


def candidates():
    """Where the library is looked for, in order: $LLRNN_LIB alone when set;
    otherwise beside this module, then the soname through the dynamic
    loader's search (LD_LIBRARY_PATH, the ld.so cache)."""
    env = os.environ.get("LLRNN_LIB")
    if env:
        return [env]
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME), SONAME]


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
        try:
            so = ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
            continue
        _prototypes(so)
        # score(1)'s products, summed in one order, so the numbers are its
        # numbers to the last bit whatever the batch (lib/llrnn.h, BLAS seam)
        so.llr_blas_set_fixed_order(1)
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
    so.llr_blas_set_fixed_order.argtypes = [ctypes.c_int]
    so.llr_blas_set_fixed_order.restype = None
    so.llr_strerror.argtypes = [ctypes.c_int]
    so.llr_strerror.restype = ctypes.c_char_p
