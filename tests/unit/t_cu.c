/*
 * t_cu: the compile unit named by real compiler command lines (gcc 12,
 * clang 14, rustc, lto1, linkers), cut ones, and hostile ones.  Every
 * tests/fixtures/cu/NAME.argv (a command line captured from a real build,
 * see the README there) is one more test.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "tap.h"

static const char *unit(const char *cmd)
{
	static char out[256];

	rm_cu_source(cmd, strlen(cmd), out, sizeof(out));
	return out;
}

static void test_cc1plus(void)
{
	CHECK_STR(unit("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet -imultiarch x86_64-linux-gnu "
		       "-D_GNU_SOURCE src/a.cpp -quiet -dumpbase a.cpp -dumpbase-ext .cpp "
		       "-mtune=generic -march=x86-64 -O2 -o /tmp/cc04298U.s"), "src/a.cpp");
	/* -include and -o values are never the unit. */
	CHECK_STR(unit("cc1plus -include pch.hpp -o /tmp/x.s -I inc gen/big_unit.cc"), "gen/big_unit.cc");
	CHECK_STR(unit("/usr/libexec/gcc/cc1 -quiet x.c -o x.s"), "x.c");
}

static void test_cut(void)
{
	/* Cut before the source: -dumpbase names it. */
	CHECK_STR(unit("cc1plus -quiet -dumpbase torch_unit.cpp -dumpbase-ext .cpp -mtune=gen"),
		  "torch_unit.cpp");
	CHECK_STR(unit("clang -cc1 -triple x86_64-pc-linux-gnu -emit-obj -main-file-name a.cpp -mrel"),
		  "a.cpp");
}

static void test_clang(void)
{
	CHECK_STR(unit("/usr/lib/llvm-14/bin/clang -cc1 -triple x86_64-pc-linux-gnu -emit-obj "
		       "-main-file-name a.cpp -mrelocation-model pic -pic-level 2 -resource-dir "
		       "/usr/lib/llvm-14/lib/clang/14.0.6 -o a.o -x c++ lib/a.cpp"), "lib/a.cpp");
	CHECK_STR(unit("clang++-17 -O2 -c -o obj/m.o src/m.mm"), "src/m.mm");
	CHECK_STR(unit("x86_64-linux-gnu-g++-12 -c foo.cxx"), "foo.cxx");
}

static void test_rustc(void)
{
	CHECK_STR(unit("rustc --crate-name serde --edition=2018 /r/serde-1.0/src/lib.rs --crate-type lib"),
		  "serde");
	CHECK_STR(unit("rustc --edition=2021 src/main.rs --crate-type bin"), "src/main.rs");
	CHECK_STR(unit("rustc --crate-name serde --edition=2018 --crate-t"), "serde");
	/* cargo's probe, and any --print, compiles nothing. */
	CHECK_STR(unit("rustc - --crate-name ___ --print=file-names --crate-type bin"), "");
	CHECK_STR(unit("rustc - --crate-name ___ --print file-names"), "");
	CHECK_STR(unit("rustc -vV"), "");
	CHECK_STR(unit("rust-lld -flavor gnu -o target/debug/app a.o"), "target/debug/app");
	CHECK_STR(unit("wasm-ld -o out.wasm a.o"), "out.wasm");
}

static void test_link(void)
{
	CHECK_STR(unit("/usr/bin/ld -plugin /x/liblto_plugin.so --eh-frame-hdr -m elf_x86_64 "
		       "-o build/app /lib/crt1.o main.o -lstdc++"), "build/app");
	CHECK_STR(unit("ld.lld-17 --output=bin/tool a.o"), "bin/tool");
	CHECK_STR(unit("mold -obin/m a.o"), "bin/m");
	CHECK_STR(unit("/usr/lib/gcc/x86_64-linux-gnu/12/collect2 -o prog a.o"), "prog");
	/* An LTRANS partition: its input object, else its dump name. */
	CHECK_STR(unit("lto1 -quiet -dumpbase ./prog.ltrans0.ltrans -fltrans -o /tmp/c.s /tmp/c.ltrans0.o"),
		  "/tmp/c.ltrans0.o");
	CHECK_STR(unit("lto1 -quiet -dumpbase ./prog.ltrans0.ltrans -fltrans @/tmp/ccqO9WOG -o /tmp/c.s"),
		  "./prog.ltrans0.ltrans");
	/* A driver that only links names its output. */
	CHECK_STR(unit("g++ -o app main.o util.o"), "app");
}

static void test_nul_separated(void)
{
	static const char cmd[] = "cc1plus\0-quiet\0one.cpp\0-o\0/tmp/x.s";
	char out[64];

	CHECK(rm_cu_source(cmd, sizeof(cmd) - 1, out, sizeof(out)) == 1);
	CHECK_STR(out, "one.cpp");
}

