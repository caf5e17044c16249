/*
 * stats.c - score's counts and its summaries (score(1),
 * "Summary").  Two accounts of the same tokens: every word and </s>
 * with an OOV's log-probability as the model gives it (that of <unk>, of
 * its spelling, or 0 for an n-gram without <unk>), and SRILM's, which
 * leaves OOVs and tokens of probability 0 out of the log-probability
 * and of the counts it is divided by:
 *     ppl  = 10^(-logprob / (words - OOVs - zeroprobs + sentences))
 *     ppl1 = 10^(-logprob / (words - OOVs - zeroprobs))
 * SRILM's lines are printed in its layout, numbers as its streams print
 * them (7 significant digits, counts whole).
 */
#include "stats.h"

#include <math.h>

#include "../cli.h"

void sstats_token(sstats *s, double lp, int oov)
{
	s->logp += lp;
	if (oov) {
		s->oovs++;
		s->logp_oov += lp;
	} else if (lp == -INFINITY) {
		s->zeroprobs++;
	} else {
		s->logp_in += lp;
	}
}

void sstats_add(sstats *to, const sstats *from)
{
	to->sentences += from->sentences;
	to->words += from->words;
	to->oovs += from->oovs;
	to->zeroprobs += from->zeroprobs;
	to->blanks += from->blanks;
	to->logp += from->logp;
	to->logp_oov += from->logp_oov;
	to->logp_in += from->logp_in;
}

static void ppl_line(const char *what, double logp, size_t n)
{
	if (n == 0)
		fprintf(stderr, "%s: %s: n/a (no tokens)\n", cli_prog, what);
	else if (!isfinite(exp(-logp / (double)n)) && isfinite(logp)) /* open scoring of very unlikely strings */
		fprintf(stderr, "%s: %s: exp(%.4f), beyond a double\n", cli_prog, what, -logp / (double)n);
	else
		fprintf(stderr, "%s: %s: %.4f\n", cli_prog, what, exp(-logp / (double)n));
}

void sstats_summary(const sstats *s, const char *base_name, double base_div, const char *oov_rule)
{
	size_t ntok = s->words + s->sentences, nin = ntok - s->oovs - s->zeroprobs;
	char what[160];
	fprintf(stderr, "%s: %zu sentences, %zu words, %zu OOVs, %zu zeroprobs, %zu blank lines skipped\n", cli_prog, s->sentences,
	        s->words, s->oovs, s->zeroprobs, s->blanks);
	fprintf(stderr, "%s: logprob (base %s): %.4f over %zu tokens (words + </s>, %s)\n", cli_prog, base_name, s->logp / base_div,
	        ntok, oov_rule);
	snprintf(what, sizeof what, "perplexity (words + </s>, %s)", oov_rule);
	ppl_line(what, s->logp, ntok);
	fprintf(stderr, "%s: logprob without OOVs (base %s): %.4f over %zu tokens (words - OOVs - zeroprobs + </s>)\n", cli_prog,
	        base_name, s->logp_in / base_div, nin);
	ppl_line("ppl (words - OOVs - zeroprobs + </s>, as SRILM)", s->logp_in, nin);
	ppl_line("ppl1 (words - OOVs - zeroprobs, as SRILM)", s->logp_in, nin - s->sentences);
}

/* 10^(-lp10 / n) as SRILM prints it. */
static void srilm_ppl(FILE *fp, const char *label, double lp10, double n)
{
	if (n > 0)
		fprintf(fp, " %s %.7g", label, pow(10.0, -lp10 / n));
	else
		fprintf(fp, " %s undefined", label);
}

void sstats_srilm(FILE *fp, const char *name, const sstats *s)
{
	if (name)
		fprintf(fp, "file %s: ", name);
	fprintf(fp, "%zu sentences, %zu words, %zu OOVs\n", s->sentences, s->words, s->oovs);
	if (s->words + s->sentences == 0)
		return;
	double lp10 = s->logp_in / M_LN10 + 0.0; /* + 0.0: no "-0" */
	double n = (double)s->words - (double)s->oovs - (double)s->zeroprobs + (double)s->sentences;
	fprintf(fp, "%zu zeroprobs, logprob= %.7g", s->zeroprobs, lp10);
	srilm_ppl(fp, "ppl=", lp10, n);
	srilm_ppl(fp, "ppl1=", lp10, n - (double)s->sentences);
	fputc('\n', fp);
}
