/*
 * llrnn - run an llrnn tool by its command name, as git runs git-CMD
 * (see man/llrnn.1).
 *
 * `llrnn CMD ARGS...` executes llrnn-CMD, or CMD when the tools were
 * installed under their bare names (PROGPREFIX=), found in the directory
 * of this program, and otherwise llrnn-CMD on PATH.  Only the seven tools
 * are commands: nothing else on PATH is ever run.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "llrnn.h"

static const char usage[] =
    "usage: llrnn [-h] command [argument ...]\n"
    "       llrnn --version\n";

static const struct {
	const char *name, *job;
} commands[] = {
    {"tok", "tokenize text, one sentence per line"},
    {"vocab", "count tokens into a vocabulary"},
    {"featurize", "word features, background and token ids as a tensor stream"},
    {"train", "train a model"},
    {"score", "score token lines with a model"},
    {"gen", "generate sentences from a model"},
    {"disc-pairs", "discourse pairs (ORDER, NEXT, CONJ) from documents"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void put_help(void)
{
	fputs(usage, stdout);
	fputs("\ncommands:\n", stdout);
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("   %-11s %s\n", commands[i].name, commands[i].job);
	fputs("\n'llrnn command -h' prints a command's usage; its manual is llrnn-command(1).\n", stdout);
	cli_flush_stdout();
}

/* The directory of this program into dir (empty when unknown). */
static void self_dir(const char *argv0, char *dir, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n > 0) {
		path[n] = '\0';
	} else if (strchr(argv0, '/') && strlen(argv0) < sizeof path) {
		strcpy(path, argv0);
	} else {
		dir[0] = '\0';
		return;
	}
	char *slash = strrchr(path, '/');
	*slash = '\0';
	snprintf(dir, size, "%s", path[0] ? path : "/");
}

/* Exec path with argv when it is an executable file; return otherwise. */
static void try_exec(const char *path, char **argv)
{
	if (access(path, X_OK) == 0) {
		execv(path, argv);
		cli_die("%s: %s", path, strerror(errno));
	}
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "llrnn");
	if (argc < 2)
		cli_usage_error(usage, "no command given");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		put_help();
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("%s (llrnn) %s\n", cli_prog, LLR_VERSION);
		cli_flush_stdout();
		return 0;
	}
	if (cmd[0] == '-')
		cli_usage_error(usage, "%s: unknown option", cmd);
	size_t i = 0;
	while (i < NCOMMANDS && strcmp(cmd, commands[i].name))
		i++;
	if (i == NCOMMANDS)
		cli_usage_error(usage, "%s: unknown command (llrnn --help lists them)", cmd);

	char dir[PATH_MAX], path[PATH_MAX + 64], name[64];
	snprintf(name, sizeof name, "llrnn-%s", cmd);
	argv[1] = name;
	self_dir(argv[0], dir, sizeof dir);
	if (dir[0]) {
		snprintf(path, sizeof path, "%s/%s", dir, name);
		try_exec(path, argv + 1);
		snprintf(path, sizeof path, "%s/%s", dir, cmd);
		argv[1] = (char *)cmd;
		try_exec(path, argv + 1);
		argv[1] = name;
	}
	execvp(name, argv + 1);
	if (errno == ENOENT)
		cli_die("%s: command not found next to %s or on PATH", name, dir[0] ? dir : cli_prog);
	cli_die("%s: %s", name, strerror(errno));
}
