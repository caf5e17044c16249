/*
 * vc.c - the variable-computation recurrent layers (VCRNN, VCGRU; Jernite,
 * thesis section 2.4, and Jernite et al. 2017): the scheduler, the mask and
 * the loop over steps and streams, forward and back-propagation through
 * time.  The cells' own rows are vcrnn.c and vcgru.c.
 *
 * At step t, for a stream with input x_t (Din) and state h_{t-1} (D = H):
 *   m_t    = sigmoid(u . [x_t; h_{t-1}] + b)                 (the scheduler)
 *   e_t,i  = thr_eps(sigmoid(lambda (m_t D - i))),  i = 1..D  (the mask)
 *   thr_eps(s) = 0 if s < eps, 1 if s > 1 - eps, s otherwise
 *   h_t    = e_t * g_t + (1 - e_t) * h_{t-1}
 * with g_t the cell's output (vcrnn.c: tanh(x_t wx + h_{t-1} wh + bx);
 * vcgru.c: a GRU step).  The mask is non-increasing in i, so the
 * dimensions it keeps (e_t,i > 0) are the leading k_t, about m_t D +
 * ln((1 - eps) / eps) / lambda of them; the others are copied from
 * h_{t-1} bit for bit.  Sparse compute: g_t is computed on the leading
 * k_t dimensions only.  The rows of a step are put in order of k
 * descending and gathered, so the rows that keep a dimension are a
 * prefix: each product is one GEMM per distinct k on a leading block of
 * the weights (the staircase, stair()), forward and backward, and
 * every weight column a step needs is read once for all its rows;
 * pad_stairs() merges the stairs that are too narrow to pay for a GEMM.
 * io->macs counts the multiply-adds the masks keep (the scheduler's
 * included), io->pad those the merged stairs do past them.
 * With no scheduler (io->u NULL) m_t = 1 and e_t = 1 at every dimension:
 * h_t = g_t, the dense GRU or Elman RNN, on one GEMM per product.
 * dLoss/dm_t from above (the L1 penalty on m_t) comes in through dm.
 * Not here: the penalty itself, the schedule of lambda, embeddings.
 */
#include <string.h>

#include "nn.h"

static float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* The mask of one row: e[0..k) written, k returned. */
static int vc_mask(const llr_vc_io *io, float m, float *e)
{
	int H = io->H;
	float lam = io->lambda, eps = io->eps, mD = m * (float)H;
	for (int j = 0; j < H; j++) {
		/* sigmoid(z) >= sigmoid(10) > 1 - eps for z > 10 when eps >=
		 * 1e-4: e = 1 without the exponential (its slow path underflows
		 * further on) */
		float z = lam * (mD - (float)(j + 1));
		if (z > 10.0f && eps >= 1e-4f) {
			e[j] = 1.0f;
			continue;
		}
		float s = sigm(z);
		if (s < eps || s <= 0.0f)
			return j;
		e[j] = s > 1.0f - eps ? 1.0f : s;
	}
	return H;
}

/* u . [x; hp] + b, hp NULL: zeros. */
static float sched_in(const llr_vc_io *io, const float *x, const float *hp)
{
	double s = io->ub[0];
	for (int i = 0; i < io->Din; i++)
		s += (double)io->u[i] * x[i];
	for (int j = 0; hp && j < io->H; j++)
		s += (double)io->u[io->Din + j] * hp[j];
	return (float)s;
}

size_t llr_vc_work_size(const llr_vc_io *io)
{
	return (size_t)io->B * (2 * (size_t)io->Din + 3 * (size_t)io->H + 2 * (size_t)io->cell * io->H);
}

/* Step t: its R rows at positions base.., the previous step's at
 * pbase.. (packed when io->rows is set). */
typedef struct vc_pos {
	int t, R;
	size_t base, pbase;
} vc_pos;

/* The state row before step p->t of stream b: NULL for zeros. */
static const float *prev_row(const llr_vc_io *io, const vc_pos *p, int b)
{
	if (p->t)
		return io->h + (p->pbase + (size_t)b) * io->H;
	return io->h0 ? io->h0 + (size_t)b * io->H : NULL;
}

