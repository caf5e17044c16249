/*
 * path.c - what kind of output path a writer has: a regular file (or
 * none yet), written through a temporary and a rename, or a special file
 * (a device, a FIFO), written in place.
 */
#include <sys/stat.h>

#include "llrnn.h"

int llr_path_is_special(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}
