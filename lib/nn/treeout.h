/*
 * treeout.h - private interface of the factored output layers (treeout.c):
 * the frequency-binned two-level class softmax (Goodman 2001; Mikolov et
 * al. 2011) and the learned tree softmax (Jernite, Choromanska & Sontag
 * 2017), which share one kernel; assembled by net.c; not API.
 *
 * The tree.  Words are the leaves; the internal nodes form a complete
 * M-ary tree of depth D - 1 (D >= 2 choices per word): depth 0 is the
 * root, the M^(D-1) nodes of depth D - 1 are the groups, each holding
 * its words (at most cap of them; cap 0 = no bound).  A word's group g
 * is its whole path: written in base M, g's digits are the child taken
 * at depths 0 .. D-2.  Internal node n of depth d is numbered
 * (M^d - 1)/(M - 1) + (its prefix of d digits); its child j has the
 * parameter row n*M + j of Wn (nodes*M x H) and bn.  A word x has its own
 * row of Ww (V x H) and bw, used against the other words of its group:
 *
 *   log p(x | h) = sum_{d < D-1} log softmax_j(Wn[n_d M + j] . h + bn)[j_d]
 *                + log softmax_{w in group(x)}(Ww[w] . h + bw[w])[x]
 *
 * The softmax at an internal node runs over its children that have words
 * below them, so the probabilities of all V words sum to 1 exactly (up to
 * float rounding): the tree gives normalised probabilities, not an
 * approximation of another model's.  The class softmax is D = 2 with M =
 * C classes, frequency-binned, unbounded groups and no learning.
 * Cost per predicted word: O(H (D M + |group|)) instead of O(H V).
 */
#ifndef LLR_TREEOUT_H
#define LLR_TREEOUT_H

#include "nn.h"

typedef struct llr_tree {
	int32_t V;
	int depth, arity;      /* D, M */
	int32_t nodes, groups; /* internal nodes above the groups; M^(D-1) */
	int32_t cap;           /* words per group at most, 0 = unbounded */
	int32_t *group;        /* V: the group of every word */
	/* derived by llr_tree_index */
	int32_t *gstart, *gword; /* words of group g: gword[gstart[g] .. gstart[g+1]), ascending */
	int32_t *gpos;           /* V: index of each word within its group */
	int32_t *below;          /* nodes*M: words under each child */
	int32_t maxk;            /* the largest group */
} llr_tree;

/* A tree for V words (every word in group 0 until set): D >= 2, M >= 2,
 * M^(D-1) * cap >= V when cap > 0.  LLR_EINVAL or LLR_ENOMEM. */
int llr_tree_init(llr_tree *t, int32_t V, int depth, int arity, int32_t cap, llr_err *err);
void llr_tree_free(llr_tree *t);
/* Check t->group (a group in range for every word, at most cap words a
 * group) and build the derived arrays.  LLR_EFORMAT naming the word or
 * group at fault. */
int llr_tree_index(llr_tree *t, llr_err *err);

/* Group of every word for the class softmax (Mikolov et al. 2011,
 * frequency binning): words by count descending (ties: lower id first),
 * each class taking words until the cumulative unigram mass passes
 * (c+1)/C.  count may hold zeros (those words share the last classes). */
void llr_tree_freq_classes(int32_t V, const int64_t *count, int C, int32_t *group);
/* The tree's initial groups: words by count descending filled into
 * groups 0, 1, ... cap at a time. */
void llr_tree_freq_blocks(int32_t V, const int64_t *count, int32_t cap, int32_t *group);

/* Parameters and (when training) their gradients, which are ADDED to. */
typedef struct llr_tree_io {
	const llr_tree *t;
	int H;
	const float *Wn, *bn, *Ww, *bw;
	float *dWn, *dbn, *dWw, *dbw;
} llr_tree_io;

/* Scratch, grown on demand; zero-initialise. */
typedef struct llr_tree_ws {
	int32_t *key, *idx, *cnt;
	float *hg, *dhg, *L, *wg;
	double *lp;
	size_t n_cap, k_cap, h_cap, dh_cap, l_cap, w_cap;
} llr_tree_ws;
void llr_tree_ws_free(llr_tree_ws *ws);

/* N positions of Hs (N x H) with targets target[n] in [0, V) or -1
 * (skipped).  Optional outputs: *nll (sum of -log p(target)), logp_t
 * (N: log p(target), 0 where skipped), dH (N x H, overwritten: dLoss/dHs;
 * with it the parameter gradients accumulate).  LLR_ENAN if a loss is
 * not finite, LLR_ENOMEM. */
int llr_tree_run(const llr_tree_io *io, llr_tree_ws *ws, int N, const float *Hs, const int32_t *target, double *nll, float *logp_t, float *dH);
/* logp_all (N x V): log p(x | Hs[n]) of every word.  LLR_ENOMEM. */
int llr_tree_all(const llr_tree_io *io, llr_tree_ws *ws, int N, const float *Hs, float *logp_all);

/* Learn the assignment of words to groups (treeout.c describes the
 * algorithm) from S samples of the representation, Hs (S x H), and the
 * words they preceded, y[S]; writes t->group and re-indexes.  Needs
 * cap > 0.  *moved: how many words changed group.  LLR_ENOMEM. */
int llr_tree_learn(llr_tree *t, const float *Wn, const float *bn, int H, int S, const float *Hs, const int32_t *y, int32_t *moved, llr_err *err);

#endif
