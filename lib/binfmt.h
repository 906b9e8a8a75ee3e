/*
 * binfmt: the binfmt_misc registrations (/proc/sys/fs/binfmt_misc/NAME,
 * read through the proc root, so RM_PROC_ROOT fixture trees work), to
 * tell an emulated process (qemu-user and the like) by its command line.
 *
 * The kernel starts a binary that an entry matches as the entry's
 * interpreter, with the argv rewritten (fs/binfmt_misc.c): with flag P
 * (preserve argv0) [interpreter, /path/to/binary, argv0, argv1...];
 * without it [interpreter, /path/to/binary, argv1...].  So a process is
 * emulated when its argv[0] is the interpreter of a registered entry,
 * and the entry's P says where the real program's arguments start.
 *
 * rm_binfmt_parse() is pure (one entry file's text in, the entry out);
 * rm_binfmt_read_at() reads a directory of entries (the "register" and
 * "status" files are not entries).  Interpreters longer than
 * RM_BINFMT_PATH - 1 bytes and entries past RM_BINFMT_MAX are left out.
 */
#ifndef RM_BINFMT_H
#define RM_BINFMT_H

#include <stddef.h>

#define RM_BINFMT_MAX 64
#define RM_BINFMT_PATH 256

struct rm_binfmt_entry {
	char interp[RM_BINFMT_PATH];  /* the "interpreter" line's path */
	unsigned enabled : 1;         /* first line "enabled" (else "disabled") */
	unsigned preserve : 1;        /* flag P: argv0 kept after the path */
};

struct rm_binfmt {
	size_t n;
	struct rm_binfmt_entry e[RM_BINFMT_MAX];
	/* The directory's entry names when it was read (rm_binfmt_refresh_at). */
	size_t nnames;
	char names[RM_BINFMT_MAX][64];
};

/*
 * Parse one entry file (buf[0..len)).  Returns 0 and fills *e, or -1
 * when the text has no "interpreter " line (not an entry, or one whose
 * interpreter does not fit).
 */
int rm_binfmt_parse(const char *buf, size_t len, struct rm_binfmt_entry *e);

/*
 * Read every entry of the binfmt_misc directory path (relative to the
 * descriptor at, or absolute with AT_FDCWD) into *t.  Returns 0 (t->n may
 * be 0: mounted with nothing registered), or -1 with errno when the directory cannot be
 * read (binfmt_misc not mounted there reads as ENOENT: the directory
 * holds no "register" file).
 */
int rm_binfmt_read_at(int at, const char *path, struct rm_binfmt *t);

/*
 * Bring *t (read before from the same directory, or zeroed) up to date at
 * the cost of one directory listing: the entries are read again only when
 * the directory's names changed (registering an entry does not change the
 * directory's mtime).  Returns 1 when it was read again, 0 when nothing
 * changed, -1 with errno (t->n is then 0) as rm_binfmt_read_at.
 */
int rm_binfmt_refresh_at(int at, const char *path, struct rm_binfmt *t);

/* The same for this process's own: PROC_ROOT/sys/fs/binfmt_misc. */
int rm_binfmt_read(struct rm_binfmt *t);

/*
 * The entry whose interpreter is argv0[0..len) exactly (as the kernel
 * writes it), or NULL.
 */
const struct rm_binfmt_entry *rm_binfmt_find(const struct rm_binfmt *t, const char *argv0,
					     size_t len);

#endif