static void test_fit(void)
{
	char cmd[] = "cc1 -quiet -I aaaaaaaaaa -I bbbbbbbbbb -MD x.d -I cccccccccc dir/x.c -o x.s";
	char tool[] = "make -j2 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa dir/x.c";
	size_t len = strlen(cmd), n;

	CHECK(rm_cu_cmd_fit(cmd, len, len) == len);
	n = rm_cu_cmd_fit(cmd, len, 48);
	CHECK(n <= 48);
	CHECK_STR(cmd, "cc1 -quiet -I aaaaaaaaaa -I ... dir/x.c");
	CHECK_STR(unit(cmd), "dir/x.c");
	/* The option whose value the unit is stays with it. */
	char link[] = "collect2 -plugin /usr/lib/liblto_plugin.so -dynamic-linker /lib64/ld.so -pie -o obj/app a.o";
	n = rm_cu_cmd_fit(link, strlen(link), 48);
	CHECK(n <= 48);
	CHECK_STR(link, "collect2 -plugin ... -o obj/app");
	CHECK_STR(unit(link), "obj/app");
	char lld[] = "ld.lld -plugin /usr/lib/liblto_plugin.so -dynamic-linker /lib64/ld.so --output=bin/t a.o";
	rm_cu_cmd_fit(lld, strlen(lld), 40);
	CHECK_STR(lld, "ld.lld -plugin ... --output=bin/t");
	CHECK_STR(unit(lld), "bin/t");
	/* Not a compiler: left for the caller to cut. */
	CHECK(rm_cu_cmd_fit(tool, strlen(tool), 20) == strlen(tool));
	CHECK(rm_cu_cmd_fit(NULL, 5, 2) == 5);
}

static void test_none(void)
{
	char out[8] = "junk";

	CHECK(rm_cu_source("", 0, out, sizeof(out)) == 0);
	CHECK_STR(out, "");
	CHECK(rm_cu_source("cc1plus -quiet -o", 17, out, sizeof(out)) == 0);
	CHECK(rm_cu_source("cc1plus .cpp dir/.c", 19, out, sizeof(out)) == 0);
	CHECK(rm_cu_source(NULL, 5, out, sizeof(out)) == 0);
	/* Bounded: a long name is cut to the buffer, NUL-terminated. */
	CHECK(rm_cu_source("cc1 abcdefghijkl.c", 18, out, sizeof(out)) == 1);
	CHECK_STR(out, "abcdefg");
	/* len is honoured even without a NUL. */
	CHECK(rm_cu_source("cc1 a.c", 5, out, sizeof(out)) == 0);
}

static void test_is_compiler(void)
{
	CHECK(rm_cu_is_compiler("cc1plus"));
	CHECK(rm_cu_is_compiler("cc1objplus"));
	CHECK(rm_cu_is_compiler("ld.lld"));
	CHECK(rm_cu_is_compiler("collect2"));
	CHECK(rm_cu_is_compiler("mold"));
	CHECK(rm_cu_is_compiler("rust-lld"));
	CHECK(rm_cu_is_compiler("ld.mold"));
	CHECK(rm_cu_is_compiler("wasm-ld"));
	CHECK(!rm_cu_is_compiler("make"));
	CHECK(!rm_cu_is_compiler("cc1plu"));
	CHECK(!rm_cu_is_compiler("cc1plus,cc1"));
	CHECK(!rm_cu_is_compiler(""));
}

static void test_compiler_ere(void)
{
	char ere[512], small[8];
	size_t need = rm_cu_compilers_ere(ere, sizeof(ere));

	CHECK(need == strlen(ere));
	CHECK(strncmp(ere, "^(cc1|cc1plus|", 14) == 0);
	CHECK(strstr(ere, "|clang\\+\\+|") != NULL);
	CHECK(strstr(ere, "|ld\\.lld|") != NULL);
	CHECK(strcmp(ere + need - 2, ")$") == 0);
	/* The list, commas as |, in ^(...)$, with ++ and 4 dots escaped. */
	CHECK(need == strlen(rm_cu_compilers()) + 4 + 2 + 4);
	CHECK(rm_cu_compilers_ere(small, sizeof(small)) == need);
	CHECK_STR(small, "^(cc1|c");
}

/* Under qemu-user through binfmt_misc: argv[0] is the interpreter, then the binary's
 * path, then with flag P the original argv0. */
