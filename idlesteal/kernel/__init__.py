"""The kernel build stage: Debian source, the work tree and its series, kconfig,
pahole for BTF, cross builds, and the provenance recorded with every result."""
