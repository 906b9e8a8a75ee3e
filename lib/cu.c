/*
 * cu: see cu.h.  One pass over the arguments: options that take their
 * value as the next argument are skipped with it, the first other
 * argument with a source extension is the unit, and the fallbacks
 * (-dumpbase, -main-file-name, --crate-name, -o) are noted on the way.
 */
#include <string.h>

#include "cu.h"

struct tok {
	const char *p;
	size_t len;
};

/* gcc and clang options whose value is the next argument. */
static const char *const arg_opts[] = {
	"-o", "-x", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter",
	"-iquote", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot",
	"-imultilib", "-imultiarch", "-MF", "-MT", "-MQ", "-dumpbase", "-dumpbase-ext",
	"-dumpdir", "-auxbase", "-auxbase-strip", "-aux-info", "--param", "-Xlinker",
	"-Xassembler", "-Xpreprocessor", "-Xclang", "-mllvm", "-target", "-triple",
	"-main-file-name", "-resource-dir", "-target-cpu", "-tune-cpu", "-target-feature",
	"-target-abi", "-mrelocation-model", "-pic-level", "-internal-isystem",
	"-internal-externc-isystem", "-dependency-file", "-coverage-notes-file",
	"-coverage-data-file", "-stack-protector", "-mthread-model", "-ferror-limit",
	"-fmessage-length", "-isystem-after", "-fdebug-compilation-dir", "-L", "-l",
	"-T", "-e", "-z", "-soname", "-h", "-rpath", "-m", "-plugin", "-plugin-opt",
	"--sysroot", "-dynamic-linker", "--crate-name", "--crate-type", "--edition",
	"--out-dir", "--emit", "--cfg", "--cap-lints", "--target", "--extern",
	"-C", "--error-format", "--json", "--color", "-fltrans-output-list",
	"-fresolution", "-version-script", "--version-script", "-Map", "-A", "-u",
	"-wrapper", "-include-pch", "-serialize-diagnostic-file", "--serialize-diagnostics",
	"-split-dwarf-file", "-split-dwarf-output", "-MJ", "-ivfsoverlay",
	"-mlink-bitcode-file", "-working-directory", "-dwarf-debug-flags", "--check-cfg",
	"--print", "-flavor",
};

/* gcc's compilers proper, where -MD and -MMD take the dependency file as
 * their value (the driver's -MD takes none). */
static const char *const cc1s[] = {
	"cc1", "cc1plus", "cc1obj", "cc1objplus",
};

static const char *const src_ext[] = {
	"c", "cc", "cp", "cxx", "cpp", "CPP", "c++", "C", "m", "mm", "M", "i", "ii",
	"mi", "mii", "s", "S", "sx", "f", "f90", "f95", "for", "F", "F90", "d", "cu",
	"rs", "cppm", "ixx", "cxxm", "c++m", "ccm", "h", "hh", "hpp", "hxx", "H",
	"go", "adb", "ads",
};

static const char *const linkers[] = {
	"ld", "ld.bfd", "ld.gold", "ld.lld", "ld.mold", "lld", "ld64.lld", "mold", "collect2",
	"rust-lld", "wasm-ld",
};

/*
 * The one list of compiler and linker process names: what
 * rm-sample counts in its compilers column by default, what rm-tree
 * --compilers prints for rm-monitor, and what rm-summarize treats as a
 * compiler.  The union of the three lists the tools once had each.
 */
static const char compiler_list[] =
	"cc1,cc1plus,cc1obj,cc1objplus,clang,clang++,rustc,lto1,"
	"collect2,ld,ld.bfd,ld.gold,ld.lld,ld.mold,lld,mold,rust-lld,wasm-ld";

static int tok_is(struct tok t, const char *s)
{
	size_t n = strlen(s);
	return t.len == n && memcmp(t.p, s, n) == 0;
}

static int in_list(struct tok t, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tok_is(t, list[i]))
			return 1;
	return 0;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *rm_cu_compilers(void)
{
	return compiler_list;
}

