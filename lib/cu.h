/*
 * cu: which compile unit a compiler process is working on, from its
 * command line alone.  rm_cu_source() takes the command line as one
 * string (arguments separated by spaces, tabs or NULs, as rm-tree's cmd
 * column or /proc/PID/cmdline hold it) and names the unit: for gcc's
 * cc1, cc1plus, cc1obj and cc1objplus, for the gcc, g++, clang and
 * clang++ drivers and clang -cc1, the source file compiled, as written
 * (a relative path stays relative), never a value of -MD/-MMD (cc1's
 * dependency file), -MF, -MT, -MQ, -o, -include, -I, -D and the like;
 * for rustc, --crate-name, else the crate root (.rs), and none for rustc
 * --print (cargo's probe, --crate-name ___); for an lto1 LTRANS
 * partition (-fltrans), its input object when it is on the command line,
 * else -dumpbase (OUTPUT.ltransN.ltrans); for lto1 -fwpa, -dumpbase; for
 * the linkers (ld, ld.bfd, ld.gold, ld.lld, ld.mold, lld, mold,
 * collect2, rust-lld, wasm-ld), the -o output.  A command line cut short (rm-tree bounds it)
 * falls back to -dumpbase / -main-file-name / --crate-name.  Pure and
 * bounded: it reads at most len bytes, never allocates, and always
 * NUL-terminates out.  tests/fixtures/cu/ holds real command lines.
 *
 * An emulated command line (qemu-user through binfmt_misc) starts with
 * the interpreter: [interpreter, /path/to/binary, argv0, argv1...] with
 * the entry's flag P, [interpreter, /path/to/binary, argv1...] without
 * (see lib/binfmt).  The unit is named from the real program's part, its
 * kind from the real program's name: rm_cu_source() and rm_cu_cmd_fit()
 * know an interpreter by its name (qemu-*, *-binfmt-*) and P by whether
 * argv[2] is argv[1]'s program again; rm_cu_source_as() is told.
 *
 * It also holds the one list of compiler and linker names the tools
 * count (rm-sample's compilers column, rm-tree --compilers, rm-monitor).
 */
#ifndef RM_CU_H
#define RM_CU_H

#include <stddef.h>

/* The compiler and linker names, comma-separated (a static string). */
const char *rm_cu_compilers(void);

/* Is name (a process comm) one of rm_cu_compilers()? */
int rm_cu_is_compiler(const char *name);

/*
 * The names as an anchored ERE, "^(cc1|cc1plus|...|clang\+\+|...)$", into
 * out (osize bytes, always NUL-terminated).  Returns the length the whole
 * ERE needs, as snprintf does.
 */
size_t rm_cu_compilers_ere(char *out, size_t osize);

/*
 * The unit of the command line cmd[0..len) into out (osize bytes).
 * Returns 1 when one was found, 0 when not (out is then "").
 */
int rm_cu_source(const char *cmd, size_t len, char *out, size_t osize);

/*
 * Does argv0[0..len) name an emulator by its base name: qemu-* (qemu-
 * aarch64-static) or *-binfmt-* (Debian's aarch64-binfmt-P)?
 */
int rm_cu_emulator_name(const char *argv0, size_t len);

/*
 * The byte offset in cmd[0..len) where the real program's command line
 * starts (its argv0: with P the original argv0, without P the binary's
 * path, which the kernel puts in argv0's place), or 0 when argv[0] is not
 * an interpreter.  interp: 1 argv[0] is known to be one (a registered
 * entry's, lib/binfmt), 0 known not to be, -1 unknown: decided by its
 * name (rm_cu_emulator_name, with argv[1] not an option).  preserve: the
 * entry's flag P (1 or 0), or -1 unknown: P is taken when argv[2]'s base
 * name equals argv[1]'s.
 */
size_t rm_cu_real_start(const char *cmd, size_t len, int interp, int preserve);

/* rm_cu_source() with interp and preserve as for rm_cu_real_start(). */
int rm_cu_source_as(const char *cmd, size_t len, int interp, int preserve, char *out,
		    size_t osize);

/*
 * Fit a compiler's command line cmd[0..len) into max bytes without losing
 * its unit: when cmd is longer than max, its program is one of
 * rm_cu_compilers() and the unit lies past max bytes (libtool and CMake
 * put the source after a kilobyte of -I and -D), rewrite cmd in place as
 * its first bytes, " ... " and the unit, max bytes in all.  Returns the
 * new length (len when nothing changed; the caller then cuts at max).
 */
size_t rm_cu_cmd_fit(char *cmd, size_t len, size_t max);

#endif
