# rm-tools: see README.md.  `make` builds bin/, `make check` runs every test.
# GNU make.  Variables for packagers first; the warnings live in WARN so
# that `make CFLAGS=...` keeps them.

VERSION   = 0.1.0
PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANDIR    = $(PREFIX)/share/man
DOCDIR    = $(PREFIX)/share/doc/rm-tools
COMPDIR   = $(PREFIX)/share/bash-completion/completions
# What `make install` puts in place besides the commands: man pages, bash
# completions (scripts/completions/NAME completes the command NAME, as
# bash-completion loads it by name), and the guides with the README.
MANPAGES  = $(notdir $(wildcard docs/*.1))
COMPS     = $(notdir $(wildcard scripts/completions/*))
DOCS      = $(wildcard README.md docs/*.md)
# The wrappers' shared helpers (scripts/wrapper-lib.sh): sourced, not run, so not in BINDIR
# but in PKGLIBDIR, as git keeps git-sh-setup in its exec path.  bin/ has a copy beside the
# commands; an installed wrapper finds it at the path from BINDIR to PKGLIBDIR, which
# install writes on the wrapper's RM_LIB_REL line (relative: DESTDIR and a symlinked or
# moved tree keep working).
PKGLIBDIR = $(PREFIX)/lib/rm-tools
WRAPLIB   = wrapper-lib.sh
LIB_REL   = $(shell realpath -m --relative-to='$(BINDIR)' '$(PKGLIBDIR)')
DESTDIR   =

CC        = cc
CFLAGS    = -O2 -g
WARN      = -Wall -Wextra -Wshadow -Wformat=2 -Wpointer-arith -Wvla
STD       = -std=gnu11 -D_GNU_SOURCE
CPPFLAGS  =
LDFLAGS   =
# --as-needed: a command that uses no libm function does not map libm.
LDLIBS    = -Wl,--as-needed -lm -ldl

# make check SAN=1: AddressSanitizer + UndefinedBehaviorSanitizer build of
# everything the tests run, in its own object tree.
# make STATIC=1: static binaries (build/static), which run in any image of
# the machine's architecture (a container with another libc, or none):
# no NVML in rm-gpu (dlopen in a static glibc binary needs that glibc's own
# shared libraries at run time), no name service call anywhere.
SAN       =
STATIC    =
ifeq ($(SAN)$(STATIC),11)
$(error SAN=1 and STATIC=1 do not go together: ASan needs a dynamic binary)
endif
ifeq ($(SAN),1)
FLAVOR    = san
SANFLAGS  = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(STATIC),1)
FLAVOR    = static
SANFLAGS  = -DRM_STATIC
else
FLAVOR    = std
SANFLAGS  =
endif
STATICLD  = $(if $(filter 1,$(STATIC)),-static)
BUILD     = build/$(FLAVOR)
ALL_CFLAGS = $(STD) $(WARN) $(CFLAGS) $(SANFLAGS) -Ilib -DRM_VERSION='"$(VERSION)"' -MMD -MP

LIB_SRC   = $(wildcard lib/*.c)
LIB_OBJ   = $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o)
LIBA      = $(BUILD)/librmtools.a

# A command is src/rm-x.c, or src/rm-x/*.c once it outgrows one file.
SRC_ONE   = $(wildcard src/rm-*.c)
SRC_DIRS  = $(patsubst %/,%,$(wildcard src/rm-*/))
PROGS     = $(sort $(SRC_ONE:src/%.c=%) $(SRC_DIRS:src/%=%))
SCRIPTS   = $(notdir $(wildcard scripts/rm-* scripts/resource-monitor.sh))