int rm_cu_is_compiler(const char *name)
{
	size_t n = strlen(name);

	for (const char *p = compiler_list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && memcmp(p, name, n) == 0)
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Append c to out[*o] while it fits, counting it in *need either way. */
static void put_c(char *out, size_t osize, size_t *o, size_t *need, char c)
{
	if (*o + 1 < osize)
		out[(*o)++] = c;
	(*need)++;
}

size_t rm_cu_compilers_ere(char *out, size_t osize)
{
	size_t o = 0, need = 0;

	if (!out || osize == 0)
		return 0;
	put_c(out, osize, &o, &need, '^');
	put_c(out, osize, &o, &need, '(');
	for (const char *s = compiler_list; *s; s++) {
		if (*s == ',') {
			put_c(out, osize, &o, &need, '|');
			continue;
		}
		if (strchr(".+*?()[]{}|^$\\", *s))
			put_c(out, osize, &o, &need, '\\');
		put_c(out, osize, &o, &need, *s);
	}
	put_c(out, osize, &o, &need, ')');
	put_c(out, osize, &o, &need, '$');
	out[o] = '\0';
	return need;
}

/* Does t end in ".EXT" for one of the extensions in list? */
static int has_ext(struct tok t, const char *const *list, size_t n)
{
	size_t i = t.len;

	while (i > 0 && t.p[i - 1] != '.' && t.p[i - 1] != '/')
		i--;
	if (i == 0 || t.p[i - 1] != '.' || i == 1 || t.p[i - 2] == '/')
		return 0; /* no extension, or a dot file */
	struct tok e = { t.p + i, t.len - i };
	return in_list(e, list, n);
}

static int is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\0' || c == '\n';
}

/* The next argument at or after *pos; 0 at the end. */
static int next_tok(const char *s, size_t len, size_t *pos, struct tok *t)
{
	size_t i = *pos;

	while (i < len && is_sep(s[i]))
		i++;
	if (i >= len)
		return 0;
	t->p = s + i;
	while (i < len && !is_sep(s[i]))
		i++;
	t->len = (size_t)(s + i - t->p);
	*pos = i;
	return 1;
}

/* The last path component of t. */
static struct tok base_of(struct tok t)
{
	size_t i = t.len;

	while (i > 0 && t.p[i - 1] != '/')
		i--;
	t.p += i;
	t.len -= i;
	return t;
}

enum kind { K_CC, K_CC1, K_RUST, K_LTO, K_LINK };

/* What kind of program the first argument names, versions and cross
 * prefixes aside (x86_64-linux-gnu-g++-12, clang-17, ld.lld-17). */
static enum kind kind_of(struct tok prog)
{
	struct tok b = base_of(prog);
	size_t n = b.len;

	/* Drop a "-NN" or "-NN.N" version suffix. */
	size_t i = n;
	while (i > 0 && ((b.p[i - 1] >= '0' && b.p[i - 1] <= '9') || b.p[i - 1] == '.'))
		i--;
	if (i > 0 && i < n && b.p[i - 1] == '-')
		b.len = i - 1;
	if (tok_is(b, "rustc"))
		return K_RUST;
	if (tok_is(b, "lto1"))
		return K_LTO;
	if (in_list(b, cc1s, NELEM(cc1s)))
		return K_CC1;
	if (in_list(b, linkers, NELEM(linkers)))
		return K_LINK;
	if (b.len > 3 && memcmp(b.p + b.len - 3, "-ld", 3) == 0)
		return K_LINK;
	return K_CC;
}

static int put_out(struct tok t, char *out, size_t osize)
{
	size_t n = t.len < osize - 1 ? t.len : osize - 1;

	memcpy(out, t.p, n);
	out[n] = '\0';
	return n > 0;
}

/* "--opt=value" or "-oVALUE": the value part when t starts with pre. */
static int attached(struct tok t, const char *pre, struct tok *v)
{
	size_t n = strlen(pre);

	if (t.len <= n || memcmp(t.p, pre, n) != 0)
		return 0;
	v->p = t.p + n;
	v->len = t.len - n;
	return 1;
}

/* The unit is t (when not empty). */
static int found(struct tok t, struct tok *u)
{
	*u = t;
	return t.len > 0;
}

/* What cu_find gathers from a command line's options and operands. */
struct cu_seen {
	struct tok dumpbase, mainfile, output, crate;
	struct tok first_obj, crate_root;
	int end_opts, ltrans, print;
};

/* Option t of a k command line: note what it names in sc, taking its
 * value from cmd at *pos; 0 when that value is missing. */
