/*
 * internal.h - private helpers shared by lib/ files; not API.
 */
#ifndef LLR_INTERNAL_H
#define LLR_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "llrnn.h"

#define LLR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LLR_MAX(a, b) ((a) > (b) ? (a) : (b))

/* err->code if set, else the given code. */
static inline int llr_err_code(const llr_err *e, int fallback)
{
	return e && e->code ? e->code : fallback;
}

/* lib/core/alloc.c: an array of n elements of size bytes that is about
 * to be filled (the n-gram trie's levels, read from a file), zeroed when
 * zero is set; freed with free().  From 1 MiB on it is aligned to and
 * rounded up to 2 MiB and advised to be on transparent huge pages
 * (MADV_HUGEPAGE), so filling it takes a page fault per 2 MiB rather
 * than per 4 KiB (about 20 us each on a loaded virtual machine). */
void *llr_alloc_large(size_t n, size_t size, int zero);
/* A flat weight array grown as a loader's data arrives: *p (NULL at
 * first, *have floats) made room for n zero floats at least, those before
 * kept (calloc at first, whose pages cost nothing until written, then
 * realloc); *g, when g is not NULL, allocated (zero) once n reaches full.
 * The array, or NULL with err set. */
float *llr_weights_grow(float **p, size_t *have, float **g, size_t n, size_t full, const char *what, llr_err *err);

/* lib/core/archretry.c: archive_read_data and archive_read_next_header,
 * retried at most a few times on ARCHIVE_RETRY (which a damaged input can
 * answer for ever); after that ARCHIVE_RETRY, negative, is returned. */
struct archive;
struct archive_entry;
ssize_t llr_archive_data(struct archive *a, void *buf, size_t n);
int llr_archive_header(struct archive *a, struct archive_entry **ent);

/* lib/core/output.c: add c's write filter (or none) to a libarchive
 * writer; LLR_OK or LLR_EIO. */
int llr_compress_add_filter(struct archive *a, llr_compress c);

/* lib/text/lines.c: each line of path ("-": standard input) to fn, in
 * order; an error of fn is prefixed with "path:line", but for LLR_EIO,
 * which is about another file (a temporary one).  LLR_OK, or the first
 * error (of reading, or of fn). */
int llr_lines_each(const char *path, int (*fn)(void *ctx, const char *line, size_t len, llr_err *err), void *ctx,
                   llr_err *err);

/* The one token rule (lib/text/tokens.c, tok(1) "Token lines"): the next
 * maximal run of bytes other than space and TAB from *pos on.  Inline so
 * the readers of large files (ARPA) split without a call per token;
 * llr_token_next is this function.  A token's bytes are scanned 8 at a
 * time: a byte is a separator when it XORs to zero against ' ' or '\t',
 * and the lowest such byte of a little-endian word is found exactly by
 * the usual has-a-zero-byte test (its false positives lie only above a
 * true zero byte).  The last bytes of a line too: the 8 bytes ending at
 * len, shifted so that the token's first byte is the lowest (the bytes
 * shifted in are zero, no separator). */
static inline int llr_token_scan(const char *line, size_t len, size_t *pos, const char **tok, size_t *toklen)
{
	size_t i = *pos;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	size_t s = i;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (i < len) {
		uint64_t w, sp, tb, hit;
		if (len < 8) { /* a line of under 8 bytes */
			while (i < len && line[i] != ' ' && line[i] != '\t')
				i++;
			break;
		}
		size_t at = i + 8 <= len ? i : len - 8;
		memcpy(&w, line + at, 8);
		w >>= 8 * (i - at);
		sp = w ^ (ones * ' ');
		tb = w ^ (ones * '\t');
		hit = ((sp - ones) & ~sp & highs) | ((tb - ones) & ~tb & highs);
		if (hit) {
			i += (size_t)__builtin_ctzll(hit) >> 3;
			break;
		}
		i = at == i ? i + 8 : len;
	}
#else
	while (i < len && line[i] != ' ' && line[i] != '\t')
		i++;
#endif
	*pos = i;
	if (i == s)
		return 0;
	*tok = line + s;
	*toklen = i - s;
	return 1;
}

/* lib/lm/trainstate.c: the state/ members of a model file for n weights
 * cur (llrnn-model(5)).  Write them after the family's params/ (state/
 * weights = cur when ts->best is set); read them from the current member
 * `name` of r to the end of the file: ts gets the counters and a new
 * optimiser, cur the state/weights when present and ts->best what cur
 * held before (the params/ read by the caller). */
int llr_state_write(llr_tensor_writer *w, const llr_train_state *ts, const float *cur, size_t n, llr_err *err);
int llr_state_read(llr_tensor_reader *r, const char *path, const char *name, float *cur, size_t n, llr_train_state *ts, llr_err *err);
/* What follows a model's params/ in r (more: the current member is
 * `name`; 0: the file has ended): without tsp, skipped to the end; with
 * it, read into a new *tsp by llr_state_read when there is any. */
int llr_state_tail(llr_tensor_reader *r, const char *path, const char *name, int more, float *cur, size_t n,
                   llr_train_state **tsp, llr_err *err);
/* One params/ member of a model file (lib/lm/params.c): its full name
 * ("params/..."), rank, shape, and offset in the family's flat weights. */
typedef struct llr_param_tensor {
	char name[64];
	int nd;
	int64_t shape[2];
	size_t off;
} llr_param_tensor;
/* The i-th params/ member of net, as its family lists them. */
typedef void (*llr_param_tensor_fn)(const void *net, size_t i, llr_param_tensor *t);
/* Room for the first n weights of a family's flat array (those before
 * kept), which it returns (NULL with err set on failure). */
