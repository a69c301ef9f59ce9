/*
 * Trigger for read(2)/write(2) tests: it looks at the regular .d files of
 * the running test's directory ($_test names the test), in name order,
 * checking each with lstat, and copies each to a temporary file 4096
 * bytes at a time, so that the sizes of reads and writes are known. For
 * ustack tests it then stays alive 5 more seconds.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char dir[PATH_MAX];

/* lstat through its own system call where there is one: tests probe it. */
static int do_lstat(const char *path, struct stat *st)
{
#ifdef SYS_lstat
	return syscall(SYS_lstat, path, st);
#else
	return lstat(path, st);
#endif
}

static int is_test_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	char path[PATH_MAX + 256];
	struct stat st;

	if (n < 2 || strcmp(d->d_name + n - 2, ".d") != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
	return do_lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int main(void)
{
	const char *test = getenv("_test");
	struct dirent **names;
	char buf[4096], path[PATH_MAX + 256], *slash;
	FILE *tmp;
	int n, i, in, out;
	ssize_t got;

	if (test == NULL) {
		fprintf(stderr, "_test is not set\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", test);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	n = scandir(dir, &names, is_test_file, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s reading %s\n", strerror(errno), dir);
		return 1;
	}
	if ((tmp = tmpfile()) == NULL) {
		perror("tmpfile");
		return 1;
	}
	out = fileno(tmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if ((in = open(path, O_RDONLY)) < 0) {
			fprintf(stderr, "Cannot open %s: %s\n", path, strerror(errno));
			return 1;
		}
		while ((got = read(in, buf, sizeof(buf))) > 0) {
			if (write(out, buf, got) < 0) {
				perror("write");
				return 1;
			}
		}
		close(in);
	}
	fclose(tmp);
	if (strstr(test, "ustack") != NULL)
		sleep(5);
	return 0;
}
