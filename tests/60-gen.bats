#!/usr/bin/env bats
# gen: reproducible sampling, greedy and beam search, prefixes, the
# reported log-probabilities checked with score, --show-features, errors.
# Tiny models are trained once per file on 200 sentences of the UD French
# slice.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local d="$UD" m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$d/fr_sequoia-ud-dev.conllu.gz" | head -200 >"$m/train.tok"
	featurize --top 50 --conllu "$d/fr_sequoia-ud-dev.conllu.gz" -l --ortho --suffix 2 \
		"$m/train.tok" >"$m/feats" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 2 -s 1 -o "$m/ll.llrnn" "$m/feats"
	train -q --output softmax --hidden 8 --embed 8 --layers 1 --epochs 6 --lr 0.01 -s 1 -o "$m/sm.llrnn" "$m/feats"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "gen: the same seed gives the same sentences, another seed others" {
	gen -m "$M/ll.llrnn" -n 10 -s 5 >a
	gen -m "$M/ll.llrnn" -n 10 -s 5 >b
	cmp a b
	[ "$(wc -l <a)" -eq 10 ]
	gen -m "$M/ll.llrnn" -n 10 -s 6 >c
	run ! cmp -s a c
	# sentence i does not depend on how many are asked for
	gen -m "$M/ll.llrnn" -n 3 -s 5 | cmp - <(head -3 a)
	gen -m "$M/ll.llrnn" -n 40 -s 5 | head -10 | cmp - a
}

@test "gen: reported log-probabilities are what score gives the sentences" {
	for m in ll sm; do
		gen -m "$M/$m.llrnn" -n 30 -s 3 --logprob --max-len 60 >out
		[ "$(wc -l <out)" -eq 30 ]
		# a sentence cut at --max-len has no </s>: compare the others
		awk -F'\t' 'split($1, w, " ") < 60' out >ended
		[ "$(wc -l <ended)" -ge 20 ]
		cut -f1 ended | score -q -m "$M/$m.llrnn" --blank-lines score | cut -f1 | paste - ended |
			awk -F'\t' '{ d = $1 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }'
	done
}

@test "gen: prefixes are continued and scored whole, unseen prefix words included" {
	gen -m "$M/ll.llrnn" -p "le zzqxa" -n 5 -s 2 --logprob >out
	[ "$(wc -l <out)" -eq 5 ]
	[ "$(grep -c '^le zzqxa' out)" -eq 5 ]
	awk -F'\t' 'split($1, w, " ") < 100' out >ended
	cut -f1 ended | score -q -m "$M/ll.llrnn" --blank-lines score | cut -f1 | paste - ended |
		awk -F'\t' '{ d = $1 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }'
	printf 'le\n\nla petite\n' >prefixes.txt
	gen -m "$M/ll.llrnn" --prefix-file prefixes.txt -n 2 -s 2 >out
	[ "$(wc -l <out)" -eq 6 ]
	sed -n 1,2p out | grep -c '^le' | grep -qx 2
	sed -n 5,6p out | grep -c '^la petite' | grep -qx 2
	# the same from standard input, a pipe read line by line
	cat prefixes.txt | gen -m "$M/ll.llrnn" --prefix-file - -n 2 -s 2 | cmp - out
}

@test "gen: --beam 1 equals --greedy, and top-k 1 sampling too" {
	for m in ll sm; do
		gen -m "$M/$m.llrnn" --greedy --logprob --max-len 30 >g
		gen -m "$M/$m.llrnn" --beam 1 --logprob --max-len 30 | cmp - g
		gen -m "$M/$m.llrnn" --top-k 1 -s 9 --logprob --max-len 30 | cmp - g
		gen -m "$M/$m.llrnn" --top-p 1e-9 -s 4 --logprob --max-len 30 | cmp - g
		gen -m "$M/$m.llrnn" -p "la" --greedy --max-len 30 >g2
		gen -m "$M/$m.llrnn" -p "la" --beam 1 --max-len 30 | cmp - g2
	done
}

@test "gen: --beam with --nbest ranks by log-probability per token" {
	gen -m "$M/ll.llrnn" --beam 4 --nbest 3 --logprob --max-len 20 >out
	[ "$(wc -l <out)" -eq 3 ]
	# log p / (words + 1 for </s>, or words when cut at --max-len) descends
	awk -F'\t' '{ n = split($1, w, " "); if (n < 20) n++; s = $2 / n
		if (NR > 1 && s > prev + 1e-6) { print "not sorted at " NR; exit 1 } prev = s }' out
	# the beam's best is at least as probable per token as the greedy one
	g=$(gen -m "$M/ll.llrnn" --greedy --logprob --max-len 20)
	echo "$g" | awk -F'\t' -v best="$(head -1 out)" '{ n = split($1, w, " "); if (n < 20) n++
		split(best, b, "\t"); m = split(b[1], bw, " "); if (m < 20) m++
		exit !(b[2] / m >= $2 / n - 1e-6) }'
}

@test "gen: --temperature, --top-k, --top-p and --no-unk shape the draw" {
	gen -m "$M/ll.llrnn" -n 50 -s 1 --temperature 3 --max-len 20 >hot
	gen -m "$M/ll.llrnn" -n 50 -s 1 --temperature 3 --max-len 20 --no-unk >nounk
	grep -q '<unk>' hot
	[ "$(wc -l <nounk)" -eq 50 ]
	run ! grep -q '<unk>' nounk
	gen -m "$M/ll.llrnn" -n 20 -s 1 --top-k 3 --top-p 0.9 --temperature 0.7 --max-len 20 >trunc
	[ "$(wc -l <trunc)" -eq 20 ]
}

