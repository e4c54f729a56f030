# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark scripts (sourced from the repository root): the release build, the
# working directory and the timing helper. Each script sets REPS before calling measure.

# Builds skforge in build/release; sets SKC, SKINSTALL and SKRUN.
bench_build() {
    sh scripts/bootstrap.sh >/dev/null
    cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKFORGE_TESTS=OFF >/dev/null
    cmake --build build/release >/dev/null
    SKC=$PWD/build/release/apps/skc/skc
    SKINSTALL=$PWD/build/release/apps/skinstall/skinstall
    SKRUN=$PWD/build/release/apps/skrun/skrun
}

# bench_workdir MiB INODES: makes the working directory $W, removed on exit, and sets $W_FS to the
# file system it is on, for the output header. By default $W is a new directory under
# ${TMPDIR:-/var/tmp} and MiB and INODES are unused. With BENCH_FS=ext4 (root only), $W is a fresh
# ext4 with a journal: a sparse image of MiB with at least INODES inodes under
# ${BENCH_TMP:-/var/tmp}, loop-mounted, unmounted and removed on exit, interrupt included. It is
# there for hosts whose own file system is ext4 without a journal, where creating a file scans
# the inodes deleted in the last minute (fs/ext4/ialloc.c, recently_deleted) and the benchmark's
# own removals make its installs slower run after run (benchmarks.md, issue 22).
bench_workdir() {
    case ${BENCH_FS:-} in
    '')
        W=$(mktemp -d "${TMPDIR:-/var/tmp}/skforge-bench-XXXXXX")
        trap 'rm -rf "$W"' EXIT
        ;;
    ext4) bench_ext4 "$1" "$2" ;;
    *)
        echo "BENCH_FS=$BENCH_FS: the only one known is ext4 (unset: the working directory's own file system)" >&2
        exit 2
        ;;
    esac
    W_FS=$(bench_fs_name "$W")
}

# bench_ext4 MiB INODES: bench_workdir's BENCH_FS=ext4; exits with 2 when it cannot mount.
bench_ext4() {
    if [ "$(id -u)" != 0 ]; then
        echo "BENCH_FS=ext4: loop-mounting the file system image needs root; run as root, or without BENCH_FS" >&2
        exit 2
    fi
    BENCH_FS_DIR=$(mktemp -d "${BENCH_TMP:-/var/tmp}/skforge-benchfs-XXXXXX")
    trap bench_ext4_cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    local img=$BENCH_FS_DIR/ext4.img dev
    mkdir "$BENCH_FS_DIR/mnt"
    truncate -s "${1}M" "$img"
    # Inode tables and journal written now, not by ext4lazyinit in the background while timed.
    if ! mkfs.ext4 -q -F -N "$2" -E lazy_itable_init=0,lazy_journal_init=0 "$img" \
        || ! dev=$(losetup --direct-io=on -f --show "$img") \
        || ! mount -t ext4 "$dev" "$BENCH_FS_DIR/mnt"; then
        echo "BENCH_FS=ext4: could not make and mount an ext4 image in $BENCH_FS_DIR (see above)" >&2
        exit 2
    fi
    W=$BENCH_FS_DIR/mnt
    BENCH_FS_NOTE="loop device with direct I/O, sparse image of $1 MiB, $(df --output=itotal "$W" | tail -1 | tr -d ' ') inodes, in $BENCH_FS_DIR"
}

# Unmounts and removes bench_ext4's image, keeping the script's exit status. Whatever it cannot
# undo it names, and it then leaves the image in place rather than delete under a mount.
bench_ext4_cleanup() {
    local rc=$? d=$BENCH_FS_DIR dev
    cd /
    if mountpoint -q "$d/mnt" && ! umount "$d/mnt"; then
        echo "BENCH_FS=ext4: could not unmount $d/mnt; umount it, then losetup -j $d/ext4.img and rm -r $d" >&2
        exit "$rc"
    fi
    for dev in $(losetup -n -O NAME -j "$d/ext4.img" 2>/dev/null); do
        losetup -d "$dev" || echo "BENCH_FS=ext4: could not detach $dev from $d/ext4.img" >&2
    done
    rm -f "$d/ext4.img"
    rmdir "$d/mnt" "$d" || echo "BENCH_FS=ext4: $d not removed" >&2
    exit "$rc"
}

# bench_fs_name DIR: the file system DIR is on, e.g. "/dev/vda ext4 without a journal".
bench_fs_name() {
    local src fstype journal
    read -r src fstype < <(findmnt -n -o SOURCE,FSTYPE -T "$1") || true
    # ext4's sysfs directory is named by the kernel's device name (dm-0 for /dev/mapper/x).
    if [ "$fstype" = ext4 ]; then
        journal=$(cat "/sys/fs/ext4/$(basename "$(readlink -f "$src")")/journal_task" 2>/dev/null) || true
        case $journal in
        '') ;;
        '<none>') fstype="ext4 without a journal" ;;
        *) fstype="ext4 with a journal" ;;
        esac
    fi
    echo "$src $fstype${BENCH_FS_NOTE:+ ($BENCH_FS_NOTE)}"
}

# measure PREP CMD...: the median wall seconds of REPS runs of CMD; PREP (shell text) and a sync
# run untimed before each.
measure() {
    local prep=$1
    shift
    for _ in $(seq 1 "$REPS"); do
        timed "$prep" "$@"
    done | median
}

# bench_payload DIR MiB: fills DIR/soc/op0..op63 with ELF objects from /usr/lib under new names
# until they add up to MiB; sets $files and $total (bytes).
bench_payload() {
    local sources f d n=0
    mapfile -d '' sources < <(find /usr/lib -type f -size +8k -size -4M -print0 2>/dev/null | sort -z)
    mkdir -p "$1"
    total=0
    while [ "$total" -lt $(($2 * 1024 * 1024)) ]; do
        f=${sources[$((n % ${#sources[@]}))]}
        d="$1/soc/op$((n % 64))"
        mkdir -p "$d"
        cp "$f" "$d/k${n}_$(basename "$f")"
        total=$((total + $(stat -c %s "$f")))
        n=$((n + 1))
    done
    chmod -R u=rwX,go=rX "$1"
    files=$n
}

# median: the median of the numbers on standard input, one a line.
median() {
    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# timed PREP CMD...: runs PREP (shell text; its output discarded) and a sync untimed, then prints
# CMD's wall seconds.
timed() {
    local prep=$1
    shift
    eval "$prep" >/dev/null 2>&1
    sync
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
