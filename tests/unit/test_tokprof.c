/*
 * test_tokprof.c - unit tests for the record of a corpus's tokenisation
 * (lib/features/tokprof.c): the token counts, what a corpus shows, the
 * meta round trip, the tokenizer options and the mismatch lines.
 */
#include "internal.h"
#include "test.h"

static llr_tokstat *counted(const char *lines)
{
	llr_tokstat *s = llr_tokstat_new();
	llr_err e = {0};
	const char *p = lines;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		CHECK(llr_tokstat_line(s, p, n, &e) == LLR_OK);
		p += n + (nl != NULL);
	}
	return s;
}

static void test_counts(void)
{
	llr_tokstat *s = counted("Do n't stop , John 's here\nl' homme qu' il don't l'homme aujourd'hui\n"
	                         "cafe\xcc\x81 chat, \xef\xac\x81n\n");
	CHECK(llr_tokstat_tokens(s) == 17);
	CHECK(llr_tokstat_count(s, LLR_TS_CAPITALS) == 2);       /* Do John */
	CHECK(llr_tokstat_count(s, LLR_TS_EN_SPLIT) == 2);       /* n't 's */
	CHECK(llr_tokstat_count(s, LLR_TS_EN_ATTACHED) == 1);    /* don't */
	CHECK(llr_tokstat_count(s, LLR_TS_FR_SPLIT) == 2);       /* l' qu' */
	CHECK(llr_tokstat_count(s, LLR_TS_FR_ATTACHED) == 1);    /* l'homme, not aujourd'hui nor n't */
	CHECK(llr_tokstat_count(s, LLR_TS_NOT_NFC) == 1);        /* e + U+0301 */
	CHECK(llr_tokstat_count(s, LLR_TS_NOT_NFKC) == 2);       /* that, and the fi ligature */
	CHECK(llr_tokstat_count(s, LLR_TS_PUNCT_ATTACHED) == 1); /* chat, ; the lone , is not */
	llr_tokstat_free(s);
	/* U+2019 is an apostrophe; a vocabulary type counts count times */
	s = llr_tokstat_new();
	llr_err e = {0};
	CHECK(llr_tokstat_token(s, "l\xe2\x80\x99", 4, 5, &e) == LLR_OK);
	CHECK(llr_tokstat_token(s, "\xff", 1, 2, &e) == LLR_OK); /* invalid UTF-8: a token, no more */
	CHECK(llr_tokstat_tokens(s) == 7);
	CHECK(llr_tokstat_count(s, LLR_TS_FR_SPLIT) == 5);
	llr_tokstat_free(s);
	llr_tokstat_free(NULL);
}

static void test_detect(void)
{
	llr_tokprof p;
	llr_tokstat *s = counted("l' homme , qu' il\nle chat\n");
	llr_tokprof_unknown(&p);
	llr_tokprof_detect(&p, s);
	CHECK(p.lower == 1 && p.norm == LLR_NORM_NFC && p.clitics == LLR_CLITICS_FR && p.punct == 1);
	llr_tokstat_free(s);
	s = counted("Don't stop, John's here\n");
	llr_tokprof_unknown(&p);
	p.norm = LLR_NORM_NFKC; /* given: kept */
	llr_tokprof_detect(&p, s);
	CHECK(p.lower == 0 && p.norm == LLR_NORM_NFKC && p.clitics == LLR_CLITICS_ATTACHED && p.punct == 0);
	llr_tokstat_free(s);
	/* English with its clitics attached and an "n'" and a "d'" (Brown's
	 * rock n' roll): attached, not French split off */
	s = counted("don't stop , it's rock n' roll , isn't it ? d' you know\n");
	llr_tokprof_unknown(&p);
	llr_tokprof_detect(&p, s);
	CHECK(p.clitics == LLR_CLITICS_ATTACHED);
	llr_tokstat_free(s);
	s = counted("l' homme qu' il a vu n' est pas ici ; it 's\n"); /* more French split than English */
	llr_tokprof_unknown(&p);
	llr_tokprof_detect(&p, s);
	CHECK(p.clitics == LLR_CLITICS_FR);
	llr_tokstat_free(s);
	s = counted("the cat sat\n");
	llr_tokprof_unknown(&p);
	llr_tokprof_detect(&p, s);
	CHECK(p.clitics == LLR_TP_UNKNOWN); /* nothing seen */
	llr_tokstat_free(s);
	s = llr_tokstat_new();
	llr_tokprof_unknown(&p);
	llr_tokprof_detect(&p, s); /* no token: nothing known */
	CHECK(p.lower == LLR_TP_UNKNOWN && p.norm == LLR_TP_UNKNOWN && p.punct == LLR_TP_UNKNOWN);
	llr_tokstat_free(s);
}