typedef struct llr_param_grow {
	float *(*fn)(void *ctx, size_t n, llr_err *err);
	void *ctx;
} llr_param_grow;
/* A model file's params/ for a family of flat weights par (n floats):
 * the meta's n_params checked against n, the ntensors members tensor
 * lists read in order (names, shapes, finite values; LLR_ETRUNC,
 * LLR_EFORMAT, LLR_ENAN), then llr_state_tail.  With grow, par is
 * ignored: the array is grown (grow->fn) member by member once each
 * member's data has arrived, then to n, so that a meta declaring a huge
 * model over a short file allocates nothing first. */
int llr_params_load(llr_tensor_reader *r, const char *path, const llr_meta *meta, const void *net, size_t ntensors,
                    llr_param_tensor_fn tensor, float *par, size_t n, const llr_param_grow *grow, llr_train_state **tsp,
                    llr_err *err);
/* A fresh training state for n weights, as train has always made one
 * (rnnlm, encdec): from seed a seeder whose draws seed *init (the
 * caller's weight initialisation), the epochs' shuffling and the dropout
 * generator, in that order; the optimiser of kind with lr and eps where
 * > 0, else its defaults; no validation yet.  NULL with err set. */
llr_train_state *llr_train_state_fresh(uint64_t seed, int optim, double lr, double eps, size_t n, llr_rng *init, llr_err *err);
/* Write m to the model file path: the meta build_meta fills, then the
 * members write_model puts (aborted on failure).  The savers of
 * lib/lm/encdec_model.c and senc_model.c. */
int llr_model_file_save(const char *path, const void *m, int (*build_meta)(const void *m, llr_meta *meta),
                        int (*write_model)(llr_tensor_writer *w, const void *m, const llr_train_state *ts, llr_err *err),
                        const llr_train_state *ts, llr_err *err);
/* Open the model file path (NULL: stdin), give a zeroed m of size bytes
 * to load, and hand it to *out; on failure free_fn(m) and *tsp (when
 * asked for) are undone.  The loaders of lib/lm/encdec_model.c and
 * senc_model.c. */
int llr_model_file_load(const char *path, size_t size,
                        int (*load)(llr_tensor_reader *r, const char *path, void *m, llr_train_state **tsp, llr_err *err),
                        void (*free_fn)(void *), void **out, llr_train_state **tsp, llr_err *err);

/* lib/features/extract.c: what its ORTH: rules see of a code point. */
#define LLR_CP_UPPER 1
#define LLR_CP_LOWER 2
#define LLR_CP_DIGIT 4
#define LLR_CP_PUNCT 8
#define LLR_CP_HYPHEN 16
int llr_cp_ortho_flags(int32_t c);

/* lib/features/orthostate.c: llr_extract's ORTH: features as a
 * deterministic automaton read one code point at a time, for dynamic
 * programmes over all strings (a character n-gram model jointly with the
 * features).  A state is a uint64_t (llr_ortho_start() is 0); code points
 * fall into LLR_ORTHO_CLASSES step classes, and two code points of one
 * class step every state alike, so a caller may step with the class's
 * representative.  The length features come from n, not from the state.
 * 591 states are reachable, no two of them equivalent (the unit test
 * counts them). */
typedef uint64_t llr_ortho_state;
#define LLR_ORTHO_CLASSES 136 /* 128 ASCII code points, 8 groups of the others */
llr_ortho_state llr_ortho_start(void);
/* The step class of a Unicode scalar value, in [0, LLR_ORTHO_CLASSES). */
int32_t llr_ortho_class(int32_t cp);
/* A code point of class cls. */
int32_t llr_ortho_class_rep(int32_t cls);
llr_ortho_state llr_ortho_step_class(llr_ortho_state s, int32_t cls);
/* = llr_ortho_step_class(s, llr_ortho_class(cp)). */
llr_ortho_state llr_ortho_step(llr_ortho_state s, int32_t cp);
/* The ORTH: features llr_extract (with ortho on) gives a string of n >= 1
 * code points whose steps from llr_ortho_start() end in s, through emit,
 * in the same order llr_extract emits them -- except two that the
 * automaton leaves to finite lists kept elsewhere: ORTH:year, and the
 * ORTH:ordinal of a Roman numeral (the branch of is_ordinal for words
 * that do not begin with a digit).  n = 0 emits nothing.  Returns emit's
 * first negative value, else LLR_OK. */
int llr_ortho_final(llr_ortho_state s, size_t n, llr_feature_fn emit, void *ctx);

/* lib/tensor/members.c: member helpers for the kinds made of named
 * tables (the lexicon, source.c, anyword.c, the n-gram trie): a text
 * member of names, one a line; the next member, checked to be `want`; a
 * text member of exactly `want` distinct names; name/indptr,
 * name/indices, name/data as a rows x cols matrix. */
int llr_lex_put_names(llr_tensor_writer *w, const char *member, const llr_strmap *s, llr_err *err);
int llr_lex_next_member(llr_tensor_reader *r, const char *want, llr_err *err);
int llr_lex_read_names(llr_tensor_reader *r, const char *member, int64_t want, llr_strmap **out, llr_err *err);
/* The same from the member's text (text[0..len)), however it was read. */
int llr_lex_parse_names(const char *text, size_t len, const char *member, int64_t want, llr_strmap **out, llr_err *err);

/* lib/tensor/tensorio.c: the .npy v1.0 preamble of an array of this
 * dtype and shape, as the writer puts it before the data (a multiple of
 * 64 bytes long); LLR_OK or LLR_ENOMEM. */
int llr_npy_header(llr_buf *b, llr_dtype dt, int ndim, const int64_t *shape);
/* lib/tensor/tensorio.c: member name.npy, the .npy header of (dt, ndim,
 * shape) then the array's bytes read from fd from offset 0 (stored
 * little-endian already); crc is the CRC-32C of all of them. */
