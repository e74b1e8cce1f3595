# test/fuzz/fuzz.mk — libFuzzer targets of colvec (clang only).
#
# Invoked by the top-level `make fuzz` / `make fuzz-smoke` (Makefile.am) as
#   make -f <src>/test/fuzz/fuzz.mk SRCDIR=<src> OUT=<build>/fuzz <target>
# and usable by hand the same way. Targets:
#   all     the four fuzzers and the seed generator, in $(OUT)
#   seeds   seed corpora in $(OUT)/seed/<fuzzer>/ (generated, not checked in)
#   smoke   each fuzzer for $(FUZZ_SECONDS) s (one job) over its seeds plus
#           test/fuzz/regress/<fuzzer>/; fails on any crash or sanitizer report
#           (FUZZ_SEED: libFuzzer's -seed, 0 = random)
#   replay  only the regression inputs (seconds; no new inputs)
# Needs clang with libFuzzer (Debian: clang + libfuzzer-14-dev, installed by
# `tool/install-deps.sh clang libfuzzer-14-dev`) and libsqlite3-dev.

SRCDIR ?= ../..
OUT ?= fuzz-out
CC = clang
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 0
SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)
SQLITE_LIBS := $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)

SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
      -fno-omit-frame-pointer
CFLAGS_FUZZ = -std=c99 -g -O1 -Wall -Wextra -D_GNU_SOURCE -DCOLVEC_DEBUG=1 \
      -I$(SRCDIR)/include -I$(SRCDIR)/ext $(SQLITE_CFLAGS) $(SAN)

# The sources, as Makefile.am lists them (its one list of each library):
# the SQLite-free core, then the module.
am_sources = $(shell sed -n '/^$(1) = /,/^$$/p' $(SRCDIR)/Makefile.am | \
	grep -o 'ext/[a-z_0-9]*\.c' | sed 's|ext/||')
CORE_SRC := $(call am_sources,libcolvec_core_la_SOURCES)
MOD_SRC := $(call am_sources,colvec_la_SOURCES)

CORE_OBJ = $(CORE_SRC:%.c=$(OUT)/obj/%.o)
MOD_OBJ = $(MOD_SRC:%.c=$(OUT)/obj/%.o)
FUZZERS = fuzz_segment fuzz_vector fuzz_config fuzz_sql

all: check-clang $(FUZZERS:%=$(OUT)/%) $(OUT)/gen_seeds

# clang must link a libFuzzer program; on Debian the packages are installed
# when missing (tool/install-deps.sh), elsewhere the target stops here.
check-clang:
	@mkdir -p $(OUT)
	@printf 'int LLVMFuzzerTestOneInput(const unsigned char *a, unsigned long n)\n{ (void)a; (void)n; return 0; }\n' >$(OUT)/probe.c
	@$(CC) -fsanitize=fuzzer,address,undefined $(OUT)/probe.c -o $(OUT)/probe 2>/dev/null || \
	  { command -v dpkg-query >/dev/null && \
	    $(SRCDIR)/tool/install-deps.sh clang libfuzzer-14-dev && \
	    $(CC) -fsanitize=fuzzer,address,undefined $(OUT)/probe.c -o $(OUT)/probe; } || \
	  { echo "fuzz: needs clang with libFuzzer (Debian: clang libfuzzer-14-dev)"; exit 1; }

$(OUT)/obj/%.o: $(SRCDIR)/ext/%.c $(wildcard $(SRCDIR)/ext/*.h)
	@mkdir -p $(OUT)/obj
	$(CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer-no-link -DSQLITE_CORE -c $< -o $@

# The SQLite-free targets link only the core layers.
$(OUT)/fuzz_segment: $(SRCDIR)/test/fuzz/fuzz_segment.c $(CORE_OBJ)
	$(CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer $^ -o $@ -lm -lpthread
$(OUT)/fuzz_vector: $(SRCDIR)/test/fuzz/fuzz_vector.c $(CORE_OBJ)
	$(CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer $^ -o $@ -lm -lpthread

# The SQLite-facing targets link the module statically (-DSQLITE_CORE) with
# the system SQLite.
$(OUT)/fuzz_config: $(SRCDIR)/test/fuzz/fuzz_config.c $(MOD_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS_FUZZ) -DSQLITE_CORE -fsanitize=fuzzer $^ -o $@ \
	  $(SQLITE_LIBS) -lm -lpthread
$(OUT)/fuzz_sql: $(SRCDIR)/test/fuzz/fuzz_sql.c $(MOD_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS_FUZZ) -DSQLITE_CORE -fsanitize=fuzzer $^ -o $@ \
	  $(SQLITE_LIBS) -lm -lpthread

# Seed generator: real segments through the SQLite-free writer, plus
# hand-written vector, CREATE and statement-program seeds.
$(OUT)/gen_seeds: $(SRCDIR)/test/fuzz/gen_seeds.c $(CORE_OBJ)
	$(CC) $(CFLAGS_FUZZ) $^ -o $@ -lm -lpthread

seeds: $(OUT)/gen_seeds
	rm -rf $(OUT)/seed
	$(OUT)/gen_seeds $(OUT)/seed

smoke: all seeds
	SRCDIR='$(SRCDIR)' OUT='$(OUT)' FUZZ_SECONDS='$(FUZZ_SECONDS)' \
	  FUZZ_SEED='$(FUZZ_SEED)' sh $(SRCDIR)/test/fuzz/smoke.sh $(FUZZERS)

replay: all
	SRCDIR='$(SRCDIR)' OUT='$(OUT)' FUZZ_SECONDS=0 \
	  sh $(SRCDIR)/test/fuzz/smoke.sh $(FUZZERS)

clean:
	rm -rf $(OUT)

.PHONY: all check-clang seeds smoke replay clean