UNIT_SRC  = $(wildcard tests/unit/t_*.c)
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_HELPERS_SRC = $(wildcard tests/helpers/*.c)
TEST_HELPERS = $(TEST_HELPERS_SRC:tests/helpers/%.c=$(BUILD)/tests/%)
# Stub shared libraries the tests load in place of real ones (NVML).
STUB_SRC  = $(wildcard tests/stubs/*.c)
STUBS     = $(STUB_SRC:tests/stubs/%.c=$(BUILD)/tests/%.so)
# libFuzzer targets: tests/fuzz/fz_NAME.c, run by `make fuzz`.  Undefined
# behaviour (signed overflow, a bad float cast) aborts: a crash, kept.
FUZZ_SRC  = $(wildcard tests/fuzz/fz_*.c)
FUZZ_BIN  = $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_CC   = clang
FUZZ_SECONDS = 10

.PHONY: all check check-long lint bench install uninstall clean fuzz man-synopsis
.SUFFIXES:

all: bin-stamp

# bin/ always holds the flavour built last: copy only what changed.
bin-stamp: $(PROGS:%=$(BUILD)/bin/%) $(SCRIPTS:%=scripts/%) scripts/$(WRAPLIB)
	@mkdir -p bin
	@# Copy then rename, so a binary that is running is replaced, not refused.
	@for p in $(PROGS); do cmp -s $(BUILD)/bin/$$p bin/$$p || { cp $(BUILD)/bin/$$p bin/.$$p.new && mv -f bin/.$$p.new bin/$$p; }; done
	@for s in $(SCRIPTS); do cmp -s scripts/$$s bin/$$s || { cp scripts/$$s bin/.$$s.new && chmod 755 bin/.$$s.new && mv -f bin/.$$s.new bin/$$s; }; done
	@cmp -s scripts/$(WRAPLIB) bin/$(WRAPLIB) || { cp scripts/$(WRAPLIB) bin/.$(WRAPLIB).new && chmod 644 bin/.$(WRAPLIB).new && mv -f bin/.$(WRAPLIB).new bin/$(WRAPLIB); }

.PHONY: bin-stamp

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

define prog_rule
$(BUILD)/bin/$(1): $(patsubst src/%.c,$(BUILD)/src/%.o,$(wildcard src/$(1).c src/$(1)/*.c)) $(LIBA)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $$(LDFLAGS) $$(STATICLD) -o $$@ $$(filter %.o,$$^) $(LIBA) $$(LDLIBS)
endef
$(foreach p,$(PROGS),$(eval $(call prog_rule,$(p))))

$(BUILD)/tests/%: tests/unit/%.c $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS)

# Test instruments (memhog holds an exact amount of memory) are built
# without the sanitizers: ASan's shadow memory would be in what they hold.
$(BUILD)/tests/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

# A stub may #include another: each is rebuilt when any of them changes.
$(BUILD)/tests/%.so: tests/stubs/%.c $(STUB_SRC)
	@mkdir -p $(@D)
	$(CC) $(STD) $(WARN) $(CFLAGS) -fPIC -shared -o $@ $<

# Fuzzers link the lib sources directly, built with the fuzzer's flags.
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Ilib -o $@ $< $(LIB_SRC) $(LDLIBS)

fuzz: $(FUZZ_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh $(FUZZ_BIN)

-include $(LIB_OBJ:.o=.d) $(wildcard $(BUILD)/src/*.d $(BUILD)/src/*/*.d)

# The suite: C unit tests, every bats test not tagged slow (files that
# share no state side by side), shellcheck.  check-long: the tests tagged
# slow (`# bats test_tags=slow`).  Last line: N passed, N failed, N skipped.
# make check T=NAME: only tests/NAME.bats and the unit tests of the lib
# modules NAME's command links (T=rm-gpu: rm-gpu.bats, t_gpu, t_tick...);
# T may name several files.
T =
check: all $(UNIT_BIN) $(TEST_HELPERS) $(STUBS)
	@RM_BUILD=$(BUILD) RM_FLAVOR=$(FLAVOR) VALGRIND=$(VALGRIND) bash tests/run.sh $(foreach t,$(T),--for $(t))

check-long: all $(TEST_HELPERS) $(STUBS)
	@RM_BUILD=$(BUILD) RM_FLAVOR=$(FLAVOR) VALGRIND=$(VALGRIND) bash tests/run.sh --long

lint:
	shellcheck -x scripts/rm-* scripts/*.sh docs/*.sh tests/*.sh tests/test_helper/*.bash .ci/run

# Rewrite each man page's SYNOPSIS from its command's --help usage lines
# (docs/synopsis.sh), so a page says what the option table says;
# tests/manpages.bats fails while one is not rewritten.
man-synopsis: all
	bash docs/synopsis.sh bin $(wildcard docs/rm-*.1)

bench: all $(TEST_HELPERS) $(STUBS)
	@RM_BUILD=$(BUILD) bash tests/bench/run.sh

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPDIR) $(DESTDIR)$(DOCDIR)
	for p in $(PROGS); do cp bin/$$p $(DESTDIR)$(BINDIR)/$$p; chmod 755 $(DESTDIR)$(BINDIR)/$$p; done
	for s in $(SCRIPTS); do sed 's|^RM_LIB_REL=.*|RM_LIB_REL=$(LIB_REL)|' bin/$$s >$(DESTDIR)$(BINDIR)/$$s; chmod 755 $(DESTDIR)$(BINDIR)/$$s; done
	cp bin/$(WRAPLIB) $(DESTDIR)$(PKGLIBDIR)/$(WRAPLIB); chmod 644 $(DESTDIR)$(PKGLIBDIR)/$(WRAPLIB)
	for m in $(MANPAGES); do cp docs/$$m $(DESTDIR)$(MANDIR)/man1/$$m; chmod 644 $(DESTDIR)$(MANDIR)/man1/$$m; done
	for c in $(COMPS); do cp scripts/completions/$$c $(DESTDIR)$(COMPDIR)/$$c; chmod 644 $(DESTDIR)$(COMPDIR)/$$c; done
	for d in $(DOCS); do cp $$d $(DESTDIR)$(DOCDIR)/$${d##*/}; chmod 644 $(DESTDIR)$(DOCDIR)/$${d##*/}; done

uninstall:
	for p in $(PROGS) $(SCRIPTS); do rm -f $(DESTDIR)$(BINDIR)/$$p; done
	rm -f $(DESTDIR)$(PKGLIBDIR)/$(WRAPLIB)
	rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null || true
	for m in $(MANPAGES); do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	for c in $(COMPS); do rm -f $(DESTDIR)$(COMPDIR)/$$c; done
	for d in $(DOCS); do rm -f $(DESTDIR)$(DOCDIR)/$${d##*/}; done
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build bin bin-stamp