static void test_meta(void)
{
	llr_tokprof p = {1, LLR_NORM_NFKC, LLR_CLITICS_EN, 0}, q;
	llr_meta *m = llr_meta_new();
	llr_err e = {0};
	CHECK(llr_tokprof_from_meta(&q, m, &e) == 0); /* an older file */
	CHECK(q.lower == LLR_TP_UNKNOWN && q.clitics == LLR_TP_UNKNOWN);
	CHECK(llr_tokprof_to_meta(&p, m) == LLR_OK);
	CHECK(!strcmp(llr_meta_get(m, "tok.lowercase"), "1"));
	CHECK(!strcmp(llr_meta_get(m, "tok.norm"), "nfkc"));
	CHECK(!strcmp(llr_meta_get(m, "tok.clitics"), "en"));
	CHECK(!strcmp(llr_meta_get(m, "tok.punct"), "attached"));
	CHECK(llr_tokprof_from_meta(&q, m, &e) == 1);
	CHECK(!memcmp(&p, &q, sizeof p));
	llr_tok_opts o;
	llr_tokprof_tok_opts(&q, &o);
	CHECK(o.lower && o.nfkc && !strcmp(o.lang, "en") && !o.chars);
	llr_buf b = {0};
	CHECK(llr_tokprof_options(&q, &b) == LLR_OK);
	CHECK(!strcmp(b.data, "tok -l --nfkc --lang en"));
	llr_meta_set(m, "tok.clitics", "de");
	CHECK(llr_tokprof_from_meta(&q, m, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "tok.clitics=de") != NULL);
	llr_meta_free(m);
	/* an unknown field is left out, and is tok's default */
	llr_tokprof_unknown(&p);
	m = llr_meta_new();
	CHECK(llr_tokprof_to_meta(&p, m) == LLR_OK && llr_meta_count(m) == 0);
	llr_meta_free(m);
	llr_buf_clear(&b);
	llr_tokprof_options(&p, &b);
	CHECK(!strcmp(b.data, "tok"));
	llr_buf_free(&b);
}

static void test_check(void)
{
	llr_tokprof p = {1, LLR_NORM_NFC, LLR_CLITICS_FR, 1};
	llr_buf b = {0};
	llr_tokstat *s = counted("le chat\nl' homme\n");
	CHECK(llr_tokprof_check(&p, s, 1, &b) == 0 && b.len == 0);
	llr_tokstat_free(s);
	s = counted("Le chat\nl'homme dort, Paul\n");
	CHECK(llr_tokprof_check(&p, s, 0, &b) == 3);
	CHECK(strstr(b.data, "2 of 5 tokens have capitals (first: 'Le'); the model was trained on lowercased text (tok -l)\n") == b.data);
	CHECK(strstr(b.data, "1 of 5 tokens have a French elision attached (first: 'l'homme')") != NULL);
	CHECK(strstr(b.data, "1 of 5 tokens have punctuation attached (first: 'dort,')") != NULL);
	llr_tokstat_free(s);
	/* a cased record: no capital in 100 words is told at the end only */
	p.lower = 0;
	s = llr_tokstat_new();
	llr_err e = {0};
	CHECK(llr_tokstat_token(s, "chat", 4, 99, &e) == LLR_OK);
	llr_buf_clear(&b);
	CHECK(llr_tokprof_check(&p, s, 1, &b) == 0);
	CHECK(llr_tokstat_token(s, "chat", 4, 1, &e) == LLR_OK);
	CHECK(llr_tokprof_check(&p, s, 0, &b) == 0);
	CHECK(llr_tokprof_check(&p, s, 1, &b) == 1);
	CHECK(!strcmp(b.data, "none of 100 tokens has a capital; the model was trained on cased text (tok without -l)\n"));
	llr_tokstat_free(s);
	/* unknown fields check nothing */
	llr_tokprof_unknown(&p);
	s = counted("Le Chat, l'homme cafe\xcc\x81\n");
	llr_buf_clear(&b);
	CHECK(llr_tokprof_check(&p, s, 1, &b) == 0);
	llr_tokstat_free(s);
	llr_buf_free(&b);
}

int main(void)
{
	PLAN(4);
	RUN(test_counts);
	RUN(test_detect);
	RUN(test_meta);
	RUN(test_check);
	DONE();
}
