/*
 * strmap.c - string interning: byte strings to dense ids in insertion
 * order, by open addressing (FNV-1a hashes, linear probing).  Strings are
 * copied into the map and stay NUL-terminated.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct llr_strmap {
	char **strs;
	size_t *lens;
	uint32_t *hashes;
	size_t n, cap;      /* strings */
	int32_t *slots;     /* -1 empty, else id */
	size_t nslots;      /* power of two */
};

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

llr_strmap *llr_strmap_new(void)
{
	llr_strmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->nslots = 64;
	m->slots = malloc(m->nslots * sizeof *m->slots);
	if (!m->slots) {
		free(m);
		return NULL;
	}
	memset(m->slots, 0xff, m->nslots * sizeof *m->slots);
	return m;
}

void llr_strmap_free(llr_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->lens);
	free(m->hashes);
	free(m->slots);
	free(m);
}

static size_t find_slot(const llr_strmap *m, const char *s, size_t len, uint32_t h)
{
	size_t mask = m->nslots - 1, i = h & mask;
	for (;;) {
		int32_t id = m->slots[i];
		if (id < 0)
			return i;
		if (m->hashes[id] == h && m->lens[id] == len && !memcmp(m->strs[id], s, len))
			return i;
		i = (i + 1) & mask;
	}
}

int32_t llr_strmap_get(const llr_strmap *m, const char *s, size_t len)
{
	return m->slots[find_slot(m, s, len, fnv1a(s, len))];
}

static int grow_slots(llr_strmap *m)
{
	size_t n = m->nslots * 2;
	int32_t *slots = llr_reallocarray(NULL, n, sizeof *slots);
	if (!slots)
		return LLR_ENOMEM;
	memset(slots, 0xff, n * sizeof *slots);
	for (size_t id = 0; id < m->n; id++) {
		size_t i = m->hashes[id] & (n - 1);
		while (slots[i] >= 0)
			i = (i + 1) & (n - 1);
		slots[i] = (int32_t)id;
	}
	free(m->slots);
	m->slots = slots;
	m->nslots = n;
	return LLR_OK;
}

int32_t llr_strmap_add(llr_strmap *m, const char *s, size_t len)
{
	uint32_t h = fnv1a(s, len);
	size_t slot = find_slot(m, s, len, h);
	if (m->slots[slot] >= 0)
		return m->slots[slot];
	if (m->n >= INT32_MAX - 1)
		return LLR_ERANGE;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		char **strs = llr_reallocarray(m->strs, cap, sizeof *strs);
		if (!strs)
			return LLR_ENOMEM;
		m->strs = strs;
		size_t *lens = llr_reallocarray(m->lens, cap, sizeof *lens);
		if (!lens)
			return LLR_ENOMEM;
		m->lens = lens;
		uint32_t *hashes = llr_reallocarray(m->hashes, cap, sizeof *hashes);
		if (!hashes)
			return LLR_ENOMEM;
		m->hashes = hashes;
		m->cap = cap;
	}
	char *copy = llr_strndup(s, len);
	if (!copy)
		return LLR_ENOMEM;
	int32_t id = (int32_t)m->n;
	m->strs[id] = copy;
	m->lens[id] = len;
	m->hashes[id] = h;
	m->n++;
	m->slots[slot] = id;
	if (m->n * 2 > m->nslots && grow_slots(m)) {
		/* The string is stored and findable at its old slot. */
		return id;
	}
	return id;
}

size_t llr_strmap_size(const llr_strmap *m)
{
	return m->n;
}

const char *llr_strmap_str(const llr_strmap *m, int32_t id)
{
	LLR_ASSERT(id >= 0 && (size_t)id < m->n);
	return m->strs[id];
}

size_t llr_strmap_len(const llr_strmap *m, int32_t id)
{
	LLR_ASSERT(id >= 0 && (size_t)id < m->n);
	return m->lens[id];
}
