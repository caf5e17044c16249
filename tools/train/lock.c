/*
 * lock.c - one train at a time on a model file: the run holds an
 * exclusive flock(2) on MODEL.lock (its pid inside) while it trains, so
 * that a second `train -o MODEL` or `train --resume MODEL` (a `make
 * resume` while the first still runs) stops before touching the model,
 * naming the process, instead of two runs saving over each other.  The
 * lock file goes when the run exits (a run killed outright leaves it,
 * unlocked, and the next run takes it).  Where the file cannot be made
 * (a read-only or full directory) the run goes on unlocked: it cannot
 * write its model there either, and that write says why.  CLI-only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../cli.h"
#include "train.h"

static char *held; /* the lock file this process holds, or NULL */

static void release(void)
{
	if (held)
		unlink(held);
}

void train_lock_model(const char *model)
{
	size_t n = strlen(model) + sizeof ".lock";
	char *path = malloc(n);
	if (!path)
		cli_die("out of memory");
	snprintf(path, n, "%s.lock", model);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(path);
		return;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			close(fd);
			free(path);
			return;
		}
		char pid[32] = "";
		ssize_t got = pread(fd, pid, sizeof pid - 1, 0);
		pid[got > 0 ? got : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		cli_die("%s is being trained by another train (pid %s, holding %s); wait for it or stop it first", model,
		        *pid ? pid : "?", path);
	}
	char pid[32];
	int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	/* the pid only names this run to the next one: without room for it
	 * the lock still holds */
	int named = ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)len, 0) == len;
	(void)named;
	held = path;
	atexit(release);
	/* fd stays open: the lock lives as long as the process */
}