static int cu_option(const char *cmd, size_t len, size_t *pos, enum kind k, struct tok t,
		     struct cu_seen *sc)
{
	struct tok v, *slot = NULL;

	if (tok_is(t, "--")) {
		sc->end_opts = 1;
		return 1;
	}
	if (tok_is(t, "-dumpbase"))
		slot = &sc->dumpbase;
	else if (tok_is(t, "-main-file-name"))
		slot = &sc->mainfile;
	else if (tok_is(t, "-o") || tok_is(t, "--output"))
		slot = &sc->output;
	else if (tok_is(t, "--crate-name"))
		slot = &sc->crate;
	if (tok_is(t, "-fltrans"))
		sc->ltrans = 1;
	if (tok_is(t, "--print") || attached(t, "--print=", &v))
		sc->print = 1;
	if (slot || in_list(t, arg_opts, NELEM(arg_opts)) ||
	    (k == K_CC1 && (tok_is(t, "-MD") || tok_is(t, "-MMD")))) {
		struct tok val;
		if (!next_tok(cmd, len, pos, &val))
			return 0;
		if (slot)
			*slot = val;
		return 1;
	}
	if (attached(t, "--output=", &v) || (k == K_LINK && attached(t, "-o", &v)))
		sc->output = v;
	else if (attached(t, "--crate-name=", &v))
		sc->crate = v;
	return 1;
}

/* The unit by compiler family, from what the command line held. */
static int cu_pick(enum kind k, const struct cu_seen *sc, struct tok *u)
{
	switch (k) {
	case K_RUST:
		/* rustc --print compiles nothing: cargo's probe
		 * (rustc - --crate-name ___ --print=file-names ...) is
		 * no unit. */
		if (sc->print)
			return 0;
		/* The crate by its name: every crate of a cargo workspace
		 * has a src/lib.rs, but its name is its own. */
		if (sc->crate.len)
			return found(sc->crate, u);
		return sc->crate_root.len ? found(sc->crate_root, u) : 0;
	case K_LINK:
		return sc->output.len ? found(sc->output, u) : 0;
	case K_LTO:
		/* An LTRANS partition: the object it compiles, when it is on
		 * the command line (lto-wrapper puts it in an @file unless it
		 * runs the partitions through make); else its dump name,
		 * OUTPUT.ltransN.ltrans. */
		if (sc->ltrans && sc->first_obj.len)
			return found(sc->first_obj, u);
		if (sc->dumpbase.len)
			return found(sc->dumpbase, u);
		if (sc->output.len)
			return found(sc->output, u);
		return sc->first_obj.len ? found(sc->first_obj, u) : 0;
	case K_CC:
	case K_CC1:
		break;
	}
	if (sc->ltrans && sc->first_obj.len)
		return found(sc->first_obj, u);
	if (sc->dumpbase.len && has_ext(sc->dumpbase, src_ext, NELEM(src_ext)))
		return found(sc->dumpbase, u);
	if (sc->mainfile.len)
		return found(sc->mainfile, u);
	if (sc->dumpbase.len)
		return found(sc->dumpbase, u);
	/* A driver that only links: the unit is what it makes. */
	return sc->output.len ? found(sc->output, u) : 0;
}

int rm_cu_emulator_name(const char *argv0, size_t len)
{
	struct tok b = base_of((struct tok){ argv0, len });

	if (b.len > 5 && memcmp(b.p, "qemu-", 5) == 0)
		return 1;
	for (size_t i = 1; i + 8 < b.len; i++)
		if (memcmp(b.p + i, "-binfmt-", 8) == 0)
			return 1;
	return 0;
}

size_t rm_cu_real_start(const char *cmd, size_t len, int interp, int preserve)
{
	struct tok a0, a1, a2;
	size_t pos = 0;

	if (!cmd || interp == 0 || !next_tok(cmd, len, &pos, &a0) ||
	    !next_tok(cmd, len, &pos, &a1))
		return 0;
	/* By name alone, qemu-aarch64 -L ROOT ./prog (an emulator run by
	 * hand, with its own options) is not the kernel's form. */
	if (interp < 0 && (!rm_cu_emulator_name(a0.p, a0.len) || a1.p[0] == '-'))
		return 0;
	if (!next_tok(cmd, len, &pos, &a2))
		return (size_t)(a1.p - cmd); /* no argv0 after the path */
	if (preserve < 0) {
		/* With P the kernel's path is followed by the original argv0:
		 * the same program, by base name (/usr/bin/as, as). */
		struct tok b1 = base_of(a1), b2 = base_of(a2);
		preserve = b1.len && b2.len == b1.len && memcmp(b1.p, b2.p, b1.len) == 0;
	}
	return (size_t)((preserve ? a2.p : a1.p) - cmd);
}

