/*
 * score-sentence-cxx MODEL - tests/api/score-sentence.c in C++, against
 * the shared library (tests/53-shared-lib.bats): lib/llrnn.h's extern "C"
 * guards let g++ call it, and the model is closed by its owner.  Each
 * line of stdin, a tokenised sentence, is printed as score(1) --per-token
 * prints it from its third field on (OOVs, then word=logp).
 */
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "llrnn.h"

namespace {

struct model_closer {
	void operator()(llr_model *m) const { llr_model_close(m); }
};
using model_ptr = std::unique_ptr<llr_model, model_closer>;

int fail(const char *msg)
{
	std::fprintf(stderr, "score-sentence-cxx: %s\n", msg);
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2)
		return fail("usage: score-sentence-cxx MODEL");
	llr_err err = {};
	llr_model *raw = nullptr;
	if (llr_model_open(argv[1], nullptr, &raw, &err) != LLR_OK)
		return fail(err.msg);
	model_ptr m(raw);
	char buf[4096];
	while (std::fgets(buf, sizeof buf, stdin)) {
		std::istringstream line(buf);
		std::vector<std::string> words;
		for (std::string w; line >> w;)
			words.push_back(w);
		std::vector<const char *> ptrs;
		for (const std::string &w : words)
			ptrs.push_back(w.c_str());
		std::vector<double> lp(words.size() + 1);
		std::vector<unsigned char> oov(words.size() + 1);
		llr_sentence s = {ptrs.data(), ptrs.size()};
		if (llr_model_score(m.get(), &s, 1, lp.data(), oov.data(), nullptr, &err) != LLR_OK)
			return fail(err.msg);
		size_t noov = 0;
		for (unsigned char o : oov)
			noov += o;
		std::printf("%zu", noov);
		for (size_t t = 0; t < lp.size(); t++)
			std::printf("\t%s=%.4f", t < words.size() ? words[t].c_str() : "</s>", lp[t]);
		std::printf("\n");
	}
	return 0;
}
