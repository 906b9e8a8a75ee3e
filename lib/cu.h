/*
 * cu: which compile unit a compiler process is working on, from its
 * command line alone.  rm_cu_source() takes the command line as one
 * string (arguments separated by spaces, tabs or NULs, as rm-tree's cmd
 * column or /proc/PID/cmdline hold it) and names the unit: for gcc's
 * cc1, cc1plus and cc1obj, for the gcc, g++, clang and clang++ drivers
 * and clang -cc1, the source file compiled; for rustc, the crate root
 * (.rs), else --crate-name; for lto1, the -o output or the first object;
 * for the linkers (ld, ld.gold, ld.lld, lld, mold, collect2), the -o
 * output.  A command line cut short (rm-tree bounds it) falls back to
 * -dumpbase / -main-file-name / --crate-name.  Pure and bounded: it reads
 * at most len bytes, never allocates, and always NUL-terminates out.
 */
#ifndef RM_CU_H
#define RM_CU_H

#include <stddef.h>

/* Is name (a process comm) one of the compiler or linker names above? */
int rm_cu_is_compiler(const char *name);

/*
 * The unit of the command line cmd[0..len) into out (osize bytes).
 * Returns 1 when one was found, 0 when not (out is then "").
 */
int rm_cu_source(const char *cmd, size_t len, char *out, size_t osize);

#endif