int llr_tw_put_npy_fd(llr_tensor_writer *w, const char *name, llr_dtype dt, int ndim, const int64_t *shape, int fd, uint32_t crc,
                      llr_err *err);
/* lib/tensor/spool.c: a 1-D member of n elements of dt gathered in an
 * unlinked temporary file in dir, an element (host order) at a time,
 * then put into w once all n are there; it holds a buffer of
 * LLR_TW_SPOOL_BYTES. */
#define LLR_TW_SPOOL_BYTES ((size_t)1 << 20)
typedef struct llr_tw_spool llr_tw_spool;
llr_tw_spool *llr_tw_spool_new(const char *dir, llr_dtype dt, int64_t n, llr_err *err);
int llr_tw_spool_add(llr_tw_spool *s, const void *elem, llr_err *err);
int llr_tw_put_spool(llr_tensor_writer *w, const char *name, llr_tw_spool *s, llr_err *err);
void llr_tw_spool_free(llr_tw_spool *s);

/* lib/tensor/tarmap.c: an uncompressed tensor archive mapped into memory
 * (mmap, read only) with its members found in place, not read: what the
 * n-gram probing form loads in milliseconds.  Open answers LLR_EFORMAT
 * when path is not a regular, uncompressed pax archive (the caller then
 * reads it as a stream); it checks the CRC of no member.  The members'
 * data stay valid until llr_tarmap_close. */
typedef struct llr_tarmap llr_tarmap;
typedef struct llr_tarmap_member {
	char name[256];
	const unsigned char *data; /* the member's bytes in the mapping */
	size_t size;
	uint32_t crc; /* from its pax header, when has_crc */
	int has_crc;
} llr_tarmap_member;
int llr_tarmap_open(const char *path, llr_tarmap **out, llr_err *err);
void llr_tarmap_close(llr_tarmap *t);
size_t llr_tarmap_count(const llr_tarmap *t);
const llr_tarmap_member *llr_tarmap_at(const llr_tarmap *t, size_t i);
/* The member called name (with .npy for an array), or NULL. */
const llr_tarmap_member *llr_tarmap_find(const llr_tarmap *t, const char *name);
/* LLR_OK if the member's CRC-32C matches the one its header carries
 * (LLR_EFORMAT "checksum mismatch (corrupted file)" otherwise, or when
 * it carries none). */
int llr_tarmap_verify(const llr_tarmap *t, const llr_tarmap_member *m, llr_err *err);
/* The data of array member name (".npy" added) after checking that its
 * .npy header is exactly the writer's for dt and shape. */
int llr_tarmap_array(const llr_tarmap *t, const char *name, llr_dtype dt, int ndim, const int64_t *shape, const void **data,
                     const llr_tarmap_member **mem, llr_err *err);
/* 1 if the mapping of data[0..len) (within t) is mostly in 2 MiB pages:
 * the page cache holds the file in huge folios (as a file llr_tw_close
 * wrote is, or as a read through this range brings it in, which this
 * asks for), told by touching 8 of the range's 2 MiB pages, at least
 * half of which came in as one; 0 otherwise (small pages, a range under
 * 2 MiB, no /proc/self/smaps_rollup to tell). */
int llr_tarmap_huge(const llr_tarmap *t, const void *data, size_t len);
int llr_lex_read_csr(llr_tensor_reader *r, const char *name, int64_t rows, int64_t cols, llr_csr **out, llr_err *err);

/* lib/features/anyword.c: the any/ members of a lexicon (after logb and
 * the bg/ members), their meta keys (any.*). */
int llr_anyword_meta(const llr_anyword *a, llr_meta *m);
int llr_anyword_write(llr_tensor_writer *w, const llr_anyword *a, llr_err *err);
int llr_anyword_read(llr_tensor_reader *r, const llr_meta *m, int32_t F, llr_anyword **out, llr_err *err);

/* lib/lexicon/opensig.c: the signature masses (lm/open.c reads phi, logm,
 * exact and seed); the sig/ members of a lexicon (after the any/
 * members), their meta keys (sig.*). */
struct llr_opensig {
	llr_csr *phi; /* S x F */
	float *logm;  /* S: ln M(sig) */
	int64_t samples, drawn, known;
	uint64_t seed;
	int64_t digits;        /* the digit strings' groups summed exactly (opendigits.c), 0: drawn */
	int64_t shorts;        /* the short strings summed exactly (openshort.c) */
	double shorts_q;       /* their total q */
	double digits_q;       /* their total q */
	const char *drawn_why; /* static: why the digit strings were drawn */
	int64_t dict;          /* the dictionary's forms summed exactly (opendict.c) */
	double dict_q;         /* their total q */
	char dict_why[200];    /* why they were drawn, "" when they were not or without a dictionary */
	int64_t exact;         /* the pass's classes when every string is summed exactly (openexact.c), 0: drawn */
	int64_t listed;        /* and the strings listed apart */
	double unassigned;     /* the q the pass left unassigned */
};
int llr_opensig_meta(const llr_opensig *g, llr_meta *m);
int llr_opensig_write(llr_tensor_writer *w, const llr_opensig *g, llr_err *err);
int llr_opensig_read(llr_tensor_reader *r, const llr_meta *m, int32_t F, llr_opensig **out, llr_err *err);
/* The lexicon sources' words (anyword.c), NULL without. */
const llr_strmap *llr_lexicon_any_wordmap(const llr_lexicon *x);
/* llr_lexicon_any_row into a buffer that grows (opensig.c). */
typedef struct llr_rowbuf {
	int32_t *c;
	float *v;
	size_t cap;
} llr_rowbuf;
int llr_any_row_buf(const llr_lexicon *x, const char *w, size_t len, llr_rowbuf *r, size_t *n, llr_err *err);