@test "gen: --show-features prints every token with its features" {
	gen -m "$M/ll.llrnn" -p "le 2024" -n 2 -s 7 --show-features --max-len 10 >out
	# blocks of token lines, each ended by a blank line
	[ "$(grep -c '^$' out)" -eq 2 ]
	awk 'NF && !/\t/ { exit 1 }' out
	grep -q $'^le\tTOP:le .*POS:DET' out
	grep -q $'^2024\t.*ORTH:number' out
	# with --logprob: a log-probability column, and a </s> line when produced
	gen -m "$M/ll.llrnn" -s 7 --show-features --logprob >out2
	awk -F'\t' 'NF && $2 !~ /^-[0-9]+\.[0-9]+$/ { print; exit 1 }' out2
	tail -2 out2 | head -1 | grep -q $'^</s>\t'
	# the tokens are those of the plain output, and the sum is --logprob's
	plain=$(gen -m "$M/ll.llrnn" -s 7 --logprob)
	[ "$(grep -v '^$' out2 | grep -v '^</s>' | cut -f1 | paste -sd' ')" = "$(echo "$plain" | cut -f1)" ]
	grep -v '^$' out2 | awk -F'\t' -v want="$(echo "$plain" | cut -f2)" '{ s += $2 }
		END { d = s - want; if (d < 0) d = -d; exit !(d < 1e-3) }'
}

@test "gen: | head -1 ends quietly" {
	# 100000 sentences overflow any pipe buffer: gen really meets EPIPE,
	# dies of the default SIGPIPE (141) or ends 0, and says nothing
	run bash -c "gen -m '$M/ll.llrnn' -n 100000 --logprob 2>err | head -1 >out; echo \${PIPESTATUS[0]} >st"
	assert_success
	[ "$(wc -l <out)" -eq 1 ]
	grep -Eq $'^[^\t]+\t-[0-9]+\\.[0-9]{4}$' out
	[ ! -s err ]
	st=$(cat st)
	[ "$st" = 0 ] || [ "$st" = 141 ]
}

@test "gen: -o writes the file whole" {
	gen -m "$M/ll.llrnn" -n 4 -s 1 -o out.txt
	gen -m "$M/ll.llrnn" -n 4 -s 1 | cmp - out.txt
}

@test "gen: usage errors exit 2 with the usage" {
	run_err 2 'no model' gen
	run_err 2 'usage: gen' gen -n 2
	run_err 2 'temperature' gen -m "$M/ll.llrnn" --temperature 0
	run_err 2 'top-p' gen -m "$M/ll.llrnn" --top-p 1.5
	run_err 2 'top-k' gen -m "$M/ll.llrnn" --top-k -1
	run_err 2 'exclude' gen -m "$M/ll.llrnn" --greedy --beam 2
	run_err 2 'nbest' gen -m "$M/ll.llrnn" --beam 2 --nbest 3
	run_err 2 'nbest' gen -m "$M/ll.llrnn" --nbest 2
	run_err 2 '-n applies' gen -m "$M/ll.llrnn" --greedy -n 3
	run_err 2 'exclude' gen -m "$M/ll.llrnn" -p le --prefix-file x
	run_err 2 'operand' gen -m "$M/ll.llrnn" somefile
	run_err 2 '-s' gen -m "$M/ll.llrnn" -s abc
	run_err 2 'usage' gen -m "$M/ll.llrnn" --bogus
	run gen -h
	assert_success
	assert_output --partial "usage: gen"
}

@test "gen: a missing, wrong-kind or truncated model, or a bad prefix file, is refused" {
	run_err 1 'nosuch.llrnn: No such file' gen -m nosuch.llrnn
	run_err 1 "features.*expected a 'model'" gen -m "$M/feats"
	head -c 3000 "$M/ll.llrnn" >trunc.llrnn
	run_err 1 'trunc.llrnn: .*[Tt]runcated' gen -m trunc.llrnn
	run_err 1 'nosuch.txt: No such file' gen -m "$M/ll.llrnn" --prefix-file nosuch.txt
	printf 'le\n\377\n' >bad.txt
	run bash -c "gen -m '$M/ll.llrnn' --prefix-file bad.txt >out 2>err"
	[ "$status" -eq 1 ]
	[ "$(wc -l <out)" -eq 1 ]
	grep -q '^gen: bad.txt:2: .*UTF-8' err
}

@test "gen: the man page examples run" {
	cp "$M/ll.llrnn" model.llrnn
	printf 'le\nla petite\n' >prefixes.txt
	gen -m model.llrnn -n 5 -s 42 >out
	[ "$(wc -l <out)" -eq 5 ]
	gen -m model.llrnn -p "le président" -n 3 --top-p 0.9 --logprob > out.tsv
	cut -f1 out.tsv | score -q -m model.llrnn --blank-lines score | cut -f1 >scores
	[ "$(wc -l <scores)" -eq 3 ]
	gen -m model.llrnn --prefix-file prefixes.txt --beam 5 --nbest 3 >beams
	[ "$(wc -l <beams)" -eq 6 ]
	gen -m model.llrnn -s 7 --show-features --no-unk >feats
	[ "$(tail -1 feats)" = "" ]
}

@test "gen: the man page is lint-clean" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	mandoc -Tlint -W warning "$TOP/man/gen.1"
}
