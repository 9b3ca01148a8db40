# The guest that plays the server (docs/host.md, tests/guest/test_host_guest.py):
# this machine's userland, shared read-only over virtio-9p (vm.Share; the
# kernel needs configs/virtfs.config), becomes the root of a chroot: a tmpfs
# /host with every top-level directory of the share bound into it (its
# symbolic links copied), the guest's own /proc, /sys and /dev, and tmpfs on
# /tmp and /run.  Nothing is mounted on the 9p tree itself (with
# cache=loose its dentries can drop such a mount).  debugfs and tracefs are
# left to whatever runs inside (host mode mounts what it needs and unmounts
# it again).  Sourced after helpers.sh (fail, section).

# hostroot_mount TAG: mount the share TAG at /share and build /host.
hostroot_mount() {
    mkdir -p /share /host
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose "$1" /share ||
        fail "cannot mount the 9p share $1 (a kernel without virtfs.config?)"
    mount -t tmpfs tmpfs /host || fail "cannot mount a tmpfs on /host"
    for _e in /share/* /share/.[!.]*; do
        _n=${_e#/share/}
        [ -e "$_e" ] || [ -L "$_e" ] || continue
        case $_n in
        proc|sys|dev|tmp|run) mkdir -p "/host/$_n" ;;
        *)  if [ -L "$_e" ]; then
                ln -s "$(readlink "$_e")" "/host/$_n"
            elif [ -d "$_e" ]; then
                mkdir -p "/host/$_n" && mount -o bind "$_e" "/host/$_n" ||
                    fail "cannot bind $_e"
            fi ;;
        esac
    done
    mount -t proc proc /host/proc || fail "cannot mount /host/proc"
    mount -t sysfs sysfs /host/sys || fail "cannot mount /host/sys"
    mount -t devtmpfs devtmpfs /host/dev || fail "cannot mount /host/dev"
    mount -t tmpfs tmpfs /host/tmp || fail "cannot mount /host/tmp"
    mount -t tmpfs tmpfs /host/run || fail "cannot mount /host/run"
    mkdir -p /host/run/lock
}

# hostroot_keep PATH: the share's PATH (a directory) seen at PATH in /host
# again, where the tmpfs on /tmp or /run hid it (a checkout under /tmp).
hostroot_keep() {
    mkdir -p "/host$1" && mount -o bind "/share$1" "/host$1" ||
        fail "cannot bind the share's $1 into /host"
}

# in_hostroot DIR CMD [ARG...]: run CMD in the chroot, in DIR, with a clean
# environment (Python writes no bytecode: the share is read-only).
in_hostroot() {
    _dir=$1
    shift
    chroot /host /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/tmp LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
        /bin/sh -c 'cd "$0" && exec "$@"' "$_dir" "$@"
}