/* lib/lexicon/opendigits.c: the strings of ASCII digits outside V' (and
 * outside known, if not NULL) as an exact stratum of the strings outside
 * the vocabulary: n groups (llr_spelling_digit_groups, lengths from
 * LLR_DIGIT_CAP on together), each with its row phi (n x F) and ln of
 * its total q in logq, Q their total q.  A group's row is that of one of
 * its strings; the stratum is used only when another string of every
 * group, with other leading digits (and, in the longest group, of
 * LLR_DIGIT_LONG digits), has the same row.  Else (and for a spelling
 * model of an order the groups do not take) phi is NULL and *why says
 * why.  Deterministic. */
#define LLR_DIGIT_CAP 16
#define LLR_DIGIT_LONG 40
typedef struct llr_stratum {
	int32_t n;
	llr_csr *phi;
	float *logq;
	double Q;
	llr_strmap *set; /* its strings, where a draw is checked against a list (opendict.c) */
} llr_stratum;
int llr_digit_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, llr_stratum *d,
                           const char **why, llr_err *err);
void llr_stratum_free(llr_stratum *d);
/* 1 when w[0..len) is a string of the stratum: not empty, all ASCII digits. */
int llr_digit_string(const char *w, size_t len);
/* lib/lexicon/openshort.c: the strings of 1 to LLR_SHORT_MAX characters the
 * spelling model has seen, outside V', known (if not NULL) and, if
 * skip_digits, the digit strings, each a row of d with its ln q: an
 * exact stratum that assumes nothing of the rows. */
#define LLR_SHORT_MAX 3
int llr_short_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int skip_digits,
                           llr_stratum *d, llr_err *err);
/* 1 when w[0..len) is 1 to LLR_SHORT_MAX characters the model has seen. */
int llr_short_string(const llr_spelling *sp, const char *w, size_t len);
/* 1 when w[0..len) is 1 to max_chars (0: any number of) characters the
 * spelling model has seen. */
int llr_seen_string(const llr_spelling *sp, const char *w, size_t len, int max_chars);
/* lib/lexicon/opensig.c's row makers, which the norm check (lm/open.c) shares:
 * n strings drawn from q outside V', known (if not NULL) and the strata
 * summed exactly (the digit strings if digits, the short ones, dict's
 * forms), their rows into b and the draws it took into *drawn; a
 * stratum's rows into b, each one's ln weight (ln lambda0 + logq) into lw. */
int llr_sig_draw_rows(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int digits,
                      const llr_stratum *dict, int64_t n, llr_rng *rng, llr_csr_builder *b, int64_t *drawn, llr_err *err);
int llr_stratum_rows(const llr_stratum *d, llr_csr_builder *b, float *lw, double lambda0, llr_err *err);

/* Emits the feature named by the string literal lit, of value 1, through
 * emit(..., ctx) (an llr_feature_fn), and returns its error from the
 * calling function (extract.c, orthostate.c). */
#define LLR_EMIT_LITERAL(emit, ctx, lit)                             \
	do {                                                         \
		int rc_ = (emit)(lit, sizeof(lit) - 1, 1.0f, (ctx)); \
		if (rc_ < 0)                                         \
			return rc_;                                  \
	} while (0)

/* lib/ngram/spelling.c: the n-gram id of the character cp (its UTF-8 at
 * b[0..k)) when the spelling model has seen it, else -1 (a space or TAB,
 * or not one of its character tokens).  The one rule of what is unseen:
 * llr_spelling_logp scores -1 as <unk> and the unseen floor, a draw of
 * <unk> gives only such characters, and the exact pass (openpass.c) and
 * the strata (openshort.c) follow it. */
int32_t llr_spelling_char(const llr_ngram *m, const char *b, size_t k, int32_t cp);

/* A string of a list, to a lister's callback: its negative return stops the listing. */
typedef int (*llr_form_fn)(const char *w, size_t len, void *ctx);

/* lib/features/anyword.c: the word forms the lexicon's hunspell
 * dictionary lists (llr_affix_forms), made on first use and kept; NULL
 * (err says why) without a dictionary or when the affix file cannot be
 * read.  In listed mode (llr_lexicon_set_hunspell_listed, meta
 * any.hunspell.scope=listed) a string outside V' is analysed by hunspell
 * only when it is one of them, so the strings with dictionary features
 * are a finite list; the words of V keep their analyses. */
const llr_strmap *llr_lexicon_hunspell_forms(const llr_lexicon *x, llr_err *err);
int llr_lexicon_set_hunspell_listed(llr_lexicon *x, int on, llr_err *err);
int llr_lexicon_hunspell_listed(const llr_lexicon *x);
/* Whether a string never seen fires TOP:@notTop (meta top not 0). */
int llr_lexicon_fires_nottop(const llr_lexicon *x);

/* lib/features/extract.c: every string where ORTH:year fires and a
 * superset of those where a Roman numeral's ORTH:ordinal fires (the
 * classes orthostate.c leaves to lists), each to fn; fn's first negative
 * return, else LLR_OK. */
int llr_extract_ortho_lists(llr_form_fn fn, void *ctx);

/* lib/lexicon/openpass.c: the spelling model's mass of every string summed
 * by the row its features give it when no list names it (TOP:@notTop,
 * OOV:@oov, ORTH: but year and Roman ordinals, SUF:), exactly, by one
 * forward pass; classes 0..C-1, each a distinct row.  A lexicon whose
 * features the pass cannot follow: LLR_OK, *out NULL and why (why_cap
 * bytes) says why.  Caller frees with llr_openpass_free. */
