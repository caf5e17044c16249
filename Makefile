# llrnn - GNU make build: libllrnn (static, shared, llrnn.pc), the tools, tests.
#   make            libraries and tools (in bin/)
#   make check      C unit tests and the BATS suite; ends with "N passed, N failed"
#   make demo       the main job on a real corpus (pipelines/demo.mk)
#   make install    PREFIX, DESTDIR, BINDIR, LIBDIR, MANDIR, PROGPREFIX (default llrnn-)
#                   honoured; PYTHONDIR=DIR also installs the Python module there
#   make SANITIZE=address,undefined check
#   make check TESTS='tests/47-threads.bats'   only those BATS files
#   make fuzz FUZZ_SECONDS=N   libFuzzer harnesses (tests/fuzz), N s each

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PROGPREFIX ?= llrnn-

CC ?= cc
AR ?= ar
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
CXX ?= g++
CXXFLAGS ?= -O2 -g
PKGS := openblas libarchive libutf8proc libxml-2.0
# The version lives in one place, LLR_VERSION in lib/llrnn.h: the tools'
# --version prints it and llrnn.pc gets it from there.
VERSION := $(shell sed -n 's/^\#define LLR_VERSION "\(.*\)"$$/\1/p' lib/llrnn.h)
# The shared library's soname carries the major version: libllrnn.so.0.
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME := libllrnn.so.$(SOMAJOR)
SHLIB := build/libllrnn.so.$(VERSION)

# Hunspell morphology in featurize: on when the library is found.
HUNSPELL ?= $(shell $(PKG_CONFIG) --exists hunspell 2>/dev/null && echo 1)
ifeq ($(HUNSPELL),1)
PKGS += hunspell
override CPPFLAGS += -DLLR_HAVE_HUNSPELL=1
endif

# MPI for train --distributed: on when Open MPI's ompi-c is found.  Only
# train links it (tools/train/dist.c); without it --distributed says so.
MPI ?= $(shell $(PKG_CONFIG) --exists ompi-c 2>/dev/null && echo 1)
ifeq ($(MPI),1)
build/tools/train/dist.o: override CPPFLAGS += -DLLR_HAVE_MPI=1 $(shell $(PKG_CONFIG) --cflags ompi-c)
bin/train: override LDLIBS += $(shell $(PKG_CONFIG) --libs ompi-c)
endif

DEPS_OK := $(shell $(PKG_CONFIG) --exists $(PKGS) 2>/dev/null && echo 1)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

override CFLAGS += -std=c11 -Wall -Wextra -Wno-unused-parameter
override CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ilib $(PKG_CFLAGS) -MMD -MP
override LDLIBS += $(PKG_LIBS) -llbfgs -lm -lpthread

ifneq ($(SANITIZE),)
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override CXXFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override LDFLAGS += -fsanitize=$(SANITIZE)
endif

