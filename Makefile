# tcc - top-level Makefile.  `make` builds tcc-gen, tcc-sim and tcc-grade;
# `make check` runs the Check suites, the golden/bad-input/CLI tests and the
# install test, then the tests again under ASan+UBSan and, built with clang,
# the golden and CLI tests; `make install` (PREFIX, DESTDIR) installs the
# commands, their man pages and the docs.
# Dependencies come from pkg-config (glib-2.0, yaml-0.1, check); re2c generates
# the lexer; GLPK has no .pc file on Debian and is linked with -lglpk
# (statically when libglpk.a is there: GLPK_LIBS below).

PKGS      := glib-2.0 yaml-0.1 json-glib-1.0
# cairo draws tcc-sim --plot (src/sim/plot.c); fontconfig frees its font
# caches at the end (plot_release_fonts, for ASan's leak check)
PKGS      += cairo fontconfig
# gmodule loads the plot module (tcc-sim-plot.so, below) for --plot only;
# the no-export variant: the commands need not export their symbols to it
PKGS      += gmodule-no-export-2.0
CC        ?= cc
BUILD     ?= build
OPT       ?= -O3
SAN       ?=
CFLAGS    ?=
# The program hash (SHA-256, src/sim/asm_parser.c) comes from OpenSSL's
# libcrypto, which uses the CPU's SHA instructions.
PKGS      += libcrypto
# Our flags, then the user's CFLAGS (never modified, so sub-makes see the
# user's value).  Include paths by component: src/spec holds the public
# tables of the machine, its instructions and the workloads (machine.h,
# ops.h, ops.def, workload.h); the simulator sees src/sim too, the
# compiler's objects only its own directories, so they cannot reach the
# simulator's internals.  Commands and tests see everything.
BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $(OPT) -g \
             -ffp-contract=off $(SAN) $(shell pkg-config --cflags $(PKGS))
SIM_INC   := -Isrc/spec -Isrc/sim -I$(BUILD)
GEN_INC   := -Isrc/spec -Isrc/frontend -Isrc/ir -Isrc/lower -Isrc/passes -Isrc/fit -Isrc/backend -Isrc/report -Isrc/tools
SIM_CFLAGS := $(BASE_CFLAGS) $(SIM_INC) $(CFLAGS)
GEN_CFLAGS := $(BASE_CFLAGS) $(GEN_INC) $(CFLAGS)
ALL_CFLAGS := $(BASE_CFLAGS) $(SIM_INC) $(GEN_INC) $(CFLAGS)
# GLPK (placement.solver: ilp) is linked statically when the C library
# directory has libglpk.a (Debian's libglpk-dev ships it): tcc-gen then
# loads 17 shared libraries instead of 22 (no libglpk, amd, colamd,
# suitesparseconfig, gmp) and starts ~1 ms sooner (docs/dependencies.md):
# on this VM each library costs page-table work (relocation, RELRO).
# The archive's own needs follow it: amd, colamd, gmp and zlib (libglpk-dev
# depends on their -dev packages) and libltdl (libglpk40 depends on
# libltdl7, which has no -dev link).  --as-needed: each command records only
# the libraries it calls (tcc-sim: no GLPK, no YAML).
GLPK_A    := $(shell $(CC) -print-file-name=libglpk.a 2>/dev/null)
ifeq ($(GLPK_A),libglpk.a)
GLPK_LIBS := -lglpk
else
GLPK_LIBS := -Wl,-Bstatic -lglpk -Wl,-Bdynamic -lamd -lcolamd -lgmp -lz -l:libltdl.so.7
endif
# libyaml likewise (libyaml-dev ships libyaml.a; it needs nothing else): its
# objects are taken before pkg-config's -lyaml, which then adds nothing.
YAML_A    := $(shell $(CC) -print-file-name=libyaml.a 2>/dev/null)
ifneq ($(YAML_A),libyaml.a)
YAML_LIBS := -Wl,-Bstatic -lyaml -Wl,-Bdynamic
endif
LDLIBS    := -Wl,--as-needed $(YAML_LIBS) $(shell pkg-config --libs $(PKGS)) -lm $(GLPK_LIBS)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
RE2C      ?= re2c
# Installation directories (GNU conventions; DESTDIR stages a package).
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
# the modules (tcc-sim-plot.so, tcc-json.so): the commands find them in
# ../lib/tcc from BINDIR
PLOTDIR   ?= $(PREFIX)/lib/tcc
MANDIR    ?= $(PREFIX)/share/man
DOCDIR    ?= $(PREFIX)/share/doc/tcc
INSTALL   ?= install
# The clang build of clang-check (make check).
CLANG     ?= clang
CLANG_BUILD ?= build-clang
# The builds of determinism-check: compiler and optimisation level each.
GCC       ?= gcc
DET_BUILDS := build-det-gcc-O0 build-det-gcc-O2 build-det-clang-O2