/* The staircase's stairs, merged (kp): a stair is a GEMM per product
 * (two forward, four backward), OpenBLAS does a narrow one at a fraction
 * of its speed and packs the stair's rows of the input again for each;
 * so a run of rows whose k is a little below that of the run above is
 * computed up to the run above's (kp[r] >= k[r], non-increasing, one
 * stair per distinct kp).  A run of c rows joins when the multiply-adds
 * it pads, c G (K - k) (Din + H), cost less than the stair it saves:
 * VC_CALL per product and VC_ROW per input element of the r rows above
 * it (set by timing training on the Brown characters, bench/vc-speed).
 * The padded columns hold products the cell never reads forward and
 * zero gradients backward (step_backward), so only the GEMMs' rounding
 * can change; io->pad counts their multiply-adds, apart from io->macs. */
#define VC_CALL 16384.0
#define VC_ROW 8.0
static void pad_stairs(const llr_vc_io *io, int R, const int *k, int *kp)
{
	double n = (double)io->Din + io->H, G = io->cell;
	int top = 0;
	for (int r = 0; r < R;) {
		int e = r;
		while (e < R && k[e] == k[r])
			e++;
		if (!r || (double)(e - r) * G * (k[top] - k[r]) * n > 2.0 * VC_CALL + VC_ROW * n * r)
			top = r;
		for (int q = r; q < e; q++)
			kp[q] = k[top];
		r = e;
	}
}

/* Step t's rows by k descending (io->k set), gathered into the step's
 * blocks of io->work; dg (B x H) after them. */
static llr_vc_step step_of(llr_vc_io *io, const vc_pos *p, const float *X, float **dg)
{
	int B = p->R, Din = io->Din, H = io->H, G = io->cell;
	int *row = io->order, *k = io->order + io->B;
	size_t base = p->base;
	for (int b = 0; b < B; b++) {
		int r = b, kb = io->k[base + (size_t)b];
		for (; r > 0 && k[r - 1] < kb; r--)
			row[r] = row[r - 1], k[r] = k[r - 1];
		row[r] = (int)base + b, k[r] = kb;
	}
	int *kp = k + io->B;
	pad_stairs(io, B, k, kp);
	float *w = io->work;
	llr_vc_step s = {.R = B, .row = row, .k = k, .kp = kp};
	float *x = w, *hp = x + (size_t)B * Din;
	s.a = hp + (size_t)B * H;
	s.c = s.a + (size_t)B * G * H;
	s.dx = s.c + (size_t)B * G * H;
	s.dhp = s.dx + (size_t)B * Din;
	*dg = s.dhp + (size_t)B * H;
	int has_h = prev_row(io, p, 0) != NULL;
	for (int r = 0; r < B; r++) {
		int b = row[r] - (int)base;
		memcpy(x + (size_t)r * Din, X + (size_t)row[r] * Din, (size_t)Din * sizeof *x);
		if (has_h)
			memcpy(hp + (size_t)r * H, prev_row(io, p, b), (size_t)H * sizeof *hp);
	}
	s.x = x;
	s.hp = has_h ? hp : NULL;
	return s;
}

/* The products on the staircase: out (R x G H) = in (R x n) w[:, 0..G
 * k[r]) row by row, one GEMM per distinct k (rows 0..r share the columns
 * between G k[r+1] and G k[r]; w has G H columns); and their backward, dw
 * += in^T dout and din += dout w^T (din unless NULL) on the same blocks. */
static void stair(const llr_vc_io *io, const llr_vc_step *s, int n, const float *in, const float *w, float *out)
{
	int G = io->cell, GH = G * io->H;
	for (int r = s->R - 1; r >= 0; r--) {
		int c0 = r + 1 < s->R ? G * s->kp[r + 1] : 0, c1 = G * s->kp[r];
		if (c1 > c0)
			llr_gemm(0, 0, r + 1, c1 - c0, n, 1.0f, in, n, w + c0, GH, 0.0f, out + c0, GH);
	}
}

