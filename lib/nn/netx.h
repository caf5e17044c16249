/*
 * netx.h - private interface of the net's character-aware input
 * (charin.c) and factored outputs (nettree.c), the parts of the LSTM
 * language model that net.c assembles around its LSTM stack; not API.
 * Parameters are offsets into the net's flat arrays (net.c's layout).
 */
#ifndef LLR_NETX_H
#define LLR_NETX_H

#include "charcnn.h"
#include "treeout.h"

#define LLR_MAX_HIGHWAY 8

/* ---------------------------------------------------------- charin.c */

/* The character-aware word vectors of a batch: the distinct words of
 * its positions go through the convolution and highway layers once each
 * (U of them), and every position takes its word's vector. */
typedef struct llr_charin {
	int D, hw;
	llr_conv conv; /* shapes; pointers set from the net's arrays per call */
	size_t o_emb, o_K[LLR_CNN_MAX_WIDTHS], o_b[LLR_CNN_MAX_WIDTHS];
	size_t o_hw[LLR_MAX_HIGHWAY], o_hb[LLR_MAX_HIGHWAY];
	llr_conv_ws ws;
	/* the batch */
	int U;
	int32_t *wid;  /* U: spelling index of each distinct word */
	int32_t *uof;  /* N: its distinct word, -1 for padding */
	int32_t *slot; /* spelling index -> distinct word, -1 */
	size_t n_cap, u_cap, s_cap;
	float *Z;  /* (hw + 1) x U x D: conv output, then each highway's */
	float *gt; /* hw x U x 2D */
	size_t z_cap, g_cap;
} llr_charin;

/* LLR_EINVAL unless c's character-aware input is well-formed. */
int llr_charin_check(const llr_net_config *c, llr_err *err);
void llr_charin_free(llr_charin *ci);
/* Spelling table of a llr_words (entry 0 is <s>, entry id + 1 the word
 * of input id id) and its size. */
const llr_spell *llr_words_spell(const llr_words *w);
/* X[n][0 .. D) (row stride ldx) = (add: +=) the character vector of
 * input in[n] (LLR_BOS_ID: <s>; LLR_PAD_IN: zeros, or left alone when
 * adding).  LLR_ENOMEM. */
int llr_charin_forward(llr_charin *ci, const float *P, const llr_words *w, const int32_t *in, size_t N, float *X, int ldx, int add);
/* From dX (the same columns) the gradients of the character parameters,
 * added into G. */
int llr_charin_backward(llr_charin *ci, const float *P, float *G, const llr_words *w, size_t N, const float *dX, int ldx);

/* --------------------------------------------------------- nettree.c */

#define LLR_TREE_SAMPLES 4096

typedef struct llr_treeout {
	llr_tree t;
	llr_tree_ws ws;
	int H;
	size_t o_wn, o_bn, o_ww, o_bw;
	/* reservoir of (h, y) samples for llr_tree_learn */
	float *rh;
	int32_t *ry;
	int filled;
	int64_t seen;
	llr_rng rng;
	float *all; /* LLR_LL_CHUNK x V for whole distributions */
} llr_treeout;

/* Fill in the default shape (cfg tree_* fields) for V words and build
 * the tree with every word in frequency blocks (ids in frequency order). */
int llr_treeout_init(llr_treeout *o, llr_net_config *cf, llr_err *err);
void llr_treeout_free(llr_treeout *o);
/* Groups from word counts (NULL: ids in frequency order): classes by
 * frequency binning, a tree's leaves filled in frequency order. */
int llr_treeout_counts(llr_treeout *o, const int64_t *count, llr_err *err);
/* Groups given (checked; unchanged on LLR_EFORMAT). */
int llr_treeout_set_groups(llr_treeout *o, const int32_t *group, llr_err *err);
/* Re-learn the tree from the reservoir, then empty it. */
int llr_treeout_learn(llr_treeout *o, const float *P, int32_t *moved, llr_err *err);
llr_tree_io llr_treeout_io(const llr_treeout *o, const float *P, float *G);
/* The output layer over N positions of Hs: the loss (nll, logp_t; dH
 * and gradients when dH is set), norm_err, logp_all (N x V), as
 * net.c's forward_out.  When training a tree, samples go to the
 * reservoir. */
int llr_treeout_forward(llr_treeout *o, const float *P, float *G, const float *Hs, size_t N, const int32_t *tg, double *nll, float *logp_t, double *norm_err, float *logp_all, float *dH);

/* ----------------------------------------------------------- netvc.c */

/* The net's variable-computation layer (one layer, issue 52): vc.c's
 * layer over the net's flat arrays, its saved values (m, k, e) and
 * scratch, the penalty on m_t and the multiply-adds counted. */
typedef struct llr_netvc {
	int G;     /* LLR_VC_RNN or LLR_VC_GRU */
	int sched; /* a scheduler (u, ub): 0 for the dense GRU and RNN */
	int Din, H;
	size_t o_wx, o_wh, o_bx, o_bh, o_u, o_ub;
	float target, weight; /* the L1 penalty on m_t (weight 0: none) */
	float *m, *dm, *e;    /* N, N, N x H */
	int *k, *order;       /* N, 2 B */
	float *work;          /* llr_vc_work_size */
	size_t capN;
	int capB;
	uint64_t macs, pos; /* forward multiply-adds, over pos positions */
	uint64_t pad;       /* forward multiply-adds done past the mask (vc.c) */
} llr_netvc;

/* The layer of cell (LLR_CELL_VCRNN, VCGRU, GRU or RNN) over Din inputs
 * and H dimensions, its tensors at the offsets the net sets after. */
void llr_netvc_init(llr_netvc *v, int cell, int Din, int H);
void llr_netvc_free(llr_netvc *v);
/* Room for N positions of B streams.  LLR_ENOMEM. */
int llr_netvc_ensure(llr_netvc *v, size_t N, int B);
/* Forward over T steps of B streams (rows: packed, as llr_vc_io's; h0
 * B x H or NULL) from X (N x Din) into h (N x H); act (N x G H), cn and
 * g (N x H) the cell's saved values. */
void llr_netvc_forward(llr_netvc *v, const float *P, float lambda, int T, int B, const int *rows, const float *h0, const float *X,
                       float *act, float *cn, float *g, float *h);
/* Its backward (T x B, not packed, after a forward of the same batch):
 * dh (N x H) dLoss/dh in, scratch after; the penalty's dLoss/dm at the
 * positions whose target tg is not -1; dX (N x Din) out; gradients added
 * into G. */
void llr_netvc_backward(llr_netvc *v, const float *P, float *G, float lambda, int T, int B, const int32_t *tg, const float *X,
                        float *act, float *cn, float *g, float *h, float *dh, float *dX);

#endif