SIM_SRC   := $(filter-out src/sim/tcc_sim.c,$(wildcard src/sim/*.c))
SIM_OBJ   := $(patsubst src/sim/%.c,$(BUILD)/sim/%.o,$(SIM_SRC)) $(BUILD)/sim/asm_lexer.o
TEST_SRC  := $(wildcard tests/unit/*.c)
TEST_OBJ  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.o,$(TEST_SRC))
HDRS      := $(wildcard src/spec/*.h src/sim/*.h) src/spec/ops.def
# The compiler: every .c of these directories goes into libtccgen.a (wildcards:
# new passes are picked up without editing this file).  Commands with a main()
# live in src/driver, outside the library.
GEN_DIRS  := frontend ir lower passes fit backend report tools
GEN_SRC   := $(foreach d,$(GEN_DIRS),$(wildcard src/$(d)/*.c))
GEN_OBJ   := $(patsubst src/%.c,$(BUILD)/gen/%.o,$(GEN_SRC))
GEN_HDRS  := $(foreach d,$(GEN_DIRS),$(wildcard src/$(d)/*.h src/$(d)/*.def))

PROGRAMS  := tcc-gen tcc-sim tcc-grade tcc-diff
MANPAGES  := $(PROGRAMS:%=man/%.1)
DOCFILES  := $(wildcard docs/*.md)
EXAMPLES  := plans/baseline.yaml plans/best.yaml plans/census-seeds.yaml

.PHONY: census-check sweep-check tune-check census-determinism-check shapes shapes-check
.PHONY: all check unit-check asm-check golden-check pass-check grade-check install-check clang-check corner-check \
        determinism-check diff-check plot-check html-check trace-check \
        update-golden bench bench-run demo demo-run demo-best-p1 install uninstall clean deps
all: $(BUILD)/tcc-sim $(BUILD)/tcc-gen $(BUILD)/tcc-grade $(BUILD)/tcc-diff

$(BUILD)/sim $(BUILD)/tests $(BUILD)/bench:
	mkdir -p $@

# The assembler's lexer: generated at build time; #line directives kept so
# compiler errors point back into the .re file.
$(BUILD)/asm_lexer.c: src/sim/asm_lexer.re | $(BUILD)/sim
	$(RE2C) -W -Werror --no-generation-date -o $@ $<

$(BUILD)/sim/asm_lexer.o: $(BUILD)/asm_lexer.c $(HDRS) | $(BUILD)/sim
	$(CC) $(SIM_CFLAGS) -c -o $@ $<

$(BUILD)/sim/%.o: src/sim/%.c $(HDRS) | $(BUILD)/sim
	$(CC) $(SIM_CFLAGS) -c -o $@ $<

$(BUILD)/libtccsim.a: $(SIM_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tcc-sim: src/sim/tcc_sim.c $(BUILD)/libtccsim.a $(HDRS) $(BUILD)/tcc-sim-plot.so
	$(CC) $(SIM_CFLAGS) -o $@ $< $(BUILD)/libtccsim.a $(LDLIBS)

# ---- the plot module (tcc-sim --plot) ----
# The drawing (src/sim/plot/plot_draw.c) is a shared module that plot.c
# loads on the first plot, from beside the executable (or PLOTDIR when
# installed): tcc-sim itself then links no cairo (--as-needed), and a run
# without --plot does not load cairo, fontconfig and their ~19 libraries
# (about 7 ms of CPU at every start on this VM; docs/testing.md).  It calls
# nothing of the simulator, so it links only its own libraries.
PLOT_LIBS := $(shell pkg-config --libs cairo fontconfig glib-2.0)
$(BUILD)/plot/plot_draw.o: src/sim/plot/plot_draw.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/tcc-sim-plot.so: $(BUILD)/plot/plot_draw.o
	$(CC) $(SIM_CFLAGS) -shared -o $@ $< -Wl,--as-needed $(PLOT_LIBS) -lm
# the unit tests plot through it too (test_plot.c)
$(BUILD)/unit-tests: $(BUILD)/tcc-sim-plot.so
# ---- end plot module ----

# ---- the JSON module (tcc-gen --explain --json, tcc-sim --json and --trace) ----
# The commands record their JSON (src/sim/jdoc.c) and the module
# (src/sim/json/jdoc_render.c) prints it with json-glib, loaded only then:
# tcc-gen and tcc-sim link no json-glib (--as-needed), and their start does
# not load json-glib, GObject, GIO and their ~7 libraries (4-6 ms of CPU at
# every start on this VM; docs/testing.md).  Like the plot module it calls
# nothing of the tools but the shortest spelling of numbers (json_num.c).
# The fuzz targets link its source in instead.
JSON_MOD_LIBS := $(shell pkg-config --libs json-glib-1.0 glib-2.0)
$(BUILD)/json/%.o: src/sim/json/%.c src/spec/jdoc.h src/spec/json_num.h
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -c -o $@ $<
# the module spells numbers shortest (json_num.h): it links that source in
$(BUILD)/json/json_num.o: src/sim/json_num.c src/spec/json_num.h
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/tcc-json.so: $(BUILD)/json/jdoc_render.o $(BUILD)/json/json_num.o
	$(CC) $(SIM_CFLAGS) -shared -o $@ $^ -Wl,--as-needed $(JSON_MOD_LIBS)
$(BUILD)/tcc-gen $(BUILD)/tcc-sim $(BUILD)/unit-tests: $(BUILD)/tcc-json.so
# ---- end JSON module ----

# Compiler objects under $(BUILD)/gen/<dir>/.  The power fitting (src/fit)
# measures the compiled program with the simulator: it alone of the
# compiler sees the simulator's public header (sim.h), and so the
# simulator's include path.
$(BUILD)/gen/fit/%.o: src/fit/%.c $(HDRS) $(GEN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/gen/%.o: src/%.c $(HDRS) $(GEN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(GEN_CFLAGS) -c -o $@ $<

$(BUILD)/libtccgen.a: $(GEN_OBJ)
	rm -f $@ && ar rcs $@ $^

# The compiler's and the grader's commands (src/driver).
$(BUILD)/tcc-gen $(BUILD)/tcc-grade: $(BUILD)/tcc-%: src/driver/tcc_%.c $(BUILD)/libtccgen.a \
    $(BUILD)/libtccsim.a $(HDRS) $(GEN_HDRS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(LDLIBS)

# ---- tcc-diff (issue 10 item 4): plan-to-plan comparison ----
# src/diff/ (line diff, knob diff, code diff, report) sees both the compiler's
# and the simulator's headers, so it is a library of its own, libtccdiff.a,
# linked by tcc-diff and the unit tests before libtccgen.a and libtccsim.a.
DIFF_SRC  := $(wildcard src/diff/*.c)
DIFF_OBJ  := $(patsubst src/diff/%.c,$(BUILD)/diff/%.o,$(DIFF_SRC))
DIFF_HDRS := $(wildcard src/diff/*.h)
ALL_CFLAGS += -Isrc/diff

$(BUILD)/diff/%.o: src/diff/%.c $(HDRS) $(GEN_HDRS) $(DIFF_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libtccdiff.a: $(DIFF_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tcc-diff: src/driver/tcc_diff.c $(BUILD)/libtccdiff.a $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a \
    $(HDRS) $(GEN_HDRS) $(DIFF_HDRS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libtccdiff.a $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(LDLIBS)

# tcc-diff's command-line tests (tests/run_diff.sh, plans in tests/diff/).
diff-check: $(BUILD)/tcc-diff $(BUILD)/tcc-gen $(BUILD)/tcc-sim
	sh tests/run_diff.sh $(BUILD)
# ---- end tcc-diff ----

$(BUILD)/tests/%.o: tests/unit/%.c $(HDRS) $(GEN_HDRS) $(DIFF_HDRS) tests/unit/tests.h | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -DTCC_TOP='"$(CURDIR)"' -c -o $@ $<

# libtccgen.a before libtccsim.a: the compiler uses the machine/workload tables.
$(BUILD)/unit-tests: $(TEST_OBJ) $(BUILD)/libtccdiff.a $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a
	$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libtccexplore.a $(BUILD)/libtccdiff.a $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a \
	  $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/bench/gen_bench: bench/gen_bench.c | $(BUILD)/bench
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/bench_json: bench/bench_json.c | $(BUILD)/bench
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

unit-check: $(BUILD)/unit-tests $(BUILD)/tcc-sim
	CK_FORK=no $(BUILD)/unit-tests

# Command-line tests: bad inputs (exact diagnostic + exit code) and programs;
# tcc-gen's and tcc-grade's options, diagnostics and exit codes.
asm-check: $(BUILD)/tcc-sim $(BUILD)/tcc-gen $(BUILD)/tcc-grade
	sh tests/run_cli.sh $(BUILD)/tcc-sim

# tcc-grade's report: its first lines and the alignment of its table, on
# real plans and, through BUILD/tests/grade-table (the table code alone),
# on extreme cell widths.  Not under ASan in make check: grading the
# baseline there takes ~25 s and the unit suite already runs it end to end.
grade-check: $(BUILD)/tcc-grade $(BUILD)/tcc-sim $(BUILD)/tests/grade-table
	sh tests/run_grade.sh $(BUILD)

$(BUILD)/tests/grade-table: src/driver/tcc_grade.c $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a \
    $(HDRS) $(GEN_HDRS) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -DTCC_GRADE_TABLE_TEST -o $@ $< $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(LDLIBS)

# tcc-sim --plot from the command line: files, bytes, diagnostics, and the
# SVG opened in headless Chromium (skipped when chromium is absent).
plot-check: $(BUILD)/tcc-sim $(BUILD)/tests/png-stats
	sh tests/run_plot.sh $(BUILD)

# tcc-grade --html and --log DIR --plan N from the command line: the page's
# sections, escaping and output-file rules, the records' plan text, and the
# page opened in headless Chromium (skipped when chromium is absent).
html-check: $(BUILD)/tcc-grade $(BUILD)/tcc-gen $(BUILD)/tcc-sim $(BUILD)/tests/png-stats
	sh tests/run_html.sh $(BUILD)

# tcc-sim --trace in a real viewer: a small program's trace read back by jq
# and opened in speedscope (the npm package's static web app, installed into
# NODE_DIR by tools/deps.sh) in headless Chromium; skipped, with a message,
# only when chromium or npm is absent.
NODE_DIR ?= $(BUILD)/node
trace-check: $(BUILD)/tcc-sim $(BUILD)/tests/png-stats
	NODE_DIR=$(NODE_DIR) sh tests/run_trace.sh $(BUILD)

$(BUILD)/tests/png-stats: tests/png_stats.c | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

# Golden tests of tcc-gen: tests/golden/NAME.yaml against NAME.asm, NAME.ir,
# NAME.after-PASS.ir, bad_NAME.err; each .asm also passes in tcc-sim.
golden-check: $(BUILD)/tcc-gen $(BUILD)/tcc-sim
	sh tests/run_golden.sh $(BUILD)

# Pass tests: tests/passes/NAME.ir, an IR with the passes to run and the
# lines to expect in its comments (docs/compiler.md, "Testing a pass"); the
# runner's own failures: tests/passes/bad/NAME.ir against NAME.err.
pass-check: $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(HDRS) $(GEN_HDRS) | $(BUILD)/tests
	$(CC) $(GEN_CFLAGS) -o $(BUILD)/tests/run-passes tests/run_passes.c $(BUILD)/libtccgen.a \
	  $(BUILD)/libtccsim.a $(LDLIBS)
	$(BUILD)/tests/run-passes tests/passes/*.ir --fail tests/passes/bad/*.ir

# The corners of every documented shape range compile (or are refused at the
# dim, over the program size limit); small shapes whose tiles pad to whole
# RF partitions compile and pass tcc-sim (docs/plan.md section 5).
corner-check: $(BUILD)/tcc-gen $(BUILD)/tcc-sim
	sh tests/run_corners.sh $(BUILD)

# Rewrite the expected golden files from the current tcc-gen (review with
# git diff before committing).
update-golden: $(BUILD)/tcc-gen $(BUILD)/tcc-sim
	UPDATE=1 sh tests/run_golden.sh $(BUILD)

check: deps
	$(MAKE) unit-check asm-check golden-check pass-check corner-check grade-check install-check
	$(MAKE) diff-check
	$(MAKE) census-check sweep-check tune-check shapes-check
	$(MAKE) plot-check html-check trace-check
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  unit-check asm-check golden-check corner-check
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  census-check sweep-check tune-check
	$(MAKE) clang-check
	$(MAKE) determinism-check
	$(MAKE) fuzz-check
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  fuzz-check

# The compiler, the unit tests (built, not run) and the CLI tests built with
# clang as well, so that a warning only clang raises (-Werror) fails CI; in
# $(CLANG_BUILD), beside the gcc build.
clang-check:
	$(MAKE) BUILD=$(CLANG_BUILD) CC=$(CLANG) all $(CLANG_BUILD)/unit-tests golden-check asm-check grade-check

# tcc-gen's asm and IR of every golden plan (and of plans/), and tcc-sim
# --json at seed 7, byte-identical from gcc -O0, gcc -O2 and clang -O2
# builds (tests/run_determinism.sh), each in its own build-det-* directory.
determinism-check:
	$(MAKE) BUILD=build-det-gcc-O0 CC=$(GCC) OPT=-O0 build-det-gcc-O0/tcc-gen build-det-gcc-O0/tcc-sim
	$(MAKE) BUILD=build-det-gcc-O2 CC=$(GCC) OPT=-O2 build-det-gcc-O2/tcc-gen build-det-gcc-O2/tcc-sim
	$(MAKE) BUILD=build-det-clang-O2 CC=$(CLANG) OPT=-O2 build-det-clang-O2/tcc-gen build-det-clang-O2/tcc-sim
	sh tests/run_determinism.sh $(DET_BUILDS)

# make install [PREFIX=/usr/local] [DESTDIR=]: the commands into BINDIR, their
# man pages into MANDIR/man1, the docs and the baseline plan (an example)
# into DOCDIR.  make uninstall removes exactly those files (and DOCDIR).
install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 755 $(PROGRAMS:%=$(BUILD)/%) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 $(DOCFILES) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -d $(DESTDIR)$(PLOTDIR)
	$(INSTALL) -m 644 $(BUILD)/tcc-sim-plot.so $(BUILD)/tcc-json.so $(DESTDIR)$(PLOTDIR)

uninstall:
	rm -f $(PROGRAMS:%=$(DESTDIR)$(BINDIR)/%) $(MANPAGES:man/%=$(DESTDIR)$(MANDIR)/man1/%) \
	  $(DOCFILES:docs/%=$(DESTDIR)$(DOCDIR)/%) $(EXAMPLES:plans/%=$(DESTDIR)$(DOCDIR)/examples/%)
	rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null || true
	rm -f $(DESTDIR)$(PLOTDIR)/tcc-sim-plot.so $(DESTDIR)$(PLOTDIR)/tcc-json.so
	rmdir $(DESTDIR)$(PLOTDIR) 2>/dev/null || true

# Install into a temporary DESTDIR (the default PREFIX, then PREFIX=/usr),
# check every file and run the installed commands, uninstall, check that
# nothing of ours is left.
install-check: all
	MAKE="$(MAKE)" sh tests/run_install.sh $(BUILD)

# Public targets install dependencies first, then re-enter make so that the
# pkg-config flags are computed after the install.
bench: deps
	$(MAKE) bench-run
bench-run: $(BUILD)/tcc-gen $(BUILD)/tcc-sim $(BUILD)/tcc-grade $(BUILD)/bench/gen_bench $(BUILD)/bench/bench_json
	sh bench/run.sh $(BUILD)

demo: deps-build
	$(MAKE) demo-run
# The main job: compile the baseline plan for both problems, simulate each
# (report + profile), then grade the plan on all four seeds with its score,
# and grade the best plan found so far (plans/best.yaml) next to it.
# The long reports go to files; the grades and where the files are, to the
# terminal.
demo-run: $(BUILD)/tcc-sim $(BUILD)/tcc-gen $(BUILD)/tcc-grade
	@mkdir -p $(BUILD)/demo
	$(BUILD)/tcc-gen plans/baseline.yaml --problem d1 -o $(BUILD)/demo/d1.asm
	$(BUILD)/tcc-gen plans/baseline.yaml --problem p1 -o $(BUILD)/demo/p1.asm
	$(BUILD)/tcc-sim $(BUILD)/demo/d1.asm --profile >$(BUILD)/demo/d1.report.txt
	$(BUILD)/tcc-sim $(BUILD)/demo/p1.asm --profile >$(BUILD)/demo/p1.report.txt
	@grep -E '^(cycles|power|verdict)' $(BUILD)/demo/d1.report.txt | sed 's/^/  d1: /'
	@grep -E '^(cycles|power|verdict)' $(BUILD)/demo/p1.report.txt | sed 's/^/  p1: /'
	$(BUILD)/tcc-grade plans/baseline.yaml
	$(BUILD)/tcc-grade plans/best.yaml
	@$(MAKE) --no-print-directory demo-best-p1
	@echo "demo: the baseline's programs $(BUILD)/demo/d1.asm, p1.asm; their reports with profiles d1.report.txt, p1.report.txt"
# The best plan's P1: its timeline (Perfetto) and its power plot, with
# where they are (docs/tools.md "Trace", "Power plot").
DEMO_P1 := $(BUILD)/demo/best-p1
demo-best-p1: $(BUILD)/tcc-sim $(BUILD)/tcc-gen
	@mkdir -p $(BUILD)/demo
	$(BUILD)/tcc-gen plans/best.yaml --problem p1 -o $(DEMO_P1).asm
	$(BUILD)/tcc-sim $(DEMO_P1).asm --trace=$(DEMO_P1).trace.json --plot=$(DEMO_P1).power.svg \
	  --plot=$(DEMO_P1).power.png >$(DEMO_P1).report.txt
	@echo "demo: plans/best.yaml's P1: timeline $(DEMO_P1).trace.json (open it in https://ui.perfetto.dev)"
	@echo "demo: power plot $(DEMO_P1).power.svg (and .png)"

# ---- research tools: tcc-census, tcc-sweep and tcc-tune (docs/tools.md) ----
# Their logic lives in src/explore/ (libtccexplore.a, reachable from the unit
# tests); it reads the compiler's tables (plans, the capacity report) and the
# simulator's bounds, so it is built with every include path.
EXPLORE_SRC := $(wildcard src/explore/*.c)
EXPLORE_OBJ := $(patsubst src/%.c,$(BUILD)/%.o,$(EXPLORE_SRC))
EXPLORE_HDRS := $(wildcard src/explore/*.h)
ALL_CFLAGS += -Isrc/explore
PROGRAMS  += tcc-census tcc-sweep tcc-tune tcc-shapes
MANPAGES  += man/tcc-census.1 man/tcc-sweep.1 man/tcc-tune.1 man/tcc-shapes.1
all: $(BUILD)/tcc-census $(BUILD)/tcc-sweep $(BUILD)/tcc-tune $(BUILD)/tcc-shapes
$(BUILD)/unit-tests: $(BUILD)/libtccexplore.a
$(TEST_OBJ): $(EXPLORE_HDRS)

$(BUILD)/explore/%.o: src/explore/%.c $(HDRS) $(GEN_HDRS) $(EXPLORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libtccexplore.a: $(EXPLORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tcc-census $(BUILD)/tcc-sweep $(BUILD)/tcc-tune $(BUILD)/tcc-shapes: $(BUILD)/tcc-%: src/driver/tcc_%.c $(BUILD)/libtccexplore.a \
    $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(HDRS) $(GEN_HDRS) $(EXPLORE_HDRS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libtccexplore.a $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(LDLIBS)

# The shape suite (bench/shapes.yaml; docs/testing.md): `make shapes` runs
# baseline.yaml and best.yaml on every shape and prints the table (a few
# minutes on 2 cores); shapes-check, in make check, runs the quick subset
# and fails if tcc-gen writes a program that fails numerics, area or power
# or refuses one of them (values and techniques fall back to fit the shape).
SHAPE_PLANS := plans/baseline.yaml plans/best.yaml
shapes: deps
	$(MAKE) $(BUILD)/tcc-shapes
	$(BUILD)/tcc-shapes bench/shapes.yaml $(SHAPE_PLANS)
shapes-check: $(BUILD)/tcc-shapes
	sh tests/run_shapes.sh $(BUILD)

# tcc-census on plans/census-seeds.yaml (its count of area-legal points), its
# formats and diagnostics (tests/run_census.sh).
bench-run: $(BUILD)/tcc-census $(BUILD)/tcc-tune

census-check: $(BUILD)/tcc-census
	sh tests/run_census.sh $(BUILD)

# tcc-sweep: a small sweep of tests/sweep/tiny.yaml through real GNU parallel
# and the local thread pool, the Slurm script's job selection, --collect and
# a re-run that skips finished jobs; its diagnostics (tests/run_sweep.sh).
sweep-check: $(BUILD)/tcc-sweep $(BUILD)/tcc-grade
	sh tests/run_sweep.sh $(BUILD)

# tcc-tune: short searches on tests/sweep/tiny.yaml (better cycles found,
# the same files with any --jobs, best.yaml graded), its diagnostics
# (tests/run_tune.sh).
tune-check: $(BUILD)/tcc-tune $(BUILD)/tcc-grade $(BUILD)/tcc-gen $(BUILD)/tcc-sweep
	sh tests/run_tune.sh $(BUILD)

# tcc-census's table byte-identical from the determinism builds (gcc -O0,
# gcc -O2, clang -O2): its area sums, square roots and rounding; part of
# determinism-check.
determinism-check: census-determinism-check
census-determinism-check:
	$(MAKE) BUILD=build-det-gcc-O0 CC=$(GCC) OPT=-O0 build-det-gcc-O0/tcc-census
	$(MAKE) BUILD=build-det-gcc-O2 CC=$(GCC) OPT=-O2 build-det-gcc-O2/tcc-census
	$(MAKE) BUILD=build-det-clang-O2 CC=$(CLANG) OPT=-O2 build-det-clang-O2/tcc-census
	for b in $(DET_BUILDS); do \
	  $$b/tcc-census plans/census-seeds.yaml --format json -o $$b/census-seeds.json >/dev/null || exit 1; \
	done
	for b in $(DET_BUILDS); do cmp $(firstword $(DET_BUILDS))/census-seeds.json $$b/census-seeds.json || exit 1; done
	@echo "census determinism: plans/census-seeds.yaml gives the same JSON from $(DET_BUILDS)"

# ---- fuzzing (docs/testing.md) ----
# make fuzz [FUZZ_SECONDS=60]: the libFuzzer targets of tests/fuzz (the plan
# loader, the assembler, assemble-and-simulate, the generator), built with clang
# -fsanitize=fuzzer,address,undefined in FUZZ_BUILD against the library
# objects built with the same sanitizers, each run for FUZZ_SECONDS on its
# seed corpus from tests/ (tests/fuzz/run.sh); fails when a target finds a
# crash, a timeout or a memory blowup.  Not part of make check (too long);
# make check runs fuzz-check: every reproducer of tests/fuzz/repro through
# the same entry points built without libFuzzer (gcc, then ASan+UBSan).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := plan asm sim gen knobs
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
.PHONY: fuzz fuzz-run fuzz-build fuzz-check fuzz-clean

fuzz: deps
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(CLANG) OPT=-O1 SAN="$(FUZZ_SAN)" fuzz-run
fuzz-run: fuzz-build
	sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz-%)

$(BUILD)/fuzz/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_section.h $(BUILD)/libtccgen.a \
    $(BUILD)/libtccsim.a $(HDRS) $(GEN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< src/sim/json/jdoc_render.c $(BUILD)/libtccgen.a \
	  $(BUILD)/libtccsim.a $(LDLIBS)

$(BUILD)/tests/replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h tests/fuzz/fuzz_section.h \
    $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(HDRS) $(GEN_HDRS) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -DFUZZ_REPLAY -o $@ tests/fuzz/replay.c $< src/sim/json/jdoc_render.c \
	  $(BUILD)/libtccgen.a $(BUILD)/libtccsim.a $(LDLIBS)

fuzz-check: $(FUZZ_TARGETS:%=$(BUILD)/tests/replay-%)
	sh tests/fuzz/run_replay.sh $(BUILD) $(FUZZ_TARGETS)

clean: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_BUILD)

# Install what a fresh Debian 12 machine lacks (as root; no-op when present).
deps:
	@NODE_DIR=$(NODE_DIR) sh tools/deps.sh
# what the commands alone need (make demo): no test tools
deps-build:
	@sh tools/deps.sh build

clean:
	rm -rf build build-asan $(CLANG_BUILD) $(DET_BUILDS)
