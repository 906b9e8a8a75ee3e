/*
 * t_binfmt: binfmt_misc entries parsed from the kernel's text, and a
 * directory of them read through the proc root (tests/fixtures/binfmt is
 * a copy of a private binfmt_misc instance: qemu-aarch64 as Debian's
 * qemu-user-static registers it, flags PF; qemu-arm with F; a disabled
 * qemu-riscv64 with POC; python3 by extension, no flags).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binfmt.h"
#include "tap.h"

static void test_parse(void)
{
	static const char pf[] = "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\n"
				 "flags: PF\noffset 0\nmagic 7f454c460201010000000000000000000200b700\n"
				 "mask ffffffffffffff00fffffffffffffffffeffffff\n";
	static const char off[] = "disabled\ninterpreter /usr/bin/qemu-riscv64\nflags: OC\noffset 0\n";
	static const char none[] = "enabled\ninterpreter /usr/bin/python3\nflags: \nextension .pyc\n";
	struct rm_binfmt_entry e;

	CHECK(rm_binfmt_parse(pf, sizeof(pf) - 1, &e) == 0);
	CHECK_STR(e.interp, "/usr/libexec/qemu-binfmt/aarch64-binfmt-P");
	CHECK(e.enabled && e.preserve);
	CHECK(rm_binfmt_parse(off, sizeof(off) - 1, &e) == 0);
	CHECK_STR(e.interp, "/usr/bin/qemu-riscv64");
	CHECK(!e.enabled && !e.preserve);
	CHECK(rm_binfmt_parse(none, sizeof(none) - 1, &e) == 0);
	CHECK(e.enabled && !e.preserve);
	/* No newline at the end, no flags line. */
	CHECK(rm_binfmt_parse("enabled\ninterpreter /x/q", 24, &e) == 0);
	CHECK_STR(e.interp, "/x/q");
	/* Not entries: the status file, an empty or cut one, a huge path,
	 * "magic P" is no flags line. */
	CHECK(rm_binfmt_parse("enabled\n", 8, &e) == -1);
	CHECK(rm_binfmt_parse("", 0, &e) == -1);
	CHECK(rm_binfmt_parse("enabled\ninterpreter \n", 21, &e) == -1);
	CHECK(rm_binfmt_parse(NULL, 5, &e) == -1);
	char big[600] = "enabled\ninterpreter /";
	memset(big + 21, 'a', 400);
	CHECK(rm_binfmt_parse(big, strlen(big), &e) == -1);
	CHECK(rm_binfmt_parse("enabled\ninterpreter /q\nmagic P\n", 31, &e) == 0);
	CHECK(!e.preserve);
	/* The interpreter line is found wherever it is, never mid-line. */
	CHECK(rm_binfmt_parse("enabled\nxinterpreter /bad\n", 26, &e) == -1);
}

static void test_read(void)
{
	struct rm_binfmt *t = malloc(sizeof(*t));
	const struct rm_binfmt_entry *e;
	char dir[4096];
	const char *top = getenv("RM_TOP");

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/binfmt", top && *top ? top : ".");
	setenv("RM_PROC_ROOT", dir, 1);
	CHECK(t && rm_binfmt_read(t) == 0);
	if (!t)
		return;
	CHECK_U64(t->n, 4);
	e = rm_binfmt_find(t, "/usr/libexec/qemu-binfmt/aarch64-binfmt-P", 41);
	CHECK(e && e->preserve && e->enabled);
	e = rm_binfmt_find(t, "/usr/bin/qemu-arm-static", 24);
	CHECK(e && !e->preserve);
	e = rm_binfmt_find(t, "/usr/bin/qemu-riscv64", 21);
	CHECK(e && e->preserve && !e->enabled);
	/* Exactly as written: another spelling of the path is not it. */
	CHECK(rm_binfmt_find(t, "/usr/bin/qemu-arm-stati", 23) == NULL);
	CHECK(rm_binfmt_find(t, "/usr/bin//qemu-arm-static", 25) == NULL);
	CHECK(rm_binfmt_find(t, "/usr/bin/qemu-arm-static", 24) != NULL);
	CHECK(rm_binfmt_find(NULL, "x", 1) == NULL);

	/* Refreshed: the same names read nothing again; a new entry (as
	 * registering one, which leaves the directory's mtime alone) does. */
	char tmp2[] = "/tmp/t_binfmt.XXXXXX", p[4200];
	CHECK(mkdtemp(tmp2) != NULL);
	snprintf(p, sizeof(p), "cp %s/sys/fs/binfmt_misc/* %s/", dir, tmp2);
	CHECK(system(p) == 0);
	CHECK(rm_binfmt_read_at(AT_FDCWD, tmp2, t) == 0 && t->n == 4);
	CHECK(rm_binfmt_refresh_at(AT_FDCWD, tmp2, t) == 0 && t->n == 4);
	snprintf(p, sizeof(p), "printf 'enabled\\ninterpreter /opt/box\\nflags: P\\n' >%s/box", tmp2);
	CHECK(system(p) == 0);
	CHECK(rm_binfmt_find(t, "/opt/box", 8) == NULL);
	CHECK(rm_binfmt_refresh_at(AT_FDCWD, tmp2, t) == 1 && t->n == 5);
	e = rm_binfmt_find(t, "/opt/box", 8);
	CHECK(e && e->preserve);
	snprintf(p, sizeof(p), "rm -r %s", tmp2);
	CHECK(system(p) == 0);
	CHECK(rm_binfmt_refresh_at(AT_FDCWD, tmp2, t) == -1 && t->n == 0);

	/* A mount point with nothing mounted on it, and no directory. */
	char tmp[] = "/tmp/t_binfmt.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	CHECK(rm_binfmt_read_at(AT_FDCWD, tmp, t) == -1 && errno == ENOENT);
	CHECK(t->n == 0);
	rmdir(tmp);
	CHECK(rm_binfmt_read_at(AT_FDCWD, tmp, t) == -1 && errno == ENOENT);
	free(t);
}

int main(void)
{
	RUN(test_parse);
	RUN(test_read);
	return tap_done();
}