# lib/ is grouped by layer, lowest first (README, Layout); every .c under
# it is the library.  scripts/layers holds the order and checks this list.
LIB_LAYERS := core text tensor features ngram discourse fsa nn lexicon lm featurize family train
LIB_SRC := $(sort $(wildcard lib/*.c $(LIB_LAYERS:%=lib/%/*.c) $(LIB_LAYERS:%=lib/%/*/*.c)))
LIB_OBJ := $(LIB_SRC:lib/%.c=build/lib/%.o)
# The shared library's objects: the same sources again, position
# independent and hidden but for what lib/llrnn.h declares (its
# visibility pragma), so the static ones keep their code as it was.  The
# library's own calls bind inside it (-fno-semantic-interposition): no
# call of a public function from another goes through the PLT.
PIC_OBJ := $(LIB_SRC:lib/%.c=build/pic/%.o)
# tools/<tool>.c holds a tool's main; every other tools/*.c, and
# tools/<tool>/*.c for a tool that needs several files, is a CLI-only
# helper, archived in build/libcli.a (never part of libllrnn).
# bin/ keeps the tools' short names; make install names them
# $(PROGPREFIX)tool beside llrnn, the dispatcher (tools/llrnn.c: `llrnn
# score` runs llrnn-score).
TOOL_NAMES := tok vocab featurize train score gen disc-pairs
TOOL_SRC := $(sort $(wildcard $(TOOL_NAMES:%=tools/%.c)))
TOOLS := $(TOOL_SRC:tools/%.c=%)
MAIN_SRC := $(TOOL_SRC) tools/llrnn.c
CLI_SRC := $(filter-out $(MAIN_SRC),$(sort $(wildcard tools/*.c tools/*/*.c)))
CLI_OBJ := $(CLI_SRC:tools/%.c=build/tools/%.o)
BINS := $(TOOLS:%=bin/%) bin/llrnn
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNITS := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
# Programs that use the library only through lib/llrnn.h, as a user's
# would (tests/api/; the suite runs them).
API_SRC := $(sort $(wildcard tests/api/*.c))
APIS := $(API_SRC:tests/api/%.c=build/tests/api/%)
# C++ programs against the same header (extern "C"), built with $(CXX).
API_CXX_SRC := $(sort $(wildcard tests/api/*.cc))
API_CXXS := $(API_CXX_SRC:tests/api/%.cc=build/tests/api/%)
# The Python module (python/llrnn/, ctypes over the shared library).
PY_SRC := $(sort $(wildcard python/llrnn/*.py))
MAN := $(sort $(wildcard man/*.[1-9]))

all: deps-check build/libllrnn.a build/libllrnn.so build/llrnn.pc $(BINS) $(UNITS) $(APIS) $(API_CXXS)

deps-check:
ifneq ($(DEPS_OK),1)
	@echo "llrnn: missing libraries ($(PKGS)); run scripts/install-deps (as root) or 'make check'/'make demo', which run it" >&2; exit 1
endif

deps:
	@scripts/install-deps

build/libllrnn.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# libllrnn.so.VERSION, soname libllrnn.so.MAJOR, and the two links to it.
# It exports lib/llrnn.h's declarations and nothing else: the objects are
# hidden but for them (-fvisibility=hidden, the header's pragma), and the
# version script, every llr_ name of the header global and the rest
# local, also hides what the pragma cannot (GCC exports target_clones'
# ifuncs whatever their visibility).
build/llrnn.map: lib/llrnn.h
	@mkdir -p $(@D)
	{ printf '{\n\tglobal:\n'; grep -o 'llr_[A-Za-z0-9_]*' lib/llrnn.h | sort -u | sed 's/.*/\t\t&;/'; \
		printf '\tlocal:\n\t\t*;\n};\n'; } >$@

$(SHLIB): $(PIC_OBJ) build/llrnn.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=build/llrnn.map -Wl,--no-undefined \
		-o $@ $(PIC_OBJ) $(LDLIBS)

build/$(SONAME): $(SHLIB)
	ln -sf $(<F) $@

build/libllrnn.so: build/$(SONAME)
	ln -sf $(<F) $@

build/libcli.a: $(CLI_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# One llrnn.pc for both libraries: `pkg-config --libs llrnn` links the
# shared one, which brings its dependencies itself; `pkg-config --static
# --libs llrnn` adds them (Libs.private) for the archive, as the shared
# libraries they are here (their own Libs.private, for a fully static
# link, name archives Debian does not ship: libarchive's -lacl).  A
# SANITIZE build's library needs the sanitizer runtimes wherever it is
# linked.  make install writes its own copy, so two installs at once to
# two prefixes (the suite's) cannot swap theirs.
PC_TEXT = printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: llrnn\nDescription: Log-Linear RNN language models\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lllrnn%s\nLibs.private: %s -llbfgs -lm -lpthread\n' \
	'$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' '$(VERSION)' '$(if $(SANITIZE), -fsanitize=$(SANITIZE))' '$(PKG_LIBS)'

build/llrnn.pc: FORCE
	@mkdir -p $(@D)
	$(PC_TEXT) >$@

# The objects do not record their flags: build/flags does, and every
# object depends on it, so a change of SANITIZE (or CC, CFLAGS) rebuilds
# them all, never linking plain objects into a sanitizer build.
BUILD_FLAGS := $(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(LDLIBS)
build/flags: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(BUILD_FLAGS)' | cmp -s - $@ || printf '%s\n' '$(BUILD_FLAGS)' >$@

# The optimisers' update loops vectorise only when sqrtf need not set
# errno (lib/nn/optim.c; nothing there reads errno).
build/lib/nn/optim.o build/pic/nn/optim.o: override CFLAGS += -fno-math-errno

build/lib/%.o: lib/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/pic/%.o: lib/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -fno-semantic-interposition -c -o $@ $<

build/tools/%.o: tools/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/tests/%.o: tests/unit/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit -Ilib/nn $(CFLAGS) -c -o $@ $<

$(BINS): bin/%: build/tools/%.o build/libcli.a build/libllrnn.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< build/libcli.a build/libllrnn.a $(LDLIBS)

$(UNITS): build/tests/%: build/tests/%.o build/libllrnn.a
	$(CC) $(LDFLAGS) -o $@ $< build/libllrnn.a $(LDLIBS)

$(APIS): build/tests/api/%: tests/api/%.c build/libllrnn.a build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< build/libllrnn.a $(LDLIBS)

# The C++ programs link the shared library, found beside them at run time
# ($$ORIGIN/../..: build/).
$(API_CXXS): build/tests/api/%: tests/api/%.cc lib/llrnn.h build/libllrnn.so build/flags
	@mkdir -p $(@D)
	$(CXX) -Ilib $(CXXFLAGS) -Wall -Wextra -pedantic $(LDFLAGS) -o $@ $< -Lbuild -lllrnn -Wl,-rpath,'$$ORIGIN/../..'

check: deps
	@$(MAKE) --no-print-directory all
	@SANITIZE='$(SANITIZE)' TEST_JOBS='$(TEST_JOBS)' scripts/run-tests $(TESTS)

# Fuzzing (tests/fuzz/README.md): the library again, built with clang
# for libFuzzer with ASan and UBSan under build/fuzz/, one binary for
# each tests/fuzz/fuzz_*.c, each run FUZZ_SECONDS from seeds made of the
# fixtures (tests/fuzz/make-seeds, which uses the tools in bin/).
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: a checksum mismatch is not
# fatal there, so the fuzzer gets past the CRCs into the parsers.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZERS := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_LIB_OBJ := $(LIB_SRC:lib/%.c=build/fuzz/lib/%.o)

build/fuzz/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/libllrnn.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h build/fuzz/libllrnn.a
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -Wall -Wextra $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libllrnn.a $(LDLIBS)

fuzz: deps
	@$(MAKE) --no-print-directory all $(FUZZERS)
	@tests/fuzz/run $(FUZZ_SECONDS)

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -f pipelines/demo.mk

lint-man:
	mandoc -Tlint -W warning $(MAN)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	for t in $(TOOLS); do install -m 755 bin/$$t $(DESTDIR)$(BINDIR)/$(PROGPREFIX)$$t; done
	install -m 755 bin/llrnn $(DESTDIR)$(BINDIR)/llrnn
	install -m 644 build/libllrnn.a $(DESTDIR)$(LIBDIR)/libllrnn.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libllrnn.so
	install -m 644 lib/llrnn.h $(DESTDIR)$(INCLUDEDIR)/llrnn.h
	$(PC_TEXT) >$(DESTDIR)$(PKGCONFIGDIR)/llrnn.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/llrnn.pc
	for m in $(MAN); do s=$${m##*.}; b=$${m##*/}; \
		case $$s$$b in 1llrnn.1) ;; 1*) b=$(PROGPREFIX)$$b;; esac; \
		install -d $(DESTDIR)$(MANDIR)/man$$s; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/$$b; done
ifneq ($(PYTHONDIR),)
	install -d $(DESTDIR)$(PYTHONDIR)/llrnn
	install -m 644 $(PY_SRC) $(DESTDIR)$(PYTHONDIR)/llrnn/
endif

uninstall:
	for t in $(TOOLS); do rm -f $(DESTDIR)$(BINDIR)/$(PROGPREFIX)$$t; done
	rm -f $(DESTDIR)$(BINDIR)/llrnn
	rm -f $(DESTDIR)$(LIBDIR)/libllrnn.a $(DESTDIR)$(INCLUDEDIR)/llrnn.h $(DESTDIR)$(PKGCONFIGDIR)/llrnn.pc
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libllrnn.so
	for m in $(MAN); do s=$${m##*.}; b=$${m##*/}; \
		case $$s$$b in 1llrnn.1) ;; 1*) b=$(PROGPREFIX)$$b;; esac; rm -f $(DESTDIR)$(MANDIR)/man$$s/$$b; done
ifneq ($(PYTHONDIR),)
	rm -rf $(DESTDIR)$(PYTHONDIR)/llrnn
endif

clean:
	rm -rf build bin

.PHONY: all deps deps-check check fuzz demo lint-man install uninstall clean FORCE
FORCE:
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZERS:=.d)
-include $(PIC_OBJ:.o=.d) $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(MAIN_SRC:tools/%.c=build/tools/%.d) $(UNIT_SRC:tests/unit/%.c=build/tests/%.d) $(APIS:=.d)