static void stair_backward(const llr_vc_io *io, const llr_vc_step *s, int n, const float *in, const float *w, const float *dout, float *dw, float *din)
{
	int G = io->cell, GH = G * io->H;
	for (int r = s->R - 1; r >= 0; r--) {
		int c0 = r + 1 < s->R ? G * s->kp[r + 1] : 0, c1 = G * s->kp[r];
		if (c1 <= c0)
			continue;
		llr_gemm(1, 0, n, c1 - c0, r + 1, 1.0f, in, n, dout + c0, GH, 1.0f, dw + c0, GH);
		if (din)
			llr_gemm(0, 1, r + 1, n, c1 - c0, 1.0f, dout + c0, GH, w + c0, GH, 1.0f, din, n);
	}
}

static void step_forward(llr_vc_io *io, const vc_pos *p, const float *X)
{
	int B = p->R, Din = io->Din, H = io->H, G = io->cell;
	for (int b = 0; b < B; b++) {
		size_t n = p->base + (size_t)b;
		if (!io->u) {
			io->m[n] = 1.0f;
			io->k[n] = H;
			for (int j = 0; j < H; j++)
				io->e[n * H + j] = 1.0f;
			continue;
		}
		io->m[n] = sigm(sched_in(io, X + n * Din, prev_row(io, p, b)));
		io->k[n] = vc_mask(io, io->m[n], io->e + n * H);
	}
	float *dg;
	llr_vc_step s = step_of(io, p, X, &dg);
	stair(io, &s, Din, s.x, io->wx, s.a);
	if (s.hp)
		stair(io, &s, H, s.hp, io->wh, s.c);
	if (io->cell == LLR_VC_GRU)
		llr_vcgru_step_forward(io, &s);
	else
		llr_vcrnn_step_forward(io, &s);
	for (int r = 0; r < B; r++) {
		size_t n = (size_t)s.row[r];
		int k = s.k[r];
		const float *hp = s.hp ? s.hp + (size_t)r * H : NULL, *e = io->e + n * H, *g = io->g + n * H;
		float *h = io->h + n * H;
		for (int j = 0; j < k; j++)
			h[j] = e[j] * g[j] + (1.0f - e[j]) * (hp ? hp[j] : 0.0f);
		if (hp)
			memcpy(h + k, hp + k, (size_t)(H - k) * sizeof *h);
		else
			memset(h + k, 0, (size_t)(H - k) * sizeof *h);
		io->macs += (uint64_t)(Din + (hp ? H : 0)) * (uint64_t)((io->u ? 1 : 0) + G * k);
		io->pad += (uint64_t)(Din + (hp ? H : 0)) * (uint64_t)(G * (s.kp[r] - k));
	}
}

