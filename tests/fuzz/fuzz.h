/*
 * fuzz.h - what the libFuzzer harnesses share: the library reads paths,
 * so each input goes into one memfd per process, named by its
 * /proc/self/fd path.  See README.md.
 */
#ifndef LLR_FUZZ_H
#define LLR_FUZZ_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llrnn.h"

/* The input as a file: its path (valid until the next call). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz", 0);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		perror("fuzz input");
		abort();
	}
	return path;
}

#endif
