"""Guest tests: one prepare + kernel build + initramfs per session, reused.

IDLESTEAL_TEST_VARIANT picks the kernel variant (default steal: the series with its KUnit suite);
IDLESTEAL_TEST_NO_BUILD=1 uses the kernel already built as it is.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from idlesteal.kernel import build, tree
from idlesteal.guest import image


@dataclass
class Guest:
    kernel: Path
    initrd: Path
    variant: str


def no_build() -> bool:
    return bool(os.environ.get("IDLESTEAL_TEST_NO_BUILD"))


def kernel_for(variant: str) -> Path:
    """The variant's kernel image: as built (IDLESTEAL_TEST_NO_BUILD) or built now."""
    if no_build():
        return build.bzimage(variant)
    tree.prepare()
    return build.build(variant)


@pytest.fixture(scope="session")
def guest() -> Guest:
    variant = os.environ.get("IDLESTEAL_TEST_VARIANT", "steal")
    return Guest(kernel_for(variant), image.build_base(), variant)
