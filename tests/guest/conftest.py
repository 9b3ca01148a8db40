"""Guest tests: one prepare + kernel build + initramfs per session, reused.

IDLESTEAL_TEST_VARIANT picks the kernel variant (default steal: the series with its KUnit suite);
IDLESTEAL_TEST_NO_BUILD=1 uses the kernel already built as it is.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from idlesteal import build, image, tree


@dataclass
class Guest:
    kernel: Path
    initrd: Path
    variant: str


@pytest.fixture(scope="session")
def guest() -> Guest:
    variant = os.environ.get("IDLESTEAL_TEST_VARIANT", "steal")
    if os.environ.get("IDLESTEAL_TEST_NO_BUILD"):
        kernel = build.bzimage(variant)
    else:
        tree.prepare()
        kernel = build.build(variant)
    return Guest(kernel, image.build_base(), variant)