typedef struct llr_openpass llr_openpass;
int llr_openpass_new(const llr_lexicon *x, llr_openpass **out, char *why, size_t why_cap, llr_err *err);
/* The same over the strings of at most max_len characters (for tests). */
int llr_openpass_new_upto(const llr_lexicon *x, int max_len, llr_openpass **out, char *why, size_t why_cap, llr_err *err);
void llr_openpass_free(llr_openpass *p);
int32_t llr_openpass_classes(const llr_openpass *p);
/* The p_spell mass of class c's strings (no list taken out). */
double llr_openpass_mass(const llr_openpass *p, int32_t c);
/* The mass the pass left unassigned: still in flight when it stopped,
 * or below the smallest double it keeps. */
double llr_openpass_unassigned(const llr_openpass *p);
void llr_openpass_stats(const llr_openpass *p, int32_t *nodes, int32_t *ostates, int *steps);
/* Class c's row: its columns, sorted, into cols (cap); their number.
 * Every value is 1. */
size_t llr_openpass_row(const llr_openpass *p, int32_t c, int32_t *cols, size_t cap);
/* The class the pass put w[0..len) in, -1 if none (invalid UTF-8). */
int32_t llr_openpass_class_of(const llr_openpass *p, const char *w, size_t len);

/* lib/lexicon/openexact.c: the strings outside V' as rows with their exact
 * ln q: the rows of the known strings first (krow[i] the row of known
 * string i, -1 when in V'; known may be NULL), then those of the other
 * strings lists name (listed - known rows), then the pass's classes less
 * those strings (classes rows).  listed_set holds every string taken out
 * of the classes, V' included.  Features the pass cannot follow: LLR_OK,
 * phi NULL and why says why.  Free with llr_exact_rows_free. */
typedef struct llr_exact_rows {
	llr_csr *phi; /* R x F */
	float *logq;  /* R */
	int32_t known, listed, classes;
	double unassigned; /* the q the pass left unassigned */
	llr_strmap *listed_set;
	llr_openpass *pass; /* the pass, for llr_openpass_class_of and _row */
} llr_exact_rows;
int llr_exact_rows_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int32_t *krow,
                        llr_exact_rows *out, char *why, size_t why_cap, llr_err *err);
void llr_exact_rows_free(llr_exact_rows *r);

/* lib/features/affixforms.c: the word forms a hunspell dictionary (the
 * bytes of its .aff and .dic) spells out, each to fn, whose negative
 * return stops the listing: every stem, then the stems with the suffixes
 * and prefixes their flags allow.  A list to sum over, not a spelling
 * check: a form may come twice, and what hunspell accepts by compounding
 * never comes.  An affix file it cannot read is LLR_EFORMAT. */
int llr_affix_forms(const char *aff, size_t aff_len, const char *dic, size_t dic_len, llr_form_fn fn, void *ctx,
                    llr_err *err);

/* lib/lexicon/opendict.c: the word forms of the lexicon's hunspell dictionary
 * (llr_affix_forms) outside V', known (if not NULL), the short strings
 * and, if skip_digits, the digit strings, made of characters the spelling
 * model has seen: each a row of d with its ln q, d->set their strings.
 * No dictionary, or no form left: d stays empty.  An affix file the
 * listing cannot read: d stays empty and why (why_cap bytes; NULL and 0
 * when the reason is not wanted) says so. */
int llr_dict_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int skip_digits,
                          llr_stratum *d, char *why, size_t why_cap, llr_err *err);
/* 1 when w[0..len) is a string of d's list. */
int llr_dict_string(const llr_stratum *d, const char *w, size_t len);
/* The bytes of the lexicon's hunspell dictionary (anyword.c): 0 without. */
int llr_lexicon_any_hunspell_text(const llr_lexicon *x, const char **aff, size_t *aff_len, const char **dic,
                                  size_t *dic_len);

/* lib/ngram/trie.c: an n-gram's trie as members of a tensor archive, for
 * its own archive (prefix "": meta keys order, ngram.N) and inside a
 * lexicon (prefix "bg/": meta keys bg.order, bg.ngram.N; "spell/":
 * spell.order, spell.ngram.N): the meta keys take the member prefix with
 * its slashes as dots.  Reading checks the trie (messages name path). */
int llr_ngram_meta(const llr_ngram *m, llr_meta *meta, const char *prefix);
/* The same keys from the order and each order's count. */
int llr_ngram_meta_counts(llr_meta *meta, const char *prefix, int order, const int64_t *count);
/* The trie's own archive at path, its meta written: the members follow
 * (llr_ngram_put_members' names and order). */
llr_tensor_writer *llr_ngram_writer_open(const char *path, int order, const int64_t *count, llr_err *err);
int llr_ngram_put_members(llr_tensor_writer *w, const llr_ngram *m, const char *prefix, llr_err *err);
int llr_ngram_get_members(llr_tensor_reader *r, const llr_meta *meta, const char *prefix, const char *path, llr_ngram **out, llr_err *err);


/* The collective operations of a training run (llr_train_comm), for a
 * single process (c NULL or not on) the identity. */
static inline void llr_comm_reduce_step(const llr_train_comm *c, float *g, size_t n, llr_train_sums *s)
{
	if (c && c->on)
		c->reduce_step(c->ctx, g, n, s);
}
static inline double llr_comm_bcast_f64(const llr_train_comm *c, double v)
{
	return c && c->on ? c->bcast_f64(c->ctx, v) : v;
}
static inline int llr_comm_any(const llr_train_comm *c, int flag)
{
	return c && c->on ? c->any(c->ctx, flag) : flag;
}
static inline void llr_comm_sum_i64(const llr_train_comm *c, int64_t *v, size_t n)
{
	if (c && c->on)
		c->sum_i64(c->ctx, v, n);
}
static inline void llr_comm_bcast_i32(const llr_train_comm *c, int32_t *v, size_t n)
{
	if (c && c->on)
		c->bcast_i32(c->ctx, v, n);
}
static inline int llr_comm_same(const llr_train_comm *c, uint64_t h)
{
	return c && c->on ? c->same(c->ctx, h) : 1;
}
static inline int llr_comm_rank(const llr_train_comm *c)
{
	return c && c->on ? c->rank : 0;
}
/* The dropout masks' generator of a step (NULL without dropout): in one
 * process (a distributed run of one rank too) the training state's
 * shared; distributed over several ranks, *mine, seeded from a draw of
 * shared and the rank, so every rank makes its own masks while shared
 * (the checkpoint's) stays the same on all ranks.  Call it on every rank
 * at every step, even one without a share of the batch. */
