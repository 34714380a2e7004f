# fswb — the fstests workbench.
#
#   make            build ./fswb
#   make deps       install every package fswb needs to build, test and run
#   make check      lint, then unit, UI and end-to-end tests; ends with "N passed, N failed"
#   make asan       the same tests against an ASan+UBSan build
#   make bench      benchmarks (speed and memory targets); never part of check
#   make fuzz       libFuzzer on the parsers and readers (FUZZ_SECONDS each)
#   make lint       clang-format check and module-boundary check
#   make install    PREFIX=/usr/local DESTDIR=
#   make clean

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
PKG_CONFIG ?= pkg-config

PKGS      = ncursesw jansson libcurl libssh libvirt libcrypto md4c zlib libxml-2.0
TEST_PKGS = cmocka

# Recursive (=) on purpose: `make deps check` installs the libraries before
# these are first expanded.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
TEST_LIBS  = $(shell $(PKG_CONFIG) --libs $(TEST_PKGS) 2>/dev/null)

OPT      ?= -O2 -g
SAN      ?=
CFLAGS   ?=
LDFLAGS  ?=
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Wextra -Werror -Wno-unused-parameter \
	     -Wshadow -Wstrict-prototypes -Wmissing-prototypes -MMD -MP -Isrc $(PKG_CFLAGS) \
	     -DFSWB_VERSION='"$(VERSION)"' -DFSWB_SRCDIR='"$(CURDIR)"' \
	     -DFSWB_BUILDDIR='"$(abspath $(BUILD))"' \
	     -DFSWB_SHAREDIR='"$(PREFIX)/share/fswb"' $(CFLAGS)
ALL_LDFLAGS = $(SAN) $(LDFLAGS)

LIB_SRC := $(sort $(wildcard src/core/*.c src/agent/*.c src/fstests/*.c src/kbuild/*.c src/rootfs/*.c \
			     src/backends/*.c src/view/*.c src/run/*.c))
UI_SRC  := $(sort $(wildcard src/ui/*.c src/cmd/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
UI_OBJ  := $(UI_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
UNIT_HELPER_OBJ := $(BUILD)/tests/unit/testlib.o
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

FORMAT_FILES = $(shell git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null)

.PHONY: all deps check unit ui e2e asan bench fuzz lint format install clean libs-present

all: fswb

libs-present:
	@$(PKG_CONFIG) --exists $(PKGS) || { \
		echo "fswb: missing libraries: $$($(PKG_CONFIG) --print-errors --exists $(PKGS) 2>&1 | head -3)"; \
		echo "fswb: run 'make deps' (scripts/install-deps) to install them"; exit 1; }

fswb: $(BUILD)/fswb
	@ln -sf $(BUILD)/fswb fswb

$(BUILD)/fswb: $(MAIN_OBJ) $(UI_OBJ) $(BUILD)/libfswb.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(BUILD)/libfswb.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c | libs-present
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(UNIT_HELPER_OBJ) $(BUILD)/libfswb.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(PKG_LIBS) -lm

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(UI_OBJ) $(BUILD)/libfswb.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

deps:
	scripts/install-deps

lint:
	@scripts/lint $(FORMAT_FILES)

format:
	clang-format -i $(FORMAT_FILES)

check: lint $(BUILD)/fswb $(UNIT_BIN)
	@ln -sf $(BUILD)/fswb fswb
	@BUILD=$(BUILD) tests/run-tests

unit: $(BUILD)/fswb $(UNIT_BIN)
	@BUILD=$(BUILD) tests/run-tests unit

ui: $(BUILD)/fswb
	@BUILD=$(BUILD) tests/run-tests ui

e2e: $(BUILD)/fswb
	@BUILD=$(BUILD) tests/run-tests e2e

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" check

bench: $(BUILD)/fswb $(BENCH_BIN)
	@BUILD=$(BUILD) bench/run

FUZZ_SECONDS ?= 600
fuzz:
	@BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run $(FUZZ_SRC)

install: $(BUILD)/fswb
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/fswb \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/fswb $(DESTDIR)$(PREFIX)/bin/fswb
	cp -R profiles docs $(DESTDIR)$(PREFIX)/share/fswb/
	install -d $(DESTDIR)$(PREFIX)/share/fswb/agent
	install -m 0755 src/agent/fswb-agent src/agent/fswb-init $(DESTDIR)$(PREFIX)/share/fswb/agent/
	install -m 0755 src/rootfs/initramfs-init $(DESTDIR)$(PREFIX)/share/fswb/initramfs-init
	rm -f $(DESTDIR)$(PREFIX)/share/fswb/docs/fswb.1
	install -m 0644 docs/fswb.1 $(DESTDIR)$(PREFIX)/share/man/man1/fswb.1

clean:
	rm -rf build build-asan build-fuzz fswb

-include $(LIB_OBJ:.o=.d) $(UI_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_BIN:=.d) $(UNIT_HELPER_OBJ:.o=.d)
