#!/usr/bin/env bash
# fswb kernel list|config|build: installed kernels in a fake /boot, a fake
# kernel tree built for real (make, gcc), its failures, and the configuration
# step on Debian's linux-source tree.
. "$(dirname "$0")/../lib.sh"

# a missing command is a failure of this fswb, not a reason to skip
if ! "$FSWB" kernel --help >/dev/null 2>&1; then
	fail "fswb kernel --help" "this fswb has no working 'kernel' command"
	done_testing
	exit
fi

help=$("$FSWB" kernel --help)
check "kernel --help shows the three subcommands" \
	grep -qE '^usage: fswb kernel list' <<<"$help"
check "kernel --help shows build" grep -q 'fswb kernel build' <<<"$help"
err=$("$FSWB" kernel lsit 2>&1)
rc=$?
check "an unknown subcommand exits 2" test "$rc" -eq 2
check "an unknown subcommand suggests list" grep -q "did you mean 'list'" <<<"$err"

# ---- a fake /boot ----
gcc -o "$T/mkimage" "$SRCDIR/tests/fixtures/kbuild/fake-tree/tools/mkimage.c"
export FSWB_BOOT_DIR=$T/boot FSWB_MODULES_DIR=$T/modules
mkdir -p "$FSWB_BOOT_DIR" "$FSWB_MODULES_DIR/6.1.0-10-fake"
"$T/mkimage" "$FSWB_BOOT_DIR/vmlinuz-6.1.0-10-fake" "6.1.0-10-fake (t@fswb) #1 SMP"
"$T/mkimage" "$FSWB_BOOT_DIR/vmlinuz-6.1.0-9-fake" "6.1.0-9-fake (t@fswb) #1 SMP"
printf 'CONFIG_X86_64=y\nCONFIG_MODULES=y\nCONFIG_EXT4_FS=y\nCONFIG_EXT4_FS_POSIX_ACL=y\n' \
	>"$FSWB_BOOT_DIR/config-6.1.0-10-fake"
: >"$FSWB_MODULES_DIR/6.1.0-10-fake/modules.dep"
: >"$FSWB_BOOT_DIR/initrd.img-6.1.0-10-fake"

cd "$T" || exit 1
out=$("$FSWB" kernel list -c ext4/4k 2>&1)
rc=$?
check "kernel list exits 0" test "$rc" -eq 0
check "kernel list marks the newest installed kernel as the default" \
	grep -q '^\* installed 6.1.0-10-fake (x86_64)' <<<"$out"
check "kernel list shows its initrd" grep -q "initrd   $FSWB_BOOT_DIR/initrd.img-6.1.0-10-fake" <<<"$out"
check "kernel list names the missing option" \
	grep -q 'MISSING what ext4/4k needs: CONFIG_EXT4_FS_SECURITY$' <<<"$out"
check "kernel list says why the older one cannot be checked" \
	grep -q 'check    cannot tell: there is no config-6.1.0-9-fake beside it' <<<"$out"
json=$("$FSWB" kernel list --json -c ext4/4k)
check "kernel list --json: the first is the default" \
	test "$(jq -r '.kernels[0].default' <<<"$json")" = true
check "kernel list --json: its version" \
	test "$(jq -r '.kernels[0].version' <<<"$json")" = 6.1.0-10-fake
check "kernel list --json: its check fails on EXT4_FS_SECURITY" \
	test "$(jq -r '.kernels[0].check | "\(.ok) \(.missing | map(select(.need == "need")) | .[0].name)"' <<<"$json")" = "false EXT4_FS_SECURITY"

out=$("$FSWB" kernel config --kernel 6.1.0-10-fake -c ext4/4k 2>&1)
rc=$?
check "kernel config of an installed kernel missing a needed option exits 1" test "$rc" -eq 1
check "kernel config lists it as missing" \
	grep -qE '^  missing  CONFIG_EXT4_FS_SECURITY=y +kconfig/ext4.config:[0-9]+ \(needed by ext4/4k\)$' <<<"$out"
check "kernel config lists what is there as set" grep -qE '^  set +CONFIG_EXT4_FS=y ' <<<"$out"

# ---- bad input ----
err=$("$FSWB" kernel config --kernel "$T/nowhere/linux" 2>&1)
rc=$?
check "a kernel path that does not exist exits 2" test "$rc" -eq 2
check "... and says so" grep -q "'$T/nowhere/linux' does not exist" <<<"$err"
mkdir -p "$T/notatree"
err=$("$FSWB" kernel config --kernel "$T/notatree" 2>&1)
rc=$?
check "a directory that is not a kernel tree exits 2" test "$rc" -eq 2
check "... and says what is missing" grep -q "is not a kernel tree (no Makefile, no Kconfig, no arch/ directory)" <<<"$err"
head -c 128 /dev/zero >"$T/Image"
printf 'ARM\x64' | dd of="$T/Image" bs=1 seek=$((0x38)) conv=notrunc status=none
err=$("$FSWB" kernel config --kernel "$T/Image" 2>&1)
rc=$?
check "an arm64 image for x86_64 exits 2" test "$rc" -eq 2
check "... naming both architectures" grep -q "is a kernel for arm64, but the architecture asked for is x86_64" <<<"$err"
err=$("$FSWB" kernel build --kernel 6.1.0-10-fake 2>&1)
rc=$?
check "building an installed kernel exits 2" test "$rc" -eq 2