/* The unit of cmd[0..len) as a token of cmd; 0 when there is none.
 * interp and preserve as for rm_cu_real_start(). */
static int cu_find(const char *cmd, size_t len, int interp, int preserve, struct tok *u)
{
	struct tok t, prog;
	struct cu_seen sc = { 0 };
	size_t pos;
	enum kind k;

	if (!cmd)
		return 0;
	pos = rm_cu_real_start(cmd, len, interp, preserve);
	if (!next_tok(cmd, len, &pos, &prog))
		return 0;
	k = kind_of(prog);
	while (next_tok(cmd, len, &pos, &t)) {
		if (!sc.end_opts && t.len > 1 && t.p[0] == '-') {
			if (!cu_option(cmd, len, &pos, k, t, &sc))
				break;
			continue;
		}
		if (t.p[0] == '@')
			continue; /* a response file */
		if (k == K_RUST) {
			static const char *const rs[] = { "rs" };
			if (!sc.crate_root.len && has_ext(t, rs, 1))
				sc.crate_root = t;
			continue;
		}
		if ((k == K_CC || k == K_CC1) && has_ext(t, src_ext, NELEM(src_ext)))
			return found(t, u);
		if (!sc.first_obj.len) {
			static const char *const obj[] = { "o", "obj", "a" };
			if (has_ext(t, obj, NELEM(obj)))
				sc.first_obj = t;
		}
	}
	return cu_pick(k, &sc, u);
}

int rm_cu_source_as(const char *cmd, size_t len, int interp, int preserve, char *out,
		    size_t osize)
{
	struct tok u;

	if (!out || osize == 0)
		return 0;
	out[0] = '\0';
	return cu_find(cmd, len, interp, preserve, &u) ? put_out(u, out, osize) : 0;
}

int rm_cu_source(const char *cmd, size_t len, char *out, size_t osize)
{
	return rm_cu_source_as(cmd, len, -1, -1, out, osize);
}

size_t rm_cu_cmd_fit(char *cmd, size_t len, size_t max)
{
	static const char gap[] = " ... ";
	size_t g = sizeof(gap) - 1, keep;
	struct tok prog, u;
	size_t pos = 0;

	if (!cmd || len <= max)
		return len;
	pos = rm_cu_real_start(cmd, len, -1, -1);
	if (!next_tok(cmd, len, &pos, &prog))
		return len;
	prog = base_of(prog);
	if (prog.len >= 64)
		return len;
	char name[64];
	memcpy(name, prog.p, prog.len);
	name[prog.len] = '\0';
	if (!rm_cu_is_compiler(name) || !cu_find(cmd, len, -1, -1, &u))
		return len;
	/* The tail to keep: the whole argument that holds the unit
	 * (--output=X), and the option before it (-o X, -dumpbase X): an
	 * option whose value the unit is must stay with it. */
	const char *start = u.p, *end = u.p + u.len, *q, *p0;
	while (start > cmd && !is_sep(start[-1]))
		start--;
	for (q = start; q > cmd && is_sep(q[-1]); q--)
		;
	for (p0 = q; p0 > cmd && !is_sep(p0[-1]); p0--)
		;
	if (q > p0 && p0[0] == '-')
		start = p0;
	size_t tail = (size_t)(end - start);
	if ((size_t)(end - cmd) <= max || tail + g >= max / 2)
		return len; /* the cut keeps it, or it would leave too little else */
	/* Whole arguments only: a cut one might read as a source. */
	keep = max - g - tail;
	while (keep > 0 && !is_sep(cmd[keep]))
		keep--;
	memmove(cmd + keep + g, start, tail);
	memcpy(cmd + keep, gap, g);
	cmd[keep + g + tail] = '\0';
	return keep + g + tail;
}