static inline llr_rng *llr_comm_dropout_rng(const llr_train_comm *c, int dropout, llr_rng *shared, llr_rng *mine)
{
	if (!dropout)
		return NULL;
	if (!c || !c->on || c->size <= 1)
		return shared;
	llr_rng_seed(mine, llr_rng_u64(shared) ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(c->rank + 1)));
	return mine;
}

/* lib/nn/ffnet.c: the feed-forward language model's network (Bengio et
 * al. 2003; the fflm family, lib/family/fflm): the concatenated input
 * embeddings of the previous order - 1 words (<s> before the sentence),
 * `layers` tanh layers of `hidden` units, optional direct connections
 * from the embeddings to the output, then the dense adaptor and the
 * log-linear output of nn.h (softmax: phi the identity, b uniform).
 * Parameters are one flat array in this order, gradients alike:
 *   embed F_in x E, bos E, hiddenL/w Din x H, hiddenL/b H (Din = (n-1) E
 *   for L = 0, else H), direct/w F x (n-1) E (direct only), out/w F x Htop
 *   (Htop = H, or (n-1) E without hidden layers), out/b F.
 * Positions are independent: ctx is N x (order - 1) input ids (rows of
 * psi, or LLR_BOS_ID), oldest first; target N ids in [0, V) or -1 (not
 * predicted).  Not safe from two threads at once. */
/* phi, psi (NULL: phi) and logb as llr_net_new's (borrowed; ignored for a
 * softmax).  NULL with err set on a bad configuration. */
llr_ffnet *llr_ffnet_new(const llr_ffnet_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err);
/* As llr_net_new_empty and llr_net_params_grow, for a loader. */
llr_ffnet *llr_ffnet_new_empty(const llr_ffnet_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err);
float *llr_ffnet_params_grow(llr_ffnet *f, size_t n, llr_err *err);
void llr_ffnet_free(llr_ffnet *f);
float *llr_ffnet_grads(llr_ffnet *f, size_t *n);
size_t llr_ffnet_n_tensors(const llr_ffnet *f);
void llr_ffnet_tensor_info(const llr_ffnet *f, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset);
/* Weights uniform(-r, r), r = 1/sqrt(fan-in) (the embeddings N(0, 1)
 * scaled by 0.1), biases 0. */
void llr_ffnet_init(llr_ffnet *f, llr_rng *rng);
/* The loss of N positions (nll summed, *ntok the predicted ones) and its
 * gradient added into the gradient array; LLR_ENAN when not finite.  With
 * rng and the configuration's dropout, the masks are drawn from rng (the
 * loss is then the masked network's); rng NULL: no dropout. */
int llr_ffnet_train_step(llr_ffnet *f, size_t N, const int32_t *ctx, const int32_t *target, llr_rng *rng, double *nll,
                         int64_t *ntok, llr_err *err);
/* log p(target) into logp[N] (0 where not predicted); norm_err (may be
 * NULL) the signed sum p - 1 furthest from 0. */
int llr_ffnet_score(llr_ffnet *f, size_t N, const int32_t *ctx, const int32_t *target, float *logp, double *norm_err,
                    llr_err *err);
/* The whole distribution: logp_all N x V. */
int llr_ffnet_dist(llr_ffnet *f, size_t N, const int32_t *ctx, float *logp_all, llr_err *err);

/* lib/nn/maxent.c: the log-linear (maximum-entropy) language model's
 * scorer (the loglm family, lib/family/loglm): p(w | context) =
 * softmax(b + sum over the context's active features f of theta's slice
 * [o_f, o_f + V) mod H), each feature hashed to its offset o_f in one
 * ring theta of H floats (the gradient's rows: chunks of LLR_ME_CHUNK).  Features of
 * position pos of seq (seq[0..pos) the sentence so far, ids of the
 * vocabulary; <s> before it): the n-grams of the previous 1 .. order - 1
 * words, the word at each distance 2 .. skip alone, with bag every
 * earlier word.  With phi (the log-linear output over word features)
 * each feature also has a slice of K weights of a second ring alpha of H
 * floats, their sum a, and log p(w) gains log b(w) + a . phi(w).
 * Parameters one flat array, bias V, theta H, then alpha H with phi;
 * gradients alike.  Not safe from two threads at once. */
#define LLR_ME_CHUNK 64
#define LLR_ME_MAX_ORDER 16
typedef struct llr_maxent_config {
	int32_t vocab, unk; /* unk: <unk>'s id or -1 */
	int order, skip, bag;
	uint64_t hash_size; /* a power of two >= LLR_ME_CHUNK */
	/* NULL: the softmax output; else the log-linear output over phi
	 * (V x K) with the background logb (V, finite or -inf), both
	 * borrowed: they must outlive the scorer */
	const llr_csr *phi;
	const float *logb;
} llr_maxent_config;
typedef struct llr_maxent llr_maxent;
typedef struct llr_maxent_pos {
	const int32_t *seq; /* the sentence's ids (outside [0, V): <unk>, else <s>) */
	int64_t pos;        /* the predicted position */
	int32_t target;     /* in [0, V), or -1: not predicted */
} llr_maxent_pos;
/* NULL with err on a bad configuration; weights zero (the uniform
 * distribution). */
