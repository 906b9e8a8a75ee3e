/*
 * t_cu: the compile unit named by real compiler command lines (gcc 12,
 * clang 14, rustc, lto1, linkers), cut ones, and hostile ones.
 */
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
		  "/r/serde-1.0/src/lib.rs");
	CHECK_STR(unit("rustc --crate-name serde --edition=2018 --crate-t"), "serde");
}

static void test_link(void)
{
	CHECK_STR(unit("/usr/bin/ld -plugin /x/liblto_plugin.so --eh-frame-hdr -m elf_x86_64 "
		       "-o build/app /lib/crt1.o main.o -lstdc++"), "build/app");
	CHECK_STR(unit("ld.lld-17 --output=bin/tool a.o"), "bin/tool");
	CHECK_STR(unit("mold -obin/m a.o"), "bin/m");
	CHECK_STR(unit("/usr/lib/gcc/x86_64-linux-gnu/12/collect2 -o prog a.o"), "prog");
	CHECK_STR(unit("lto1 -quiet -dumpbase ./prog.ltrans0.ltrans -fltrans -o /tmp/c.s /tmp/c.ltrans0.o"),
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
	CHECK(rm_cu_is_compiler("ld.lld"));
	CHECK(!rm_cu_is_compiler("make"));
	CHECK(!rm_cu_is_compiler("cc1plu"));
}

int main(void)
{
	RUN(test_cc1plus);
	RUN(test_cut);
	RUN(test_clang);
	RUN(test_rustc);
	RUN(test_link);
	RUN(test_nul_separated);
	RUN(test_none);
	RUN(test_is_compiler);
	return tap_done();
}