void llr_vc_forward(llr_vc_io *io, const float *X)
{
	LLR_ASSERT(!io->u || (io->lambda > 0 && io->eps >= 0 && io->eps < 0.5f));
	LLR_ASSERT(io->cell == LLR_VC_RNN || io->cell == LLR_VC_GRU);
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	vc_pos p = {0, 0, 0, 0};
	for (int t = 0; t < io->T; t++) {
		p.t = t;
		p.R = io->rows ? io->rows[t] : io->B;
		step_forward(io, &p, X);
		p.pbase = p.base;
		p.base += (size_t)p.R;
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

/* Row r of the step through the mask and the scheduler: dg (its H),
 * and into s->dx, s->dhp row r.  dhr = dLoss/dh_t, dmr = dLoss/dm_t from
 * above. */
static void row_backward(llr_vc_io *io, const llr_vc_step *s, int r, const float *dhr, float dmr, float *dg, const llr_vc_grad *gr)
{
	int H = io->H, Din = io->Din, k = s->k[r];
	size_t n = (size_t)s->row[r];
	const float *e = io->e + n * H, *g = io->g + n * H, *x = s->x + (size_t)r * Din;
	const float *hp = s->hp ? s->hp + (size_t)r * H : NULL;
	float *dx = s->dx + (size_t)r * Din, *dhp = s->dhp + (size_t)r * H, lh = io->lambda * (float)H;
	for (int j = 0; j < k; j++) {
		dg[j] = dhr[j] * e[j];
		dmr += dhr[j] * (g[j] - (hp ? hp[j] : 0.0f)) * lh * e[j] * (1.0f - e[j]);
	}
	if (hp) {
		for (int j = 0; j < k; j++)
			dhp[j] += dhr[j] * (1.0f - e[j]);
		for (int j = k; j < H; j++)
			dhp[j] += dhr[j];
	}
	io->macs += 2 * (uint64_t)(Din + (hp ? H : 0)) * (uint64_t)((io->u ? 1 : 0) + io->cell * k);
	if (!io->u)
		return;
	float m = io->m[n], ds = dmr * m * (1.0f - m);
	gr->ub[0] += ds;
	for (int i = 0; i < Din; i++) {
		gr->u[i] += ds * x[i];
		dx[i] += ds * io->u[i];
	}
	for (int j = 0; hp && j < H; j++) {
		gr->u[Din + j] += ds * hp[j];
		dhp[j] += ds * io->u[Din + j];
	}
}

/* Step t backward: dh's rows of step t in, dh's rows of step t - 1 (or
 * dh0) and dX's of step t out. */
static void step_backward(llr_vc_io *io, const vc_pos *p, const float *X, float *dh, const float *dm, float *dX, float *dh0, const llr_vc_grad *gr)
{
	int B = p->R, Din = io->Din, H = io->H;
	float *dg;
	llr_vc_step s = step_of(io, p, X, &dg);
	memset(s.dx, 0, (size_t)B * (Din + H) * sizeof *s.dx);
	for (int r = 0; r < B; r++) {
		size_t n = (size_t)s.row[r];
		row_backward(io, &s, r, dh + n * H, dm ? dm[n] : 0.0f, dg + (size_t)r * H, gr);
	}
	if (io->cell == LLR_VC_GRU)
		llr_vcgru_step_backward(io, &s, dg, gr);
	else
		llr_vcrnn_step_backward(io, &s, dg, gr);
	for (int r = 0, GH = io->cell * H; r < B; r++) {
		size_t c0 = (size_t)io->cell * s.k[r], c1 = (size_t)io->cell * s.kp[r];
		memset(s.a + (size_t)r * GH + c0, 0, (c1 - c0) * sizeof *s.a);
		if (s.hp)
			memset(s.c + (size_t)r * GH + c0, 0, (c1 - c0) * sizeof *s.c);
	}
	stair_backward(io, &s, Din, s.x, io->wx, s.a, gr->wx, s.dx);
	if (s.hp)
		stair_backward(io, &s, H, s.hp, io->wh, s.c, gr->wh, s.dhp);
	for (int r = 0; r < B; r++) {
		size_t n = (size_t)s.row[r];
		if (dX)
			memcpy(dX + n * Din, s.dx + (size_t)r * Din, (size_t)Din * sizeof *dX);
		size_t b = n - p->base;
		float *to = NULL;
		if (p->t)
			to = dh + (p->pbase + b) * H;
		else if (dh0)
			to = dh0 + b * H;
		for (int j = 0; s.hp && to && j < H; j++)
			to[j] += s.dhp[(size_t)r * H + j];
	}
}

void llr_vc_backward(llr_vc_io *io, const float *X, float *dh, const float *dm, float *dX, float *dh0, const llr_vc_grad *g)
{
	LLR_ASSERT(!io->rows);
	if (dh0)
		memset(dh0, 0, (size_t)io->B * io->H * sizeof *dh0);
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = io->T - 1; t >= 0; t--) {
		vc_pos p = {t, io->B, (size_t)t * io->B, t ? (size_t)(t - 1) * io->B : 0};
		step_backward(io, &p, X, dh, dm, dX, dh0, g);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}