static void test_emulated(void)
{
	static const char p_as[] = "/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/bin/as as -I include "
				   "-EL -mabi=lp64 -o obj/core/core_0.o /tmp/ccX.s";
	static const char nop[] = "/usr/bin/qemu-aarch64-static /usr/lib/gcc/aarch64-linux-gnu/12/cc1 "
				  "-quiet -MD obj/a.d src/a.c -o /tmp/a.s";
	static const char box[] = "/usr/local/bin/box64 /opt/x/cc1plus /opt/x/cc1plus -MD a.d a.cpp";
	size_t at;

	CHECK(rm_cu_emulator_name("/usr/libexec/qemu-binfmt/aarch64-binfmt-P", 41));
	CHECK(rm_cu_emulator_name("qemu-aarch64-static", 19));
	CHECK(rm_cu_emulator_name("/usr/bin/qemu-riscv64", 21));
	CHECK(!rm_cu_emulator_name("/usr/bin/qemu", 13));
	CHECK(!rm_cu_emulator_name("/usr/bin/cc1plus", 16));
	CHECK(!rm_cu_emulator_name("-binfmt-P", 9));
	CHECK(!rm_cu_emulator_name("/qemu-x/cc1", 11));
	/* With P: the real argv starts at the original argv0. */
	at = rm_cu_real_start(p_as, strlen(p_as), -1, -1);
	CHECK(strncmp(p_as + at, "as -I include", 13) == 0);
	CHECK(rm_cu_real_start(p_as, strlen(p_as), 1, 1) == at);
	/* Without P: at the path the kernel puts in argv0's place. */
	at = rm_cu_real_start(nop, strlen(nop), -1, -1);
	CHECK(strncmp(nop + at, "/usr/lib/gcc/aarch64-linux-gnu/12/cc1 -quiet", 44) == 0);
	CHECK_STR(unit(nop), "src/a.c");
	CHECK(rm_cu_real_start(nop, strlen(nop), 1, 0) == at);
	/* Told it is not emulated, nothing is skipped. */
	CHECK(rm_cu_real_start(p_as, strlen(p_as), 0, -1) == 0);
	/* An interpreter known from its registration, whatever its name. */
	CHECK(rm_cu_real_start(box, strlen(box), -1, -1) == 0);
	CHECK_STR(unit(box), "a.d");
	char out[64];
	CHECK(rm_cu_source_as(box, strlen(box), 1, -1, out, sizeof(out)) == 1);
	CHECK_STR(out, "a.cpp");
	/* qemu run by hand with its own options is not the kernel's form. */
	CHECK(rm_cu_real_start("qemu-aarch64 -L /usr/aarch64-linux-gnu ./cc1 x.c", 48, -1, -1) == 0);
	/* The interpreter alone, or with the path only. */
	CHECK(rm_cu_real_start("qemu-aarch64-static", 19, -1, -1) == 0);
	CHECK(rm_cu_real_start("qemu-aarch64-static /bin/true", 29, -1, -1) == 20);
	CHECK(rm_cu_real_start("qemu-aarch64-static /bin/true", 29, 1, 1) == 20);
	/* A compiler's long emulated line is fitted by its real program. */
	char big[700];
	int o = snprintf(big, sizeof(big), "%s", "/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus -quiet");
	while (o < 600)
		o += snprintf(big + o, sizeof(big) - (size_t)o, " -I inc/dir%d", o);
	o += snprintf(big + o, sizeof(big) - (size_t)o, " -MD obj/u.d src/u.cpp -o /tmp/u.s");
	size_t n = rm_cu_cmd_fit(big, (size_t)o, 512);
	CHECK(n <= 512);
	CHECK(strncmp(big, "/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/lib/gcc/", 55) == 0);
	CHECK(rm_cu_source(big, n, out, sizeof(out)) == 1);
	CHECK_STR(out, "src/u.cpp");
}

static void test_fixtures_missing(void)
{
	CHECK(0);
}

/* The fixture a test reads, and how many were cut to fit 512 bytes. */
static char fx_path[4096];
static int fx_fitted;

/* Read the fixture at fx_path: the expected unit into want, the arguments
 * joined by NULs into *nul and by spaces into *sp (NULL when an argument
 * holds a space).  Returns the joined length, or -1. */
static char fx_real[4096];