llr_maxent *llr_maxent_new(const llr_maxent_config *c, llr_err *err);
/* As llr_net_new_empty and llr_net_params_grow, for a loader. */
llr_maxent *llr_maxent_new_empty(const llr_maxent_config *c, llr_err *err);
float *llr_maxent_params_grow(llr_maxent *f, size_t n, llr_err *err);
void llr_maxent_free(llr_maxent *f);
const llr_maxent_config *llr_maxent_cfg(const llr_maxent *f);
float *llr_maxent_params(llr_maxent *f, size_t *n);
float *llr_maxent_grads(llr_maxent *f, size_t *n);
void llr_maxent_init(llr_maxent *f);
/* The features of a position: at most llr_maxent_nfeat(f, pos) offsets
 * into off; their count. */
size_t llr_maxent_nfeat(const llr_maxent *f, int64_t pos);
size_t llr_maxent_features(const llr_maxent *f, const int32_t *seq, int64_t pos, uint32_t *off);
/* The loss of N positions (nll summed, *ntok the predicted ones), its
 * gradient added into the gradient array; LLR_ENAN when not finite. */
int llr_maxent_train_step(llr_maxent *f, size_t N, const llr_maxent_pos *p, double *nll, int64_t *ntok, llr_err *err);
/* The chunks of theta (and alpha after it) the train steps since the
 * last call touched: one block (ascending rows of LLR_ME_CHUNK floats, at
 * offset V, over both rings); the gradient is zero outside them and the
 * bias.  Owned by f, valid until the next call. */
const llr_rows *llr_maxent_rows(llr_maxent *f);
/* log p(target) into logp[N] (0 where not predicted); norm_err (may be
 * NULL) the signed sum p - 1 furthest from 0. */
int llr_maxent_score(llr_maxent *f, size_t N, const llr_maxent_pos *p, float *logp, double *norm_err, llr_err *err);
/* The whole distribution: logp_all N x V. */
int llr_maxent_dist(llr_maxent *f, size_t N, const llr_maxent_pos *p, float *logp_all, llr_err *err);

/* lib/fsa/: an automaton over the tokens of a vocabulary (issue 51):
 * the deterministic form of a background b_fsa(q, x) that is 0 outside
 * the tokens allowed in state q and the automaton's weight inside, and
 * of gen --fsa and --regex.  States are 0 .. llr_fsa_states - 1, every
 * one of them on a path to a final state (trimmed); tokens are ids of
 * the vocabulary it was made for (borrowed: it must outlive the
 * automaton).  </s> and <s> are never arc labels: a sentence ends in a
 * final state, with its final weight.  A GBNF grammar is the same
 * queries over the states of its pushdown recogniser (gbnffsa.c): made
 * when first reached, so llr_fsa_states counts those made so far, every
 * arc weighs 1, and it is trimmed against the vocabulary's tokens
 * (gbnf.h); its queries are thread-safe.
 *
 * llr_fsa_read reads OpenFst's text format (fstcompile's input) over
 * tokens; llr_fsa_regex compiles a regular expression over tokens
 * (gen(1), "Constrained generation", has both formats).  Errors:
 * LLR_EFORMAT with "name:line: reason", or naming the tokens the
 * vocabulary lacks, or an automaton that accepts nothing; LLR_EIO;
 * LLR_ENOMEM.  The caller frees with llr_fsa_free. */
typedef struct llr_fsa llr_fsa;
llr_fsa *llr_fsa_read(const char *path, const llr_strmap *vocab, llr_err *err);
llr_fsa *llr_fsa_regex(const char *pattern, const llr_strmap *vocab, llr_err *err);
void llr_fsa_free(llr_fsa *a);
/* A GBNF grammar over the tokens of vocab, as gen(1)'s "Grammars" says,
 * from the file at path ("-": stdin) or from text[0..len) (name: for
 * messages).  Errors as llr_gbnf_parse's, LLR_ERANGE for a grammar too
 * ambiguous at its start, LLR_EFORMAT for one that accepts no
 * sentence of the vocabulary's tokens.
 * llr_fsa_grammar_source: its text (*len bytes), NULL for an automaton
 * that is not a grammar. */
llr_fsa *llr_fsa_grammar(const char *path, const llr_strmap *vocab, llr_err *err);
/* The constraint of gen and score: exactly one of the automaton at fsa,
 * the regular expression regex and the grammar at grammar (the others
 * NULL), over vocab, read as llr_fsa_read, llr_fsa_regex or
 * llr_fsa_grammar reads it (their errors), telling its notices to note
 * (NULL: none) as llr_fsa_on_notice. */
llr_fsa *llr_fsa_constraint(const char *fsa, const char *regex, const char *grammar, const llr_strmap *vocab, const llr_notice *note,
                            llr_err *err);
/* From now on a tells its notices to n (copied; NULL: none).  A grammar
 * tells once that its trimming against the vocabulary ran past its
 * budget (lib/fsa/gbnflive.c), at once when it has already; an
 * intersection made later (llr_fsa_meet) takes the sink of a factor
 * that has one and tells the same of its own trimming. */
