#!/usr/bin/env bash
# Every shipped filesystem configuration makes a file system with the real
# mkfs, called the way fstests' _scratch_mkfs calls it, on sparse files of
# the sizes the configuration asks for; then, where the host allows (root,
# loop devices, the filesystem in the running kernel), it is mounted through
# loop devices with the configuration's MOUNT_OPTIONS, written to and
# unmounted. The kernel config fragments are checked against the Linux 6.1
# tree when it is unpacked in the test cache.
. "$(dirname "$0")/../lib.sh"

PROFILES=$SRCDIR/profiles
LINUX_SRC=${FSWB_LINUX_SRC:-/var/tmp/fswb-test-cache/linux-source-6.1}

# ---- cleanup: every loop device and mount this test made, nothing else ----
MOUNTS=()
LOOPS=()
cleanup_devices() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		if mountpoint -q "${MOUNTS[i]}" 2>/dev/null; then
			umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null
		fi
	done
	for ((i = ${#LOOPS[@]} - 1; i >= 0; i--)); do
		losetup -d "${LOOPS[i]}" 2>/dev/null
	done
	MOUNTS=() LOOPS=()
}
at_exit cleanup_devices

# ---- reading a configuration ----
# KEY of CFG: from `fswb profiles --json show CFG` when fswb has that
# command, else straight from the .conf file.
have_fswb_json=no
if [ -x "$FSWB" ] && "$FSWB" profiles --json show ext4/4k 2>/dev/null | jq -e .name >/dev/null 2>&1; then
	have_fswb_json=yes
fi

conf_value() { # FILE KEY: the raw value, "" when absent
	sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$1" | sed 's/[[:space:]]*$//' | head -1
}

# Sets FSTYP MKFS_OPTIONS MOUNT_OPTIONS DEVICES BASE TEST_SIZE SCRATCH_SIZE
# POOL LOGDEV_SIZE RTDEV_SIZE KCONFIG for config $1 (DEVICES: none or "";
# BASE: the file system under an overlay, or ""). Sizes are whatever truncate -s accepts.
load_config() {
	local cfg=$1 file=$PROFILES/fs/$1.conf json
	if [ "$have_fswb_json" = yes ]; then
		json=$("$FSWB" profiles --json show "$cfg") || return 1
		FSTYP=$(jq -r .fstyp <<<"$json")
		MKFS_OPTIONS=$(jq -r .mkfs_options <<<"$json")
		MOUNT_OPTIONS=$(jq -r .mount_options <<<"$json")
		DEVICES=$(jq -r '.devices // ""' <<<"$json")
		BASE=$(jq -r '.base // ""' <<<"$json")
		TEST_SIZE=$(jq -r .test_size <<<"$json")
		SCRATCH_SIZE=$(jq -r .scratch_size <<<"$json")
		POOL=$(jq -r .pool_devices <<<"$json")
		LOGDEV_SIZE=$(jq -r .logdev_size <<<"$json")
		RTDEV_SIZE=$(jq -r .rtdev_size <<<"$json")
		KCONFIG=$(jq -r '.kconfig | join(" ")' <<<"$json")
	else
		FSTYP=$(conf_value "$file" fstyp)
		MKFS_OPTIONS=$(conf_value "$file" mkfs_options)
		MOUNT_OPTIONS=$(conf_value "$file" mount_options)
		DEVICES=$(conf_value "$file" devices)
		BASE=$(conf_value "$file" base)
		TEST_SIZE=$(conf_value "$file" test_size)
		SCRATCH_SIZE=$(conf_value "$file" scratch_size)
		POOL=$(conf_value "$file" pool_devices)
		LOGDEV_SIZE=$(conf_value "$file" logdev_size)
		RTDEV_SIZE=$(conf_value "$file" rtdev_size)
		KCONFIG=$(conf_value "$file" kconfig)
	fi
	: "${POOL:=0}" "${LOGDEV_SIZE:=0}" "${RTDEV_SIZE:=0}"
}

# ---- what the host can do ----
can_mount=yes
why_not=
if [ "$(id -u)" -ne 0 ]; then
	can_mount=no why_not="not root"
elif ! command -v losetup >/dev/null || ! losetup -f >/dev/null 2>&1; then
	can_mount=no why_not="no free loop device"
fi

kernel_config() {
	if [ -r /proc/config.gz ]; then
		zcat /proc/config.gz
	elif [ -r "/boot/config-$(uname -r)" ]; then
		cat "/boot/config-$(uname -r)"
	fi
}
KERNEL_CONFIG=$(kernel_config 2>/dev/null)

fs_in_kernel() {
	grep -qw "$1" /proc/filesystems && return 0
	modprobe -q "$1" 2>/dev/null && grep -qw "$1" /proc/filesystems
}

# The options of $KCONFIG the running kernel lacks, when its config is readable.
kernel_lacks() {
	local o missing=
	[ -n "$KERNEL_CONFIG" ] || return 0
	for o in $KCONFIG; do
		grep -qE "^CONFIG_$o=[ym]$" <<<"$KERNEL_CONFIG" || missing+=" CONFIG_$o"
	done
	echo "${missing# }"
}

# Attaches FILE to a free loop device: ATTACHED is its name.
attach() {
	ATTACHED=$(losetup -f --show "$1") || return 1
	LOOPS+=("$ATTACHED")
}

# The words of the -o arguments in MOUNT_OPTIONS: "-o a,b=c" gives a b=c.
mount_option_words() {
	local w next=no
	for w in "${mount_opts[@]}"; do
		if [ "$next" = yes ]; then
			tr ',' '\n' <<<"$w"
			next=no
		elif [ "$w" = -o ]; then
			next=yes
		elif [ "${w#-o}" != "$w" ]; then
			tr ',' '\n' <<<"${w#-o}"
		fi
	done
}

# The arguments as one line, for test names.
words() {
	local IFS=' '
	echo "$*"
}

# The block size MKFS_OPTIONS asks for (mkfs.ext4 -b N, mkfs.xfs -b size=N), or "".
wanted_block_size() {
	local w next=no
	for w in "${mkfs_opts[@]}"; do
		if [ "$next" = yes ]; then
			w=${w#size=}
			case $w in *[!0-9]*) ;; *) echo "$w" ;; esac
			return
		fi
		[ "$w" = -b ] && next=yes
	done
}

# ---- the run ----
configs=()
for f in "$PROFILES"/fs/*/*.conf; do
	c=${f#"$PROFILES"/fs/}
	configs+=("${c%.conf}")
done
check "shipped configurations found (${#configs[@]})" test "${#configs[@]}" -ge 15

make_image() { # PATH SIZE
	rm -f "$1" && truncate -s "$2" "$1"
}

# Runs the command, keeping its output for a failure report.
run_logged() {
	local log=$1
	shift
	"$@" >"$log" 2>&1
}

for cfg in "${configs[@]}"; do
	dir=$T/${cfg//\//-}
	mkdir -p "$dir"
	if ! load_config "$cfg"; then
		fail "read $cfg" "cannot read the configuration"
		continue
	fi
	if [ "$have_fswb_json" = yes ]; then
		# the loader and the raw file agree on what goes to mkfs and mount
		file=$PROFILES/fs/$cfg.conf
		check "fswb reads $cfg as written" test \
			"$MKFS_OPTIONS|$MOUNT_OPTIONS|$FSTYP" = \
			"$(conf_value "$file" mkfs_options)|$(conf_value "$file" mount_options)|$(conf_value "$file" fstyp)"
	fi
	read -ra mkfs_opts <<<"$MKFS_OPTIONS"
	read -ra mount_opts <<<"$MOUNT_OPTIONS"
	# an overlay's devices are made and mounted as its base (check -overlay
	# stacks the overlay on them)
	[ -n "$BASE" ] && FSTYP=$BASE

	# no devices (tmpfs): nothing to format; fstests mounts it by name, with
	# -o size=1G when MOUNT_OPTIONS is empty
	if [ "$DEVICES" = none ]; then
		check "$cfg formats nothing" test -z "$MKFS_OPTIONS" -a "${TEST_SIZE:-0}|${SCRATCH_SIZE:-0}" = "0|0"
		[ "${#mount_opts[@]}" -gt 0 ] || mount_opts=(-o size=1G)
		if [ "$can_mount" = no ]; then
			skip "mount $cfg" "$why_not"
			continue
		fi
		mnt=$dir/mnt
		mkdir -p "$mnt"
		MOUNTS+=("$mnt")
		if mount -t "$FSTYP" "${mount_opts[@]}" "${FSTYP}_test" "$mnt" 2>"$dir/mount.log" &&
			echo "fswb profiles $cfg" >"$mnt/probe" && [ "$(cat "$mnt/probe")" = "fswb profiles $cfg" ] &&
			umount "$mnt"; then
			pass "mount $cfg: $(words mount -t "$FSTYP" "${mount_opts[@]}" "${FSTYP}_test")"
		else
			fail "mount $cfg" "$(cat "$dir/mount.log")"
		fi
		cleanup_devices
		continue
	fi

	# the devices, as sparse files of the configured sizes
	scratch=$dir/scratch.img log= rt= pool=()
	make_image "$scratch" "$SCRATCH_SIZE"
	make_image "$dir/test.img" "$TEST_SIZE"
	if [ "$LOGDEV_SIZE" != 0 ]; then
		log=$dir/log.img
		make_image "$log" "$LOGDEV_SIZE"
	fi
	if [ "$RTDEV_SIZE" != 0 ]; then
		rt=$dir/rt.img
		make_image "$rt" "$RTDEV_SIZE"
	fi
	if [ "$POOL" != 0 ]; then
		pool=("$scratch")
		for ((i = 2; i <= POOL; i++)); do
			make_image "$dir/pool$i.img" "$SCRATCH_SIZE"
			pool+=("$dir/pool$i.img")
		done
	fi

	# mkfs as _scratch_mkfs runs it
	ext=()
	case $FSTYP in
	ext2 | ext3 | ext4) mkfs=("mkfs.$FSTYP" -F) ;;
	xfs)
		mkfs=(mkfs.xfs -f)
		[ -n "$rt" ] && ext+=("-rrtdev=$rt")
		[ -n "$log" ] && ext+=("-llogdev=$log")
		;;
	btrfs) mkfs=(mkfs.btrfs -f) ;;
	f2fs) mkfs=(mkfs.f2fs -f) ;;
	# no force flag: fstests runs these as mkfs -t FSTYP (udf: mkudffs)
	exfat | vfat | udf) mkfs=("mkfs.$FSTYP") ;;
	*)
		fail "mkfs $cfg" "no mkfs recipe for FSTYP '$FSTYP'"
		continue
		;;
	esac
	if ! command -v "${mkfs[0]}" >/dev/null; then
		skip "mkfs $cfg" "${mkfs[0]} is not installed"
		skip "mount $cfg" "${mkfs[0]} is not installed"
		continue
	fi
	if [ "${#pool[@]}" -gt 0 ]; then
		# the multi-device tests format the whole pool (_scratch_pool_mkfs)
		if run_logged "$dir/mkfs.log" "${mkfs[@]}" "${mkfs_opts[@]}" "${pool[@]}"; then
			pass "mkfs $cfg (pool of ${#pool[@]}): $(words "${mkfs[@]}" "${mkfs_opts[@]}")"
		else
			fail "mkfs $cfg (pool of ${#pool[@]})" "$(tail -5 "$dir/mkfs.log")"
			skip "mount $cfg" "mkfs failed"
			continue
		fi
	else
		if run_logged "$dir/mkfs.log" "${mkfs[@]}" "${ext[@]}" "${mkfs_opts[@]}" "$scratch"; then
			pass "mkfs $cfg: $(words "${mkfs[@]}" "${ext[@]}" "${mkfs_opts[@]}")"
		else
			fail "mkfs $cfg" "$(tail -5 "$dir/mkfs.log")"
			skip "mount $cfg" "mkfs failed"
			continue
		fi
	fi

	# mount through loop devices, as _scratch_mount would
	if [ "$can_mount" = no ]; then
		skip "mount $cfg" "$why_not"
		continue
	fi
	if ! fs_in_kernel "$FSTYP"; then
		skip "mount $cfg" "kernel has no $FSTYP"
		continue
	fi
	if [ "$cfg" = ext4/encrypt ] && [ ! -e /sys/fs/ext4/features/encryption ]; then
		skip "mount $cfg" "kernel's ext4 has no encryption (CONFIG_FS_ENCRYPTION)"
		continue
	fi
	devs=() extra=() ok=yes
	if [ "${#pool[@]}" -gt 0 ]; then
		for img in "${pool[@]}"; do
			attach "$img" && devs+=("$ATTACHED") || ok=no
		done
		# a btrfs pool is one file system over all its devices
		for d in "${devs[@]:1}"; do
			extra+=("-odevice=$d")
		done
	else
		attach "$scratch" && devs=("$ATTACHED") || ok=no
	fi
	if [ -n "$log" ]; then
		attach "$log" && extra+=("-ologdev=$ATTACHED") || ok=no
	fi
	if [ -n "$rt" ]; then
		attach "$rt" && extra+=("-ortdev=$ATTACHED") || ok=no
	fi
	if [ "$ok" = no ]; then
		fail "mount $cfg" "losetup failed"
		cleanup_devices
		continue
	fi
	mnt=$dir/mnt
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	if mount -t "$FSTYP" "${mount_opts[@]}" "${extra[@]}" "${devs[0]}" "$mnt" 2>"$dir/mount.log"; then
		why=
		# the options took effect (the kernel may spell them out: compress=zlib:3)
		mounted=$(awk -v m="$mnt" '$2 == m { print $4 }' /proc/self/mounts)
		while read -r o; do
			[ -n "$o" ] || continue
			# ext4 lists only what differs from its defaults, and these
			# are on by default in current kernels
			[[ $FSTYP == ext[234] && $o =~ ^(block_validity|dioread_nolock)$ ]] && continue
			grep -qE "(^|,)${o}([=:,]|$)" <<<"$mounted" || why+="option '$o' not in '$mounted'; "
		done < <(mount_option_words)
		bs=$(wanted_block_size)
		if [ -n "$bs" ] && [ "$(stat -f -c %S "$mnt")" != "$bs" ]; then
			why+="block size is $(stat -f -c %S "$mnt"), not $bs; "
		fi
		echo "fswb profiles $cfg" >"$mnt/probe" && sync && [ "$(cat "$mnt/probe")" = "fswb profiles $cfg" ] ||
			why+="cannot write a file; "
		umount "$mnt" || why+="umount failed; "
		if [ -z "$why" ]; then
			pass "mount $cfg: $(words mount -t "$FSTYP" "${mount_opts[@]}" "${extra[@]}")"
		else
			fail "mount $cfg" "$why"
		fi
	else
		lacks=$(kernel_lacks)
		if [ -n "$lacks" ]; then
			skip "mount $cfg" "kernel lacks $lacks"
		else
			fail "mount $cfg" "$(cat "$dir/mount.log"; dmesg 2>/dev/null | tail -3)"
		fi
	fi
	cleanup_devices
	mountpoint -q "$mnt" || rm -rf "$dir"
done

# ---- kernel config fragments against the Linux 6.1 tree ----
fragments=("$PROFILES"/kconfig/*.config)
if [ ! -d "$LINUX_SRC" ]; then
	for f in "${fragments[@]}"; do
		skip "kconfig $(basename "$f"): options exist in Linux 6.1" "no tree at $LINUX_SRC"
	done
	skip "kconfig fragments merge into x86_64 defconfig" "no tree at $LINUX_SRC"
else
	find "$LINUX_SRC" -name 'Kconfig*' -print0 | xargs -0 cat |
		sed -nE 's/^[[:space:]]*(menu)?config[[:space:]]+([A-Za-z0-9_]+)[[:space:]]*$/\2/p' |
		sort -u >"$T/symbols"
	for f in "${fragments[@]}"; do
		missing=$(sed -nE 's/^(# )?CONFIG_([A-Za-z0-9_]+)(=| is not set).*/\2/p' "$f" | sort -u |
			comm -23 - "$T/symbols")
		check "kconfig $(basename "$f"): options exist in Linux 6.1" test -z "$missing"
		[ -n "$missing" ] && echo "# missing: $missing"
	done
	missing=$(for c in "$PROFILES"/fs/*/*.conf; do conf_value "$c" kconfig; done | tr ' ' '\n' |
		sed '/^$/d' | sort -u | comm -23 - "$T/symbols")
	check "kconfig keys of the fs configurations exist in Linux 6.1" test -z "$missing"
	# kconfig itself keeps every option (dependencies met) on x86_64
	if command -v make >/dev/null && command -v gcc >/dev/null && command -v flex >/dev/null &&
		command -v bison >/dev/null; then
		out=$T/kbuild
		mkdir -p "$out"
		if (cd "$LINUX_SRC" && make -s O="$out" ARCH=x86_64 defconfig &&
			ARCH=x86_64 scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "${fragments[@]}" &&
			make -s O="$out" ARCH=x86_64 olddefconfig) >"$T/kbuild.log" 2>&1; then
			lost=
			for f in "${fragments[@]}"; do
				while read -r line; do
					grep -qxF "$line" "$out/.config" || lost+=" $line"
				done < <(grep -E '^CONFIG_|^# CONFIG_.* is not set$' "$f")
			done
			check "kconfig fragments merge into x86_64 defconfig with every option kept" test -z "$lost"
			[ -n "$lost" ] && echo "# not kept:$lost"
		else
			fail "kconfig fragments merge into x86_64 defconfig" "$(tail -5 "$T/kbuild.log")"
		fi
	else
		skip "kconfig fragments merge into x86_64 defconfig" "needs make, gcc, flex and bison"
	fi
fi

done_testing