# ---- a fake tree, built ----
cp -a "$SRCDIR/tests/fixtures/kbuild/fake-tree" "$T/fake"
out=$("$FSWB" kernel build --kernel "$T/fake" -c ext4/4k -j2 2>"$T/build.err")
rc=$?
check "kernel build of the fake tree exits 0" test "$rc" -eq 0
check "it says what it built" grep -q '^built 9.9.0-fake for x86_64 in ' <<<"$out"
image=$(sed -n 's/^  image    \(.*\) (.*)$/\1/p' <<<"$out")
check "the image is there" test -f "$image"
check "the image is in the cache, not the tree" test "${image#"$FSWB_HOME"/cache/kernels/}" != "$image"
check "the tree has no .config" test ! -e "$T/fake/.config"
check "the modules are installed" grep -q "^  modules  .*/fswb-modules/lib/modules/9.9.0-fake$" <<<"$out"
check "it says how to use it" grep -q "^Use it with: fswb run --kernel $T/fake -c ext4/4k$" <<<"$out"
check "progress went to stderr" grep -q '^fswb kernel build: configuring$' "$T/build.err"

cd "$T/fake" || exit 1
out=$("$FSWB" kernel list 2>&1)
check "kernel list in a tree marks the tree as the default" grep -q "^\* tree $T/fake (9.9.0-fake, x86_64)" <<<"$out"
check "kernel list shows the build" grep -q "^  built tree $T/fake (9.9.0-fake, x86_64)" <<<"$out"
cd "$T" || exit 1

err=$(FAKE_KBUILD_FAIL=1 "$FSWB" kernel build --kernel "$T/fake" -j2 2>&1)
rc=$?
check "a failed build exits 2" test "$rc" -eq 2
check "... showing the compiler's error" grep -q "broken.c:5:16: error: 'undeclared_in_fake_tree' undeclared" <<<"$err"
check "... and the log's path" grep -qE 'the full log: .*/fswb-build.log$' <<<"$err"

mkdir -p "$T/emptybin"
err=$(PATH=$T/emptybin "$FSWB" kernel build --kernel "$T/fake" 2>&1)
rc=$?
check "missing build tools exit 2" test "$rc" -eq 2
check "... naming them and the packages" grep -q "missing 'make' (runs the build).*apt install make gcc flex bison" <<<"$err"

cp -a "$SRCDIR/tests/fixtures/kbuild/fake-tree" "$T/dirty"
printf 'CONFIG_X86_64=y\n' >"$T/dirty/.config"
err=$("$FSWB" kernel build --kernel "$T/dirty" 2>&1)
rc=$?
check "a tree configured in place exits 2" test "$rc" -eq 2
check "... with both ways out" grep -q "(--own-config), or clean it yourself with 'make -C $T/dirty mrproper'" <<<"$err"

# ---- the configuration step on a real tree ----
cache=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
tree=$cache/linux-source-6.1
tarball=/usr/src/linux-source-6.1.tar.xz
if [ ! -f "$tree/Kconfig" ] && [ -f "$tarball" ]; then
	mkdir -p "$cache/unpack.$$" && tar -xJf "$tarball" -C "$cache/unpack.$$" &&
		{ mv -T "$cache/unpack.$$/linux-source-6.1" "$tree" 2>/dev/null || true; }
	rm -rf "$cache/unpack.$$"
fi
if [ -f "$tree/Kconfig" ]; then
	out=$("$FSWB" kernel config --kernel "$tree" -c ext4/4k,xfs/4k 2>&1)
	rc=$?
	check "kernel config of linux-source-6.1 with the shipped fragments exits 0" test "$rc" -eq 0
	check "... and nothing was dropped" grep -qE '^Requested options for ext4/4k,xfs/4k: [0-9]+, [0-9]+ as asked, 0 dropped$' <<<"$out"
	check "... it names the base config" grep -q '^config: x86_64_defconfig + kvm_guest.config + fstests.config + ext4.config + xfs.config, then make olddefconfig$' <<<"$out"
	json=$("$FSWB" kernel config --kernel "$tree" -c ext4/4k --json 2>/dev/null)
	check "kernel config --json: nothing dropped" test "$(jq -r '.check.dropped' <<<"$json")" = 0
	check "kernel config --json: EXT4_FS is set" \
		test "$(jq -r '.check.options[] | select(.name == "EXT4_FS") | .verdict' <<<"$json")" = set
	check "the tree is still clean" test ! -e "$tree/.config"
else
	skip "kernel config of linux-source-6.1" "$tarball is not installed (apt install linux-source-6.1)"
fi

done_testing