void llr_fsa_on_notice(llr_fsa *a, const llr_notice *n);
llr_fsa *llr_fsa_grammar_text(const char *text, size_t len, const char *name, const llr_strmap *vocab, llr_err *err);
const char *llr_fsa_grammar_source(const llr_fsa *a, size_t *len);
/* The intersection of a and b (meet.c): the sentences both accept,
 * weighted by b alone (a is read as the support of its language: gen's
 * constraint on a model trained under a, whose distribution holds a's
 * weights already).  Its states are pairs of theirs, made when reached,
 * as a grammar's are; its distances to a final state come from a
 * search over pairs, exact when neither is a grammar (with a grammar
 * it looks at most 16384 pairs, and what it does not find is taken as
 * absent).  The intersection is trimmed: a token is allowed only where
 * some sentence of both continues it (over two automata every pair is
 * made here; with a grammar, lib/fsa/gbnflive.c decides it for each
 * pair reached, within its budget of work, past which the pairs not
 * decided are allowed).  Its queries are thread-safe.  a and b are borrowed
 * (they must outlive it), over one vocabulary, not intersections, and
 * not both grammars (LLR_EINVAL: undecidable).
 * Errors: LLR_EFORMAT when they share no sentence (or, with a grammar,
 * when the search for the shortest finds none), LLR_EINVAL for two
 * vocabularies or two grammars, a
 * grammar's errors, LLR_ENOMEM.  The caller frees with llr_fsa_free.
 * llr_fsa_meet_weighted: the same weighted by both, each arc's and
 * final state's ln weight a's plus b's (the background of a model
 * scored under b and the automaton a it was trained under, in place of
 * a: score --fsa, --regex, --grammar).
 * llr_fsa_meet_support: a of an intersection, NULL for another kind. */
llr_fsa *llr_fsa_meet(const llr_fsa *a, const llr_fsa *b, llr_err *err);
llr_fsa *llr_fsa_meet_weighted(const llr_fsa *a, const llr_fsa *b, llr_err *err);
const llr_fsa *llr_fsa_meet_support(const llr_fsa *d);
/* Make state q's allowed set ready: after LLR_OK the queries on q do
 * not fail.  Always LLR_OK for an automaton; a grammar's state is
 * expanded here, which may fail (LLR_ENOMEM, LLR_ERANGE: too ambiguous),
 * and a query on a state that failed allows nothing. */
int llr_fsa_ready(const llr_fsa *a, int32_t q, llr_err *err);
int32_t llr_fsa_states(const llr_fsa *a);
int32_t llr_fsa_start(const llr_fsa *a);
/* The id of </s> in its vocabulary (-1: none). */
int32_t llr_fsa_eos(const llr_fsa *a);
/* The state after token x in state q, -1 when x is not allowed there;
 * *logw (may be NULL) gets ln of the arc's factor of b. */
int32_t llr_fsa_next(const llr_fsa *a, int32_t q, int32_t x, float *logw);
/* The allowed set of state q, for a sparse pass over it: q's arcs,
 * sorted by label (*lab, *dst, *logw; a dst of -1 rejects its token),
 * their count returned; and llr_fsa_default, the state every other
 * producible token leads to (-1: none, and the arcs are the whole set),
 * with ln of its factor in *logw (may be NULL). */
int32_t llr_fsa_arcs(const llr_fsa *a, int32_t q, const int32_t **lab, const int32_t **dst, const float **logw);
int32_t llr_fsa_default(const llr_fsa *a, int32_t q, float *logw);
/* ln of q's final weight, -inf when q is not final. */
float llr_fsa_final(const llr_fsa *a, int32_t q);
/* The fewest tokens that lead from q to a final state (0: q is final);
 * a grammar looks no further than 4096 (INT32_MAX beyond, or on an
 * error).  llr_fsa_dist_within: the same within limit, more than limit
 * when none was found there, a grammar's errors (LLR_ERANGE: too
 * ambiguous; LLR_ENOMEM) returned with err set. */
int32_t llr_fsa_dist(const llr_fsa *a, int32_t q);
int32_t llr_fsa_dist_within(const llr_fsa *a, int32_t q, int32_t limit, llr_err *err);
/* Run the automaton from its start over ids[0..n): the state reached,
 * or -1 - k when token k is the first it rejects. */
int32_t llr_fsa_run(const llr_fsa *a, const int32_t *ids, size_t n);
/* An automaton background's members in a tensor archive (fsaio.c): its
 * meta keys (fsa.*) into m, its fsa/ members written; read back over
 * vocab (the archive's vocabulary), checked (LLR_EFORMAT naming the
 * member), the caller freeing it with llr_fsa_free. */
int llr_fsa_meta(const llr_fsa *a, llr_meta *m);
/* Does meta m announce an automaton's members (fsa.*)? */
int llr_fsa_in_meta(const llr_meta *m);
/* LLR_OK when a accepts the sentence ids[0..n) (no </s>), else
 * LLR_EFORMAT saying why: the first token it rejects and the prefix
 * before it, or a prefix that may not end (reject.c; the caller adds
 * where the sentence is); or the error of llr_fsa_ready on a state met
 * (LLR_ERANGE, LLR_ENOMEM). */
int llr_fsa_check(const llr_fsa *a, const llr_strmap *vocab, const int32_t *ids, size_t n, llr_err *err);
/* Make a (borrowed, NULL: none) a factor of the background of a
 * log-linear net (lib/nn/net.c): each position's automaton state is
 * that after the stream's inputs back to its <s> (a stream that does not
 * start with <s>, or a rejected prefix, allows nothing), or after the
 * inputs fed to a state since <s> (llr_net_step).  An input that is not
 * a vocabulary word (an unseen word's row, id >= V) is read as unk (the
 * vocabulary's <unk>; -1: none, then rejected), as featurize reads a
 * corpus word outside the vocabulary.  LLR_EINVAL with another output
 * or an open vocabulary. */
int llr_net_set_fsa_bg(llr_net *net, const llr_fsa *a, int32_t unk, llr_err *err);
int llr_fsa_write(llr_tensor_writer *w, const llr_fsa *a, llr_err *err);
llr_fsa *llr_fsa_get_members(llr_tensor_reader *r, const llr_meta *m, const llr_strmap *vocab, llr_err *err);

#endif
