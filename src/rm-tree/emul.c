/*
 * emul.c: is a process emulated (qemu-user and the like through
 * binfmt_misc)?  Decided from its command line while it lives: its
 * argv[0] is the interpreter of a registered binfmt_misc entry (lib/
 * binfmt).  The registrations are the ones the process's kernel instance
 * uses: ours (PROC_ROOT/sys/fs/binfmt_misc) for a process in our user
 * namespace; for one in another (Linux 6.7: an instance per user
 * namespace), the ones mounted in its own root, PROC_ROOT/PID/root/proc/
 * sys/fs/binfmt_misc.  Where those cannot be read, the interpreter's name
 * (qemu-*, *-binfmt-*) on a process whose comm is another program's is
 * the fallback, and otherwise the answer is unknown, never "no".
 * Reaches into no other part of rm-tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binfmt.h"
#include "cu.h"
#include "procfs.h"
#include "tick.h"
#include "tree.h"

/* A table kept between calls: found entries are taken as they are; on a
 * miss the directory is listed again and its entries read again when its
 * names changed (a build may register qemu just before it runs: docker
 * run --privileged multiarch/qemu-user-static --reset). */
struct table {
	struct rm_binfmt t;
	char ns[64];        /* the user namespace it is for */
	int ok;             /* read (binfmt_misc mounted there) */
	double at;          /* when it was last read or found unchanged */
};

/* A miss lists the directory again at most this often (seconds), for a
 * process whose argv[0] is its own program (see lookup). */
#define REFRESH_EVERY 1.0

/* Is argv[0] (len bytes) the program comm names (comm: its base name cut
 * to 15 bytes)?  A process run through binfmt_misc never is: its argv[0]
 * is the interpreter, its comm the emulated binary's name. */
static int own_program(const char *argv0, size_t len, const char *comm)
{
	const char *b = memrchr(argv0, '/', len);
	size_t bl, cl = strlen(comm);

	b = b ? b + 1 : argv0;
	bl = (size_t)(argv0 + len - b);
	return bl <= 15 ? cl == bl && memcmp(b, comm, bl) == 0 : cl == 15 && memcmp(b, comm, 15) == 0;
}

static struct table own, other;

/* The user namespace link of pid ("self" for ours) into buf; "" when
 * unreadable. */
static void user_ns(const char *pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd = rm_proc_dirfd();

	buf[0] = '\0';
	if (fd < 0 || rm_pathf(path, sizeof(path), "%s/ns/user", pid) < 0)
		return;
	n = readlinkat(fd, path, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* The entry of argv0 in the registrations pid's kernel instance uses;
 * NULL when none, with *known set when those could be read.  A miss
 * lists the registrations again (a build may register qemu just before it
 * runs), but in our own user namespace, for a process whose argv[0]
 * names its own program (no binfmt_misc run, the most of a build's
 * processes: named), at most once a second: a listing is three to five
 * system calls, which a build's every process paid (14 us each on a
 * hypervisor's guest).  Such a process is told "no" (or unknown, where
 * the registrations could not be read) from a listing up to a second
 * old: only one that is a registered interpreter run by hand could be
 * answered otherwise by a newer one.  Another namespace's (a container
 * that mounts its own binfmt_misc just before it runs) is listed at
 * each miss. */
static const struct rm_binfmt_entry *lookup(int pid, const char *argv0, size_t len, int named,
					     int *known)
{
	static char self_ns[64];
	const struct rm_binfmt_entry *e;
	char ns[64], spid[24], path[96];
	int fd = rm_proc_dirfd();
	struct table *tb = &own;

	*known = 0;
	if (fd < 0)
		return NULL;
	if (!self_ns[0])
		user_ns("self", self_ns, sizeof(self_ns));
	snprintf(spid, sizeof(spid), "%d", pid);
	user_ns(spid, ns, sizeof(ns));
	snprintf(path, sizeof(path), "sys/fs/binfmt_misc");
	if (ns[0] && strcmp(ns, self_ns) != 0) {
		/* Another user namespace: its registrations as mounted in its
		 * root (one table kept, for the namespace met last). */
		tb = &other;
		if (rm_pathf(path, sizeof(path), "%d/root/proc/sys/fs/binfmt_misc", pid) < 0)
			return NULL;
		if (strcmp(tb->ns, ns) != 0) {
			memcpy(tb->ns, ns, sizeof(tb->ns));
			tb->at = rm_now_mono();
			tb->ok = rm_binfmt_read_at(fd, path, &tb->t) == 0;
			*known = tb->ok;
			return tb->ok ? rm_binfmt_find(&tb->t, argv0, len) : NULL;
		}
	}
	if (tb->ok && (e = rm_binfmt_find(&tb->t, argv0, len))) {
		*known = 1;
		return e;
	}
	double t = rm_now_mono();
	if (named && tb == &own && tb->at > 0 && t - tb->at < REFRESH_EVERY) {
		*known = tb->ok;
		return NULL;
	}
	tb->at = t;
	tb->ok = rm_binfmt_refresh_at(fd, path, &tb->t) >= 0;
	*known = tb->ok;
	return tb->ok ? rm_binfmt_find(&tb->t, argv0, len) : NULL;
}

int cmd_emulated(int pid, const char *raw, size_t len, const char *comm)
{
	size_t a0 = strnlen(raw, len);
	int known;

	if (len == 0 || a0 == 0)
		return RM_EMU_UNKNOWN;
	int named = own_program(raw, a0, comm);

	if (lookup(pid, raw, a0, named, &known))
		return RM_EMU_YES;
	/* By the interpreter's name, in the kernel's form: what runs is
	 * another program (comm is the binary's name under binfmt_misc; a
	 * qemu-aarch64 run by hand is named qemu-aarch64). */
	if (rm_cu_emulator_name(raw, a0) && rm_cu_real_start(raw, len, -1, -1) > 0 && !named)
		return RM_EMU_YES;
	return known ? RM_EMU_NO : RM_EMU_UNKNOWN;
}