static long fx_read(char *want, size_t wsize, char **nul, char **sp)
{
	FILE *f = fopen(fx_path, "r");
	char line[65536];
	size_t len = 0, cap = 1 << 16;
	int header = 1, has_space = 0, have_unit = 0;

	*nul = malloc(cap);
	*sp = malloc(cap);
	if (!f || !*nul || !*sp) {
		if (f)
			fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		line[n] = '\0';
		if (header && strncmp(line, "# ", 2) == 0) {
			if (strncmp(line, "# unit: ", 8) == 0) {
				size_t w = n - 8 < wsize - 1 ? n - 8 : wsize - 1;
				memcpy(want, line + 8, w);
				want[w] = '\0';
				have_unit = 1;
			}
			if (strncmp(line, "# real: ", 8) == 0 && n - 8 < sizeof(fx_real))
				memcpy(fx_real, line + 8, n - 7);
			continue;
		}
		header = 0;
		if (len + n + 1 > cap)
			break; /* cap bytes is far more than any fixture holds */
		if (len) {
			(*nul)[len] = '\0';
			(*sp)[len] = ' ';
			len++;
		}
		memcpy(*nul + len, line, n);
		memcpy(*sp + len, line, n);
		has_space |= strchr(line, ' ') != NULL;
		len += n;
	}
	fclose(f);
	if (has_space) {
		free(*sp);
		*sp = NULL;
	}
	return have_unit && want[0] && len ? (long)len : -1;
}

static void fixture(void)
{
	char want[4096], got[4096];
	char *nul = NULL, *sp = NULL;
	long len;

	fx_real[0] = '\0';
	len = fx_read(want, sizeof(want), &nul, &sp);

	if (len < 0) {
		printf("#   %s: unreadable, or no \"# unit: \" line or no argv\n", fx_path);
		CHECK(len >= 0);
	} else if (strcmp(want, "(none)") == 0) {
		/* A command line that compiles nothing: no unit at all. */
		CHECK(rm_cu_source(nul, (size_t)len, got, sizeof(got)) == 0);
		CHECK_STR(got, "");
		if (sp)
			CHECK(rm_cu_source(sp, (size_t)len, got, sizeof(got)) == 0);
	} else {
		CHECK(rm_cu_source(nul, (size_t)len, got, sizeof(got)) == 1);
		CHECK_STR(got, want);
		/* An emulated command line: the real program's argv0 is found
		 * by the interpreter's name and by the kernel's rule alike. */
		size_t at = rm_cu_real_start(nul, (size_t)len, -1, -1);
		size_t rl = strlen(fx_real);
		if (fx_real[0]) {
			CHECK(at > 0 && (size_t)len - at >= rl && memcmp(nul + at, fx_real, rl) == 0 &&
			      nul[at + rl] == '\0');
			int p = rm_cu_real_start(nul, (size_t)len, 1, 1) == at;
			CHECK(rm_cu_real_start(nul, (size_t)len, 1, p) == at);
			CHECK(rm_cu_source_as(nul, (size_t)len, 1, p, got, sizeof(got)) == 1);
			CHECK_STR(got, want);
		} else {
			CHECK(at == 0);
		}
		if (sp) {
			CHECK(rm_cu_source(sp, (size_t)len, got, sizeof(got)) == 1);
			CHECK_STR(got, want);
			/* Fitted into rm-tree's 512-byte cmd column, a compiler's
			 * command line keeps its unit. */
			size_t n = rm_cu_cmd_fit(sp, (size_t)len, 512);
			CHECK(n == (size_t)len || n <= 512);
			if (n <= 512) {
				fx_fitted += n < (size_t)len;
				CHECK(rm_cu_source(sp, n, got, sizeof(got)) == 1);
				CHECK_STR(got, want);
			}
		}
	}
	free(nul);
	free(sp);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* One test per tests/fixtures/cu/NAME.argv, named cu/NAME.argv. */
static void run_fixtures(void)
{
	const char *top = getenv("RM_TOP");
	char dir[2048], name[300];
	struct dirent **ents;
	int n, found = 0;

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/cu", top && *top ? top : ".");
	n = scandir(dir, &ents, NULL, by_name);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);
		if (l > 5 && strcmp(ents[i]->d_name + l - 5, ".argv") == 0) {
			snprintf(fx_path, sizeof(fx_path), "%s/%s", dir, ents[i]->d_name);
			snprintf(name, sizeof(name), "cu/%s", ents[i]->d_name);
			tap_run(name, fixture);
			found++;
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	/* The libtool, CMake and clang -cc1 lines put the source past 512 bytes. */
	if (fx_fitted < 3) {
		printf("#   only %d fixtures needed fitting\n", fx_fitted);
		tap_run("long command lines fitted", test_fixtures_missing);
	}
	/* The directory holds some 30 cases: fewer means it was not found. */
	if (found < 20) {
		printf("#   %s: %d fixtures\n", dir, found);
		tap_run("fixtures found", test_fixtures_missing);
	}
}

int main(void)
{
	RUN(test_cc1plus);
	RUN(test_cut);
	RUN(test_clang);
	RUN(test_rustc);
	RUN(test_link);
	RUN(test_nul_separated);
	RUN(test_fit);
	RUN(test_none);
	RUN(test_is_compiler);
	RUN(test_compiler_ere);
	RUN(test_emulated);
	run_fixtures();
	return tap_done();
}
